package load

import (
	"context"
	"testing"
	"time"
)

// alarmKinds builds each alarm to test: the runtime timer's, and the
// kernel's where the machine has one (else it says so loudly).
var alarmKinds = map[string]func(t *testing.T, stop context.Context) alarm{
	"runtime timer": func(*testing.T, context.Context) alarm { return timerAlarm{newStoppedTimer()} },
	"timerfd": func(t *testing.T, stop context.Context) alarm {
		a := newKernelAlarm(stop, DefaultTimerSlack)
		if a == nil {
			t.Skip("SKIP: no kernel timer (timerfd) on this machine; knee falls back to the runtime timer")
		}
		return a
	},
}

// An alarm moved later, or cancelled and set again, rings for its last
// setting only; one set in the past rings at once.
func TestAlarmRingsForItsLastSetting(t *testing.T) {
	for name, build := range alarmKinds {
		t.Run(name, func(t *testing.T) {
			a := build(t, t.Context())
			defer a.close()
			a.set(time.Now().Add(2 * time.Millisecond))
			later := time.Now().Add(30 * time.Millisecond)
			a.set(later)
			if !a.wait(t.Context()) {
				t.Fatal("wait: false without a stop")
			}
			if now := time.Now(); now.Before(later) {
				t.Errorf("rang %v before its moved time", later.Sub(now))
			}

			a.set(time.Now().Add(2 * time.Millisecond))
			a.set(time.Time{}) // cancelled
			time.Sleep(10 * time.Millisecond)
			again := time.Now().Add(20 * time.Millisecond)
			a.set(again)
			a.wait(t.Context())
			if now := time.Now(); now.Before(again) {
				t.Errorf("a cancelled alarm rang: %v before the setting after it", again.Sub(now))
			}

			begin := time.Now()
			a.set(begin.Add(-time.Second))
			a.wait(t.Context())
			if took := time.Since(begin); took > time.Second {
				t.Errorf("an alarm set in the past took %v to ring", took)
			}
		})
	}
}

func TestAlarmStops(t *testing.T) {
	for name, build := range alarmKinds {
		t.Run(name, func(t *testing.T) {
			stop, cancel := context.WithCancel(t.Context())
			a := build(t, stop)
			defer a.close()
			a.set(time.Now().Add(time.Hour))
			done := make(chan bool)
			go func() { done <- a.wait(stop) }()
			time.Sleep(10 * time.Millisecond) // let it block
			cancel()
			select {
			case ok := <-done:
				if ok {
					t.Error("wait reported a ring after a stop")
				}
			case <-time.After(10 * time.Second):
				t.Fatal("a stop did not wake the scheduler's alarm")
			}
			if a.wait(stop) {
				t.Error("wait after a stop reported a ring")
			}
		})
	}
}
