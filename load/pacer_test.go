package load

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

// kernelPacer returns the kernel pacer or skips loudly where the machine has none.
func kernelPacer(t *testing.T, stop context.Context) pacer {
	t.Helper()
	p := newKernelPacer(stop, DefaultTimerSlack)
	if p == nil {
		t.Skip("SKIP: no kernel timer (timerfd) on this machine; knee falls back to the runtime timer")
	}
	t.Cleanup(p.close)
	return p
}

func TestKernelPacerNeverWakesEarly(t *testing.T) {
	p := kernelPacer(t, t.Context())
	for _, d := range []time.Duration{-time.Millisecond, 0, 20 * time.Microsecond, 300 * time.Microsecond,
		1500 * time.Microsecond, 10 * time.Millisecond} {
		for range 5 {
			at := time.Now().Add(d)
			if !p.wait(at, t.Context()) {
				t.Fatalf("wait %v: false without a stop", d)
			}
			if now := time.Now(); now.Before(at) {
				t.Errorf("wait %v: woke %v early", d, at.Sub(now))
			}
		}
	}
}

func TestKernelPacerStops(t *testing.T) {
	stop, cancel := context.WithCancel(t.Context())
	p := kernelPacer(t, stop)
	done := make(chan bool)
	go func() { done <- p.wait(time.Now().Add(time.Hour), stop) }()
	time.Sleep(10 * time.Millisecond) // let it block in the read
	cancel()
	select {
	case ok := <-done:
		if ok {
			t.Error("wait reported the hour reached after a stop")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a stop did not wake a VU sleeping on its timerfd")
	}
	if p.wait(time.Now().Add(-time.Second), stop) {
		t.Error("wait after a stop reported true for a past time")
	}
}

func TestPacerInSynctestBubbleIsTheRuntimeTimer(t *testing.T) {
	if fakeClock(time.Now()) {
		t.Fatalf("the real clock reads %v: before 2001", time.Now())
	}
	synctest.Test(t, func(t *testing.T) {
		p := newPacer(t.Context(), 0)
		defer p.close()
		if _, ok := p.(timerPacer); !ok {
			t.Fatalf("pacer %T in a synctest bubble; want the runtime timer, which the bubble's clock drives", p)
		}
	})
}

// On the real clock, with the precise pacer and its gap, no iteration
// starts before its intended time and every one is accounted for.
func TestOpenModelOnTheRealClockNeverStartsEarly(t *testing.T) {
	if testing.Short() {
		t.Skip("real-time run of 0.4 s")
	}
	for _, rate := range []float64{1000, 20000} {
		rec := &fakeRecorder{}
		it := iterFunc(func(context.Context, uint64, uint64) Result { return Result{Sent: time.Now()} })
		exec := ConstantArrivalRate{Rate: rate, Duration: 200 * ms, PreAllocatedVUs: 20, MaxVUs: 1000}
		if err := Generate(t.Context(), []Scenario{{Name: "s", Executor: exec, Iteration: it}}, rec, Options{}); err != nil {
			t.Fatal(err)
		}
		samples := rec.all()
		if want := int(rate / 5); len(samples)+int(rec.dropped["s"]) != want {
			t.Errorf("%v/s: %d samples + %d dropped, want %d", rate, len(samples), rec.dropped["s"], want)
		}
		for _, s := range samples {
			if s.SendLag < 0 {
				t.Fatalf("%v/s: an iteration started %v before its intended time", rate, -s.SendLag)
			}
		}
	}
}

func TestNegativeTimerSlackIsTheRuntimeTimer(t *testing.T) {
	p := newPacer(t.Context(), -1)
	defer p.close()
	if _, ok := p.(timerPacer); !ok || p.gap() != 0 {
		t.Fatalf("pacer %T with gap %v for TimerSlack -1; want the runtime timer", p, p.gap())
	}
	k := newPacer(t.Context(), 0)
	defer k.close()
	if g := k.gap(); g != DefaultTimerSlack && g != 0 { // 0: no kernel timer here
		t.Errorf("TimerSlack 0: gap %v, want DefaultTimerSlack", g)
	}
}
