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
	p := newKernelPacer(stop)
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
		p := newPacer(t.Context())
		defer p.close()
		if _, ok := p.(timerPacer); !ok {
			t.Fatalf("pacer %T in a synctest bubble; want the runtime timer, which the bubble's clock drives", p)
		}
	})
}

func TestVUPoolGrowsOnlyAsTheScheduleDemands(t *testing.T) {
	tests := []struct {
		name    string
		service time.Duration
		wantVUs int // VUs that ever ran (each takes one shard)
	}{
		// 10/s: an iteration every 100 ms. One VU is free again before the next start.
		{"service shorter than the interval: the one pre-allocated VU", 90 * ms, 1},
		// 250 ms each: iterations i, i+1, i+2 overlap, the 4th start finds the first VU free.
		{"service of 2.5 intervals: three VUs", 250 * ms, 3},
		// 101 ms: each start finds the VU before last busy and the last one free.
		{"service a little over one interval: two VUs", 101 * ms, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tg := &target{service: tt.service}
				exec := ConstantArrivalRate{Rate: 10, Duration: 2 * time.Second, PreAllocatedVUs: 1, MaxVUs: 10}
				o := runScenarios(t, t.Context(), Options{}, Scenario{Name: "s", Executor: exec, Iteration: tg})
				if o.err != nil {
					t.Fatal(o.err)
				}
				if o.rec.shards != tt.wantVUs {
					t.Errorf("%d VUs ran, want %d", o.rec.shards, tt.wantVUs)
				}
				if n := len(o.rec.all()); n != 20 || o.rec.dropped["s"] != 0 {
					t.Errorf("%d samples, %d dropped; want 20 and 0", n, o.rec.dropped["s"])
				}
				want := make([]time.Duration, 20)
				for i := range want {
					want[i] = time.Duration(i) * 100 * ms
				}
				if got := tg.callOffsets(o.t0); !equalDurations(got, want) {
					t.Errorf("calls at %v, want every 100 ms", got)
				}
			})
		})
	}
}
