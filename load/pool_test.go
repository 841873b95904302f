package load

import (
	"testing"
	"testing/synctest"
	"time"
)

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
			onEngines(t, func(t *testing.T, wrap func(Iteration) Iteration) {
				synctest.Test(t, func(t *testing.T) {
					tg := &target{service: tt.service}
					exec := ConstantArrivalRate{Rate: 10, Duration: 2 * time.Second, PreAllocatedVUs: 1, MaxVUs: 10}
					o := runScenarios(t, t.Context(), Options{}, Scenario{Name: "s", Executor: exec, Iteration: wrap(tg)})
					if o.err != nil {
						t.Fatal(o.err)
					}
					ran := o.rec.shards
					if li, ok := o.runr.scenarios[0].it.(*loopIteration); ok {
						ran = li.vusStarted()
					}
					if ran != tt.wantVUs {
						t.Errorf("%d VUs ran, want %d", ran, tt.wantVUs)
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
		})
	}
}

// A VU free before the next start makes it itself: the scheduler wakes
// only for starts that find every VU busy (and for the schedule's end).
func TestFreeVUsMakeTheStartsThemselves(t *testing.T) {
	tests := []struct {
		name      string
		service   time.Duration
		wantWakes int
	}{
		// 10/s for 2 s: the first start (the VU is idle, waiting for work)
		// and the end; the one VU makes the 19 starts after the first.
		{"service shorter than the interval", 10 * ms, 2},
		// 150 ms: the start at 100 ms finds the only VU busy, and the
		// scheduler starts a second one. From then on each start finds the
		// VU of the start before busy and the one before that free since
		// 50 ms, waiting for it as the pacer.
		{"service of 1.5 intervals", 150 * ms, 3},
		// Never answers: the scheduler starts or drops all 20 itself.
		{"every VU busy", time.Hour, 20 + 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tg := &target{service: tt.service}
				exec := ConstantArrivalRate{Rate: 10, Duration: 2 * time.Second, PreAllocatedVUs: 1, MaxVUs: 3}
				o := runScenarios(t, t.Context(), Options{GracefulStop: time.Second}, Scenario{Name: "s", Executor: exec, Iteration: tg})
				if o.err != nil {
					t.Fatal(o.err)
				}
				a := o.runr.scenarios[0].drv.(*arrivals)
				a.mu.Lock()
				wakes := a.wakes
				a.mu.Unlock()
				if wakes != tt.wantWakes {
					t.Errorf("the scheduler woke %d times, want %d", wakes, tt.wantWakes)
				}
				if n := len(o.rec.all()) + int(o.rec.dropped["s"]); n != 20 {
					t.Errorf("%d samples and drops, want 20", n)
				}
			})
		})
	}
}
