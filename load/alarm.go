package load

import (
	"context"
	"time"
)

// alarm wakes the open model's scheduler. Unlike a pacer, its time is set
// by whichever goroutine starts an iteration, while the scheduler may be
// asleep on it: moving or cancelling a kernel timer wakes no one, so the
// scheduler sleeps through every start that a VU makes itself.
type alarm interface {
	// set makes the alarm ring at at (at once if at is past); the zero
	// time cancels it. Callers serialise set (openGoroutines.mu).
	set(at time.Time)
	// wait blocks until the alarm rings after the last set, or stop; false
	// if stop came first. The scheduler alone waits.
	wait(stop context.Context) bool
	// gap is the least time between two rings the caller should ask for
	// (Options.TimerSlack); 0 when the alarm's own granularity is coarser.
	gap() time.Duration
	close()
}

// newAlarm is a kernel timer where there is one and the clock is real (see
// newPacer), else the runtime's timer.
func newAlarm(stop context.Context, slack time.Duration) alarm {
	if slack == 0 {
		slack = DefaultTimerSlack
	}
	if slack > 0 && !fakeClock(time.Now()) {
		if a := newKernelAlarm(stop, slack); a != nil {
			return a
		}
	}
	return timerAlarm{newStoppedTimer()}
}

// timerAlarm rings on a runtime timer. Reset and Stop discard a ring not
// yet received, so a moved alarm never rings for its old time.
type timerAlarm struct{ t *time.Timer }

func (a timerAlarm) set(at time.Time) {
	if at.IsZero() {
		a.t.Stop()
		return
	}
	a.t.Reset(time.Until(at))
}

func (a timerAlarm) wait(stop context.Context) bool {
	if stop.Err() != nil {
		return false
	}
	select {
	case <-a.t.C:
		return stop.Err() == nil
	case <-stop.Done():
		return false
	}
}

func (a timerAlarm) gap() time.Duration { return 0 }
func (a timerAlarm) close()             { a.t.Stop() }
