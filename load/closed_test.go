package load

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

func TestConstantVUs(t *testing.T) {
	onEngines(t, func(t *testing.T, wrap func(Iteration) Iteration) {
		synctest.Test(t, func(t *testing.T) {
			// 3 VUs, 100 ms service, 50 ms think, 1 s: starts at 0, 150, ..., 900 ms = 7 each.
			tg := &target{service: 100 * ms}
			exec := ConstantVUs{VUs: 3, Duration: time.Second, Think: 50 * ms}
			o := runScenarios(t, t.Context(), Options{}, Scenario{Name: "c", Executor: exec, Iteration: wrap(tg)})
			if o.err != nil {
				t.Fatal(o.err)
			}
			samples := o.rec.all()
			if len(samples) != 21 {
				t.Errorf("%d samples, want 21", len(samples))
			}
			for _, s := range samples {
				if s.Latency != 100*ms || s.Service != 100*ms || s.SendLag != 0 || s.Interval != 150*ms {
					t.Errorf("sample %+v: want latency = service = 100ms, interval 150ms", s)
				}
			}
			// The last iterations start at 900 ms and end at 1 s; the span ends then.
			if o.took != time.Second {
				t.Errorf("Run took %v, want 1s", o.took)
			}
			// One shard per VU goroutine; the loop records from its one goroutine.
			want := 3
			if _, loop := wrap(tg).(LoopIteration); loop {
				want = 1
			}
			if o.rec.shards != want {
				t.Errorf("%d shards taken, want %d", o.rec.shards, want)
			}
			if st := o.runr.Stats()[0]; st.Started != 21 || st.VUs != 0 || st.BusyVUs != 0 {
				t.Errorf("stats %+v, want 21 started and every VU gone", st)
			}
		})
	})
}

// Without think time a VU starts again the moment its iteration ends, on
// both engines: 2 VUs, 30 ms service, 100 ms: starts at 0, 30, 60, 90 ms =
// 4 each, each interval 30 ms (the first: service + think).
func TestConstantVUsWithoutThink(t *testing.T) {
	onEngines(t, func(t *testing.T, wrap func(Iteration) Iteration) {
		synctest.Test(t, func(t *testing.T) {
			tg := &target{service: 30 * ms}
			exec := ConstantVUs{VUs: 2, Duration: 100 * ms}
			o := runScenarios(t, t.Context(), Options{}, Scenario{Name: "c", Executor: exec, Iteration: wrap(tg)})
			if o.err != nil {
				t.Fatal(o.err)
			}
			samples := o.rec.all()
			if len(samples) != 8 {
				t.Errorf("%d samples, want 8", len(samples))
			}
			for _, s := range samples {
				if s.Latency != 30*ms || s.Interval != 30*ms {
					t.Errorf("sample %+v: want latency and interval 30ms", s)
				}
			}
			// The last starts at 90 ms and ends at 120 ms, within the grace period.
			if o.took != 120*ms {
				t.Errorf("Run took %v, want 120ms", o.took)
			}
		})
	})
}

// A closed scenario's in-flight iterations finish within the grace period
// after its span, then are cancelled, as the open model's.
func TestClosedGracefulStop(t *testing.T) {
	for _, tt := range []struct {
		name     string
		service  time.Duration
		grace    time.Duration
		took     time.Duration
		samples  int
		canceled int
	}{
		// 2 VUs, 400 ms service, 1 s span: starts at 0, 400, 800 ms; the last end at 1.2 s.
		{"in-flight iterations finish within the grace period", 400 * ms, time.Second, 1200 * ms, 6, 0},
		// 5 s service: both still running at 1 s + 1 s grace, cancelled at 2 s.
		{"then they are cancelled", 5 * time.Second, time.Second, 2 * time.Second, 2, 2},
		{"no grace", 5 * time.Second, -1, time.Second, 2, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			onEngines(t, func(t *testing.T, wrap func(Iteration) Iteration) {
				synctest.Test(t, func(t *testing.T) {
					tg := &target{service: tt.service}
					exec := ConstantVUs{VUs: 2, Duration: time.Second}
					o := runScenarios(t, t.Context(), Options{GracefulStop: tt.grace}, Scenario{Name: "s", Executor: exec, Iteration: wrap(tg)})
					if o.err != nil {
						t.Fatal(o.err)
					}
					if o.took != tt.took {
						t.Errorf("Run took %v, want %v", o.took, tt.took)
					}
					samples := o.rec.all()
					canceled := 0
					for _, s := range samples {
						if errors.Is(s.Err, context.Canceled) {
							canceled++
						}
					}
					if len(samples) != tt.samples || canceled != tt.canceled {
						t.Errorf("%d samples, %d cancelled; want %d and %d", len(samples), canceled, tt.samples, tt.canceled)
					}
				})
			})
		})
	}
}

func TestRampingVUsCounts(t *testing.T) {
	onEngines(t, func(t *testing.T, wrap func(Iteration) Iteration) {
		synctest.Test(t, func(t *testing.T) {
			// 0 -> 4 over 4 s, hold 2 s, 4 -> 0 over 4 s: one VU more each second, then one fewer.
			tg := &target{service: 10 * ms}
			exec := RampingVUs{Stages: []Stage{{Duration: 4 * time.Second, Target: 4}, {Duration: 2 * time.Second, Target: 4},
				{Duration: 4 * time.Second, Target: 0}}, Think: 90 * ms}
			r, err := NewGenerator([]Scenario{{Name: "r", Executor: exec, Iteration: wrap(tg)}}, &fakeRecorder{}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			// At 0.5 s, 1.5 s, ..., 9.5 s: up 1/s until 4 at 4 s, hold to 6 s, then 3 at 7 s, ..., 1 at 9 s.
			want := []int{0, 1, 2, 3, 4, 4, 4, 3, 2, 1}
			got := make([]int, len(want))
			done := make(chan error)
			go func() { done <- r.Run(t.Context()) }()
			time.Sleep(500 * ms)
			for n := range want {
				st := r.Stats()[0]
				got[n] = st.VUs
				if st.PeakVUs != 4 || st.Rate != 0 {
					t.Errorf("stats %+v: want peak 4, no offered rate", st)
				}
				time.Sleep(time.Second)
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			for n := range want {
				if got[n] != want[n] {
					t.Errorf("VUs at %d.5 s = %d, want %d (all: %v)", n, got[n], want[n], got)
					break
				}
			}
		})
	})
}
