package load

import (
	"context"
	"time"
)

// pacer puts the open model's scheduler to sleep until an absolute time.
// Its owner alone uses it; close releases it.
type pacer interface {
	// wait blocks until the monotonic clock reaches at; false if stop came
	// first. A stop is noticed even when at is already past.
	wait(at time.Time, stop context.Context) bool
	// gap is the least time between two wake-ups the caller should ask
	// for (Options.TimerSlack); 0 when the pacer's own granularity is coarser.
	gap() time.Duration
	close()
}

// newPacer is the most precise pacer the machine offers (a timerfd on
// Linux; see pacer_linux.go), or the runtime's timer where there is none,
// or the clock is a fake one: testing/synctest bubbles start their clock at
// 2000-01-01 UTC and advance it only through runtime timers, which a
// kernel timer knows nothing about.
//
// slack is Options.TimerSlack: negative asks for the runtime timer.
func newPacer(stop context.Context, slack time.Duration) pacer {
	if slack == 0 {
		slack = DefaultTimerSlack
	}
	if slack > 0 && !fakeClock(time.Now()) {
		if p := newKernelPacer(stop, slack); p != nil {
			return p
		}
	}
	return timerPacer{newStoppedTimer()}
}

// fakeClock reports a clock that reads before 2001: synctest's, or a
// machine without a real-time clock, where the runtime timer is the safe choice.
func fakeClock(now time.Time) bool { return now.Year() < 2001 }

// timerPacer sleeps on a runtime timer. The runtime's netpoller sleeps in
// whole milliseconds when the process is idle, so it wakes up to 1 ms late.
type timerPacer struct{ t *time.Timer }

func (p timerPacer) wait(at time.Time, stop context.Context) bool { return wait(p.t, at, stop) }
func (p timerPacer) gap() time.Duration                           { return 0 }
func (p timerPacer) close()                                       { p.t.Stop() }
