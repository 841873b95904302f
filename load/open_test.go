package load

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

const ms = time.Millisecond

// result of one synctest run.
type outcome struct {
	rec  *fakeRecorder
	t0   time.Time
	took time.Duration // from t0 to Run's return
	err  error
	runr *Generator
}

// runScenarios runs scs inside the current synctest bubble.
func runScenarios(t *testing.T, ctx context.Context, opt Options, scs ...Scenario) outcome {
	t.Helper()
	o := outcome{rec: &fakeRecorder{}}
	opt.OnStart = func(t0 time.Time) { o.t0 = t0 }
	r, err := NewGenerator(scs, o.rec, opt)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range r.scenarios {
		if _, loop := s.it.(*loopIteration); loop {
			if _, goroutines := s.drv.(*openGoroutines); goroutines {
				t.Fatalf("scenario %q offers a Loop but runs a goroutine per VU", s.name)
			}
		}
	}
	o.runr = r
	o.err = r.Run(ctx)
	o.took = time.Since(o.t0)
	return o
}

func TestArrivalRateIntendedStarts(t *testing.T) {
	tests := []struct {
		name  string
		exec  Executor
		start time.Duration
		want  []time.Duration // every call time since t0, in order
	}{
		{"4/s for 2 s: every 250 ms",
			ConstantArrivalRate{Rate: 4, Duration: 2 * time.Second, PreAllocatedVUs: 1, MaxVUs: 5}, 0,
			[]time.Duration{0, 250 * ms, 500 * ms, 750 * ms, 1000 * ms, 1250 * ms, 1500 * ms, 1750 * ms}},
		{"3/s for 1 s: thirds of a second, truncated to the ns",
			ConstantArrivalRate{Rate: 3, Duration: time.Second, PreAllocatedVUs: 1}, 0,
			[]time.Duration{0, 333_333_333, 666_666_666}},
		{"90 per minute for 2 s, starting at 5 s",
			ConstantArrivalRate{Rate: 90, TimeUnit: time.Minute, Duration: 2 * time.Second, PreAllocatedVUs: 2}, 5 * time.Second,
			[]time.Duration{5 * time.Second, 5*time.Second + 666_666_666, 5*time.Second + 1_333_333_333}},
		// 0 -> 2/s over 3 s: N(t) = t²/3 reaches 3 at the end; t_i = sqrt(3i): 0, sqrt(3), sqrt(6) s.
		{"ramp 0->2/s over 3 s: t_i = sqrt(3i)",
			RampingArrivalRate{Stages: []Stage{{Duration: 3 * time.Second, Target: 2}}, PreAllocatedVUs: 1, MaxVUs: 2}, 0,
			[]time.Duration{0, 1_732_050_807, 2_449_489_742}},
		// 2/s for 1 s: N = 2t (0, 500 ms). 2 -> 0 over 1 s: N = 2 + 2t - t² passes 2 at once (1 s)
		// and ends at 3. 0 -> 1 over 1 s: N = 3 + t²/2 passes 3 at once (2 s), ends at 3.5.
		// 1 -> 3 over 2 s: N = 3.5 + t + t²/2, so t_i = -1 + sqrt(2i - 6): sqrt(2), 2, sqrt(6), sqrt(8).
		{"ramp down to 0, up again: t_i where N(t) passes i",
			RampingArrivalRate{StartRate: 2, Stages: []Stage{{Duration: time.Second, Target: 2}, {Duration: time.Second, Target: 0},
				{Duration: time.Second, Target: 1}, {Duration: 2 * time.Second, Target: 3}}, PreAllocatedVUs: 1, MaxVUs: 3}, 0,
			[]time.Duration{0, 500 * ms, time.Second, 2 * time.Second,
				3*time.Second + 414_213_562, 4 * time.Second, 4*time.Second + 449_489_742, 4*time.Second + 828_427_124}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			onEngines(t, func(t *testing.T, wrap func(Iteration) Iteration) {
				synctest.Test(t, func(t *testing.T) {
					tg := &target{service: 10 * ms}
					o := runScenarios(t, t.Context(), Options{}, Scenario{Name: "s", StartTime: tt.start, Executor: tt.exec, Iteration: wrap(tg)})
					if o.err != nil {
						t.Fatal(o.err)
					}
					got := tg.callOffsets(o.t0)
					if tt.want != nil && !equalDurations(got, tt.want) {
						t.Errorf("calls at %v, want %v", got, tt.want)
					}
					for _, s := range o.rec.all() {
						if s.Latency != 10*ms || s.Service != 10*ms || s.SendLag != 0 || s.Interval != 0 {
							t.Errorf("sample %+v: want latency = service = 10ms, no send lag, no interval", s)
						}
					}
				})
			})
		})
	}
}

func equalDurations(a, b []time.Duration) bool {
	if len(a) != len(b) {
		return false
	}
	for n := range a {
		if a[n] != b[n] {
			return false
		}
	}
	return true
}
