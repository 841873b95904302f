package load

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

func TestDroppedWhenMaxVUsAreBusy(t *testing.T) {
	onEngines(t, func(t *testing.T, wrap func(Iteration) Iteration) {
		synctest.Test(t, func(t *testing.T) {
			// 10/s for 2 s = 20 iterations. The target never answers, so the 3 VUs are
			// taken by iterations 0, 1, 2 (0, 100, 200 ms) and the other 17 are dropped.
			tg := &target{service: time.Hour}
			exec := ConstantArrivalRate{Rate: 10, Duration: 2 * time.Second, PreAllocatedVUs: 1, MaxVUs: 3}
			o := runScenarios(t, t.Context(), Options{GracefulStop: time.Second}, Scenario{Name: "s", Executor: exec, Iteration: wrap(tg)})
			if o.err != nil {
				t.Fatal(o.err)
			}
			if got := o.rec.dropped["s"]; got != 17 {
				t.Errorf("dropped %d, want 17", got)
			}
			if got := tg.callOffsets(o.t0); !equalDurations(got, []time.Duration{0, 100 * ms, 200 * ms}) {
				t.Errorf("calls at %v, want 0, 100ms, 200ms", got)
			}
			st := o.runr.Stats()[0]
			if st.Started != 3 || st.Dropped != 17 || st.VUs != 0 || st.BusyVUs != 0 || st.PeakVUs != 3 {
				t.Errorf("stats %+v, want 3 started, 17 dropped, no VU left, peak 3", st)
			}
			// The span ends at 2 s; the grace period at 3 s cancels the three.
			if o.took != 3*time.Second {
				t.Errorf("Run took %v, want 3s (span + graceful stop)", o.took)
			}
			samples := o.rec.all()
			if len(samples) != 3 {
				t.Fatalf("%d samples, want 3", len(samples))
			}
			for _, s := range samples {
				if !errors.Is(s.Err, context.Canceled) {
					t.Errorf("sample err %v, want context.Canceled", s.Err)
				}
			}
		})
	})
}

// stallCount counts samples slower than normal.
func slowSamples(samples []Sample, normal time.Duration) (n int, sum time.Duration) {
	for _, s := range samples {
		if s.Latency > normal {
			n++
			sum += s.Latency
		}
	}
	return n, sum
}

func TestStallClosedVersusOpen(t *testing.T) {
	// The target answers in 1 ms but stalls for [5 s, 6 s). Both models offer
	// 100/s: 10 VUs with 9 ms think, or an arrival rate of 100/s.
	const normal = ms
	t.Run("closed: one slow iteration per VU", func(t *testing.T) {
		onEngines(t, func(t *testing.T, wrap func(Iteration) Iteration) {
			synctest.Test(t, func(t *testing.T) {
				tg := &target{service: normal}
				tg.stallFrom, tg.stallTo = time.Now().Add(5*time.Second), time.Now().Add(6*time.Second)
				exec := ConstantVUs{VUs: 10, Duration: 10 * time.Second, Think: 9 * ms}
				o := runScenarios(t, t.Context(), Options{}, Scenario{Name: "c", Executor: exec, Iteration: wrap(tg)})
				// Each VU starts at 0, 10 ms, ..., so exactly at 5 s: it waits 1 s. Total: 10.
				if n, _ := slowSamples(o.rec.all(), normal); n != 10 {
					t.Errorf("%d slow samples, want 10 (one per VU)", n)
				}
				var sawLong bool
				for _, s := range o.rec.all() {
					if s.Interval == time.Second+9*ms { // 1 s stall + think: the iteration after the stall
						sawLong = true
					}
				}
				if !sawLong {
					t.Error("no Interval of 1.009s: the stall is invisible to CO correction")
				}
			})
		})
	})
	t.Run("open: rate × stall slow iterations", func(t *testing.T) {
		onEngines(t, func(t *testing.T, wrap func(Iteration) Iteration) {
			synctest.Test(t, func(t *testing.T) {
				tg := &target{service: normal}
				tg.stallFrom, tg.stallTo = time.Now().Add(5*time.Second), time.Now().Add(6*time.Second)
				exec := ConstantArrivalRate{Rate: 100, Duration: 10 * time.Second, PreAllocatedVUs: 10, MaxVUs: 200}
				o := runScenarios(t, t.Context(), Options{}, Scenario{Name: "o", Executor: exec, Iteration: wrap(tg)})
				// Intended at 5.00, 5.01, ..., 5.99 s: 100 iterations, latencies 1 s, 990 ms, ..., 10 ms.
				n, sum := slowSamples(o.rec.all(), normal)
				if n != 100 || sum != 50500*ms {
					t.Errorf("%d slow samples summing %v, want 100 summing 50.5s (10ms·(1+...+100))", n, sum)
				}
			})
		})
	})
}

func TestLongStallDropsNothing(t *testing.T) {
	onEngines(t, func(t *testing.T, wrap func(Iteration) Iteration) {
		synctest.Test(t, func(t *testing.T) {
			// 500/s for 6 s, the target stalls [2 s, 5 s): 1,500 iterations pile up,
			// within MaxVUs 2000. Each is stamped from its intended start i·2 ms, and
			// the generator sends each 100 µs late, which shows as send lag.
			tg := &target{service: ms, sendDelay: 100 * time.Microsecond}
			tg.stallFrom, tg.stallTo = time.Now().Add(2*time.Second), time.Now().Add(5*time.Second)
			exec := ConstantArrivalRate{Rate: 500, Duration: 6 * time.Second, PreAllocatedVUs: 50, MaxVUs: 2000}
			o := runScenarios(t, t.Context(), Options{}, Scenario{Name: "o", Executor: exec, Iteration: wrap(tg)})
			if o.rec.dropped["o"] != 0 {
				t.Errorf("dropped %d, want 0", o.rec.dropped["o"])
			}
			samples := o.rec.all()
			if len(samples) != 3000 {
				t.Errorf("%d samples, want 3000", len(samples))
			}
			// Normal: latency 1.1 ms. Stalled: 5 s - i·2 ms for i in 1000..2499, i.e.
			// 3 s, 2.998 s, ..., 2 ms: sum = 2 ms · (1 + ... + 1500) = 2 ms · 1,125,750 = 2251.5 s.
			n, sum := slowSamples(samples, 1100*time.Microsecond)
			if n != 1500 || sum != 2251500*ms {
				t.Errorf("%d slow samples summing %v, want 1500 summing 2251.5s", n, sum)
			}
			for _, s := range samples {
				if s.SendLag != 100*time.Microsecond || s.Latency != s.SendLag+s.Service {
					t.Fatalf("sample %+v: want send lag 100µs and latency = send lag + service", s)
				}
			}
			if peak := o.runr.Stats()[0]; peak.Started != 3000 {
				t.Errorf("started %d, want 3000", peak.Started)
			}
		})
	})
}

func TestGracefulStop(t *testing.T) {
	tests := []struct {
		name     string
		service  time.Duration
		grace    time.Duration
		took     time.Duration
		canceled int
	}{
		// 2/s for 1 s: calls at 0 and 500 ms; with 800 ms service the last ends at 1.3 s.
		{"in-flight iterations finish within the grace period", 800 * ms, time.Second, 1300 * ms, 0},
		// With 5 s service both are still running at 1 s + 1 s grace: cancelled at 2 s.
		{"then they are cancelled", 5 * time.Second, time.Second, 2 * time.Second, 2},
		// Negative GracefulStop: cancelled at the end of the span.
		{"no grace", 5 * time.Second, -1, time.Second, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			onEngines(t, func(t *testing.T, wrap func(Iteration) Iteration) {
				synctest.Test(t, func(t *testing.T) {
					tg := &target{service: tt.service}
					exec := ConstantArrivalRate{Rate: 2, Duration: time.Second, PreAllocatedVUs: 2}
					o := runScenarios(t, t.Context(), Options{GracefulStop: tt.grace}, Scenario{Name: "s", Executor: exec, Iteration: wrap(tg)})
					if o.err != nil {
						t.Fatal(o.err)
					}
					if o.took != tt.took {
						t.Errorf("Run took %v, want %v", o.took, tt.took)
					}
					canceled := 0
					for _, s := range o.rec.all() {
						if errors.Is(s.Err, context.Canceled) {
							canceled++
						}
					}
					if canceled != tt.canceled {
						t.Errorf("%d cancelled iterations, want %d", canceled, tt.canceled)
					}
				})
			})
		})
	}
}

func TestInterrupt(t *testing.T) {
	tests := []struct {
		name    string
		abortAt time.Duration // 0: never
		took    time.Duration
	}{
		// Cancel at 550 ms: 6 started (0..500 ms), 1 s service, 200 ms grace: cancelled at 750 ms.
		{"cancel stops gracefully", 0, 750 * ms},
		// A second interrupt (Abort) at 600 ms cancels them at once.
		{"abort cancels at once", 600 * ms, 600 * ms},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			onEngines(t, func(t *testing.T, wrap func(Iteration) Iteration) {
				synctest.Test(t, func(t *testing.T) {
					ctx, cancel := context.WithCancel(t.Context())
					abort := make(chan struct{})
					time.AfterFunc(550*ms, cancel)
					if tt.abortAt > 0 {
						time.AfterFunc(tt.abortAt, func() { close(abort) })
					}
					tg := &target{service: time.Second}
					exec := ConstantArrivalRate{Rate: 10, Duration: 10 * time.Second, PreAllocatedVUs: 10}
					o := runScenarios(t, ctx, Options{GracefulStop: 200 * ms, Abort: abort}, Scenario{Name: "s", Executor: exec, Iteration: wrap(tg)})
					if !errors.Is(o.err, ErrInterrupted) {
						t.Errorf("err = %v, want ErrInterrupted", o.err)
					}
					if o.took != tt.took {
						t.Errorf("Run took %v, want %v", o.took, tt.took)
					}
					if st := o.runr.Stats()[0]; st.Started != 6 || st.VUs != 0 {
						t.Errorf("stats %+v, want 6 started and every VU gone", st)
					}
				})
			})
		})
	}
}

func TestScenarioNotYetStartedWhenStopped(t *testing.T) {
	onEngines(t, func(t *testing.T, wrap func(Iteration) Iteration) {
		synctest.Test(t, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			time.AfterFunc(time.Second, cancel)
			tg := &target{service: ms}
			late := Scenario{Name: "late", StartTime: 5 * time.Second, Iteration: wrap(tg),
				Executor: ConstantArrivalRate{Rate: 10, Duration: time.Second, PreAllocatedVUs: 3}}
			closed := Scenario{Name: "closed", StartTime: 5 * time.Second, Iteration: wrap(tg),
				Executor: ConstantVUs{VUs: 2, Duration: time.Second}}
			o := runScenarios(t, ctx, Options{}, late, closed)
			if !errors.Is(o.err, context.Canceled) || o.took != time.Second || len(tg.calls) != 0 {
				t.Errorf("err %v after %v with %d calls; want cancelled after 1s, no call", o.err, o.took, len(tg.calls))
			}
		})
	})
}

// stallingIteration offers Loops whose first Start blocks the generator for
// stall: a generator that falls far behind its schedule.
type stallingIteration struct {
	*loopIteration
	stall time.Duration
}

func (si stallingIteration) NewLoop() (Loop, error) {
	l, err := si.loopIteration.NewLoop()
	return &stallingLoop{Loop: l, stall: si.stall}, err
}

type stallingLoop struct {
	Loop
	stall   time.Duration
	stalled bool
}

func (l *stallingLoop) Start(vu, iter uint64) {
	if !l.stalled {
		l.stalled = true
		time.Sleep(l.stall)
	}
	l.Loop.Start(vu, iter)
}

// A generator stalled past its span and the grace period after it starts
// none of the overdue iterations (they count as dropped) and cancels what
// is in flight at the span's end plus gracefulStop, not gracefulStop after
// it caught up: 10/s for 1 s, grace 500 ms, the generator stuck for 2 s in
// its first start.
func TestStalledGeneratorStopsAtTheGraceDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		it := stallingIteration{&loopIteration{Iteration: &target{service: 10 * ms}}, 2 * time.Second}
		exec := ConstantArrivalRate{Rate: 10, Duration: time.Second, PreAllocatedVUs: 1, MaxVUs: 100}
		o := runScenarios(t, t.Context(), Options{GracefulStop: 500 * ms}, Scenario{Name: "s", Executor: exec, Iteration: it})
		if o.err != nil {
			t.Fatal(o.err)
		}
		st := o.runr.Stats()[0]
		if st.Started != 1 || st.Dropped != 9 || o.rec.dropped["s"] != 9 || st.Due != 10 {
			t.Errorf("stats %+v, recorder dropped %d; want 1 started, 9 dropped, 10 due", st, o.rec.dropped["s"])
		}
		// Iteration 0 starts at 2 s, past the grace deadline (1.5 s): it
		// is cancelled at once.
		if o.took != 2*time.Second {
			t.Errorf("Run took %v, want 2s (the stall; the grace deadline had passed)", o.took)
		}
		samples := o.rec.all()
		if len(samples) != 1 || !errors.Is(samples[0].Err, context.Canceled) {
			t.Errorf("samples %+v, want one, cancelled", samples)
		}
	})
}
