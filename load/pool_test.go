package load

import (
	"context"
	"fmt"
	"slices"
	"sync"
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
// The alarm is set once per start: for the next one when the scheduler
// has handed starts out, or, when a VU becomes the pacer, moved to the
// start after the pacer's, where the start the pacer then takes leaves it.
func TestFreeVUsMakeTheStartsThemselves(t *testing.T) {
	tests := []struct {
		name      string
		service   time.Duration
		wantWakes int
		wantSets  int
	}{
		// 10/s for 2 s: the first start (the VU is idle, waiting for work)
		// and the end; the one VU makes the 19 starts after the first.
		// Sets: t0 at the run's start, 100 ms after the first start, then
		// one as the VU becomes the pacer of each of starts 1 to 19 (for
		// the start after it; for the 19th, the schedule's end).
		{"service shorter than the interval", 10 * ms, 2, 2 + 19},
		// 150 ms: the start at 100 ms finds the only VU busy, and the
		// scheduler starts a second one. From then on each start finds the
		// VU of the start before busy and the one before that free since
		// 50 ms, waiting for it as the pacer. Sets: t0, 100 ms and 200 ms
		// by the scheduler, then one per pacer of starts 2 to 19.
		{"service of 1.5 intervals", 150 * ms, 3, 3 + 18},
		// Never answers: the scheduler starts or drops all 20 itself,
		// setting the alarm for the next each time (the last: the end).
		{"every VU busy", time.Hour, 20 + 1, 1 + 20},
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
				a := o.runr.scenarios[0].drv.(*openGoroutines)
				a.mu.Lock()
				wakes, sets := a.wakes, a.sets
				a.mu.Unlock()
				if wakes != tt.wantWakes {
					t.Errorf("the scheduler woke %d times, want %d", wakes, tt.wantWakes)
				}
				if sets != tt.wantSets {
					t.Errorf("the alarm was set %d times, want %d", sets, tt.wantSets)
				}
				if n := len(o.rec.all()) + int(o.rec.dropped["s"]); n != 20 {
					t.Errorf("%d samples and drops, want 20", n)
				}
			})
		})
	}
}

// vuLog is an Iteration that logs the VU and the time of every call.
type vuLog struct {
	Iteration
	mu  sync.Mutex
	log []vuStart
}

// vuStart is one call: the VU and when.
type vuStart struct {
	vu uint64
	at time.Time
}

func (l *vuLog) Do(ctx context.Context, vu, iter uint64) Result {
	l.mu.Lock()
	l.log = append(l.log, vuStart{vu, time.Now()})
	l.mu.Unlock()
	return l.Iteration.Do(ctx, vu, iter)
}

// On both engines, starts go to the VU idle most recently (on goroutines,
// the VU that finishes takes the next start itself), except that a VU idle
// for the retire limit (2 s here) takes the next start: every
// pre-allocated VU runs at least every ~2 s, and no VU is added for it.
func TestRotatesThePreAllocatedVUs(t *testing.T) {
	for _, engine := range []string{"loop", "goroutines"} {
		for _, retire := range []time.Duration{0, -1} { // the default limit; never retire (rotate at the default)
			t.Run(fmt.Sprint(engine, "/RetireIdle=", retire), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					// 100/s for 10 s, 1 ms each, 5 pre-allocated VUs (ids 1 to 5,
					// idle from 0 s, VU 5 on top). Hand-computed: VU 5 takes every
					// start to 2.00 s; at 2.01 s VU 1 has been idle over 2 s and
					// takes it, then VUs 2, 3, 4 (each idle since 0 s) the next
					// three; VU 4, on top from 2.041 s, then takes the starts to
					// 4.00 s; at 4.01 s VU 5 (idle since 2.001 s) is over 2 s, then
					// VUs 1, 2, 3 (since 2.011, 2.021, 2.031 s); and so on, every
					// 2 s. On goroutines, a VU that finishes and would make the
					// next start itself waits for it as the pacer and is idle only
					// from when it gives it up: in the second round VU 4 (the pacer
					// since 2.041 s) gives 4.01 s up to VU 5 and is idle from then,
					// so at 6.01 s it has been idle exactly 2 s and the third round
					// begins at 6.02 s; VU 3, which made the 6.01 s start, is idle
					// from 6.011 s, and the fourth round begins at 8.02 s.
					vl := &vuLog{Iteration: &target{service: ms}}
					var it Iteration = vl
					if engine == "loop" {
						it = &loopIteration{Iteration: vl}
					}
					exec := ConstantArrivalRate{Rate: 100, Duration: 10 * time.Second, PreAllocatedVUs: 5, MaxVUs: 10}
					o := runScenarios(t, t.Context(), Options{RetireIdle: retire}, Scenario{Name: "s", Executor: exec, Iteration: it})
					if o.err != nil {
						t.Fatal(o.err)
					}
					log := vl.log
					if len(log) != 1000 || o.rec.dropped["s"] != 0 {
						t.Fatalf("%d starts, %d dropped; want 1000 and 0", len(log), o.rec.dropped["s"])
					}
					// The VU of each start where it changes, with the start's offset.
					type change struct {
						at time.Duration
						vu uint64
					}
					var got []change
					vus := map[uint64]bool{}
					for i, st := range log {
						vus[st.vu] = true
						if i == 0 || st.vu != log[i-1].vu {
							got = append(got, change{st.at.Sub(o.t0), st.vu})
						}
					}
					rounds := []time.Duration{2010 * ms, 4010 * ms, 6010 * ms, 8010 * ms}
					if engine == "goroutines" {
						rounds = []time.Duration{2010 * ms, 4010 * ms, 6020 * ms, 8020 * ms}
					}
					want := []change{{0, 5}}
					for round, order := range [][]uint64{{1, 2, 3, 4}, {5, 1, 2, 3}, {4, 5, 1, 2}, {3, 4, 5, 1}} {
						at := rounds[round]
						for _, vu := range order {
							want = append(want, change{at, vu})
							at += 10 * ms
						}
					}
					if !slices.Equal(got, want) {
						t.Errorf("starts by VU (where it changes):\n got %v\nwant %v", got, want)
					}
					if len(vus) != 5 {
						t.Errorf("%d VUs ran, want the 5 pre-allocated", len(vus))
					}
				})
			})
		}
	}
}
