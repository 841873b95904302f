package load

import (
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// fakeTimer records what the alarm asks of its kernel timer.
type fakeTimer struct {
	sets   []time.Duration
	fail   bool
	closed bool
}

func (f *fakeTimer) set(d time.Duration) error {
	if f.fail {
		return errors.New("refused")
	}
	f.sets = append(f.sets, d)
	return nil
}
func (f *fakeTimer) close() { f.closed = true }

func TestAlarmArmsOnlyForward(t *testing.T) {
	k := &fakeTimer{}
	a := &alarm{armed: -1, k: k}
	now := time.Now()
	a.arm(0, now.Add(time.Hour))
	a.arm(3, now.Add(2*time.Hour))
	a.arm(2, now.Add(time.Hour))    // behind: ignored
	a.arm(3, now.Add(time.Hour))    // the same: ignored
	a.arm(4, now.Add(-time.Second)) // past due: nothing to set, but armed
	a.arm(4, now.Add(time.Hour))    // now behind
	if len(k.sets) != 2 || k.sets[0] <= 59*time.Minute || k.sets[1] <= 119*time.Minute {
		t.Errorf("kernel timer set %v; want about 1h then 2h only", k.sets)
	}
	if a.armed != 4 {
		t.Errorf("armed for %d, want 4", a.armed)
	}
	a.close()
	if !k.closed {
		t.Error("close did not close the kernel timer")
	}
	var none *alarm
	none.arm(1, now) // a nil alarm is no alarm
	none.close()
}

func TestAlarmGivesUpOnAFailingKernelTimer(t *testing.T) {
	k := &fakeTimer{fail: true}
	a := &alarm{armed: -1, k: k}
	a.arm(0, time.Now().Add(time.Hour))
	k.fail = false
	a.arm(1, time.Now().Add(time.Hour))
	if !k.closed || len(k.sets) != 0 {
		t.Errorf("after a failure: closed %v, sets %v; want closed and never set again", k.closed, k.sets)
	}
}

func TestAlarmIsOffInASynctestBubble(t *testing.T) {
	if fakeClock(time.Now()) {
		t.Fatalf("the real clock reads %v: before 2001", time.Now())
	}
	synctest.Test(t, func(t *testing.T) {
		if a := newAlarm(); a != nil {
			a.close()
			t.Fatal("an alarm in a synctest bubble: its kernel timer would ring on the real clock")
		}
	})
}
