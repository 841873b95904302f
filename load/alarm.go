package load

import (
	"sync"
	"time"
)

// alarm keeps the runtime's timers punctual while the process is idle.
//
// VUs sleep on runtime timers, which fire together when due at once (one
// wake-up for several iterations) but, when the process is idle, only when
// the netpoller's epoll wait returns, and it waits in whole milliseconds:
// a VU would go out up to 1 ms late. An alarm is one kernel timer per
// scenario, registered with the netpoller and never read: when it expires,
// the netpoller wakes at that nanosecond and the runtime runs every timer
// due by then. Nothing waits on the alarm itself, so it adds no wake-up.
//
// It is armed as a chain: whoever deals with iteration i at its start (the
// VU that runs it, or the scheduler that starts a VU for it or drops it)
// arms it for i+1, so it always rings for the next start in the schedule.
// arm ignores a request for an iteration not after the last armed, so two
// VUs waking together cannot set it back.
type alarm struct {
	mu    sync.Mutex
	armed int64 // the iteration armed for last
	k     kernelTimer
}

// kernelTimer is a one-shot kernel timer the netpoller watches.
type kernelTimer interface {
	set(d time.Duration) error
	close()
}

// newAlarm is nil when there is no kernel timer to use (see
// newKernelTimer) or the clock is a fake one: testing/synctest bubbles
// start their clock at 2000-01-01 UTC and advance it only through runtime
// timers, which a kernel timer knows nothing about.
func newAlarm() *alarm {
	if fakeClock(time.Now()) {
		return nil
	}
	k := newKernelTimer()
	if k == nil {
		return nil
	}
	return &alarm{armed: -1, k: k}
}

// fakeClock reports a clock that reads before 2001: synctest's, or a
// machine without a real-time clock, where the runtime timer alone is the
// safe choice.
func fakeClock(now time.Time) bool { return now.Year() < 2001 }

// arm sets the alarm for iteration i, due at at, unless it is already
// armed for i or a later one. A nil alarm does nothing.
func (a *alarm) arm(i int64, at time.Time) {
	if a == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if i <= a.armed {
		return
	}
	a.armed = i
	if d := time.Until(at); d > 0 {
		if a.k.set(d) != nil {
			a.k.close() // a failing kernel timer: stop trying

			a.k = nopTimer{}
		}
	}
}

func (a *alarm) close() {
	if a != nil {
		a.mu.Lock()
		a.k.close()
		a.mu.Unlock()
	}
}

type nopTimer struct{}

func (nopTimer) set(time.Duration) error { return nil }
func (nopTimer) close()                  {}
