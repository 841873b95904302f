package load

import (
	"context"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// releasing is a fake Iteration with per-VU resources: it answers after
// service, except that a call made during one of its stalls waits until the
// stall's end. It logs every call and every ReleaseVU, and notes a release
// that came while the same VU was in Do.
type releasing struct {
	service time.Duration
	stalls  [][2]time.Time // [from, to)

	mu       sync.Mutex
	calls    []time.Time
	pairs    map[[2]uint64]int // (vu, iter) -> calls
	inDo     map[uint64]bool
	released []uint64
	overlaps int // ReleaseVU during a Do of the same VU
}

func (r *releasing) Do(ctx context.Context, vu, iter uint64) Result {
	sent := time.Now()
	r.mu.Lock()
	r.calls = append(r.calls, sent)
	r.pairs[[2]uint64{vu, iter}]++
	r.inDo[vu] = true
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		r.inDo[vu] = false
		r.mu.Unlock()
	}()
	wait := r.service
	for _, st := range r.stalls {
		if !sent.Before(st[0]) && sent.Before(st[1]) {
			wait = st[1].Sub(sent)
		}
	}
	if !sleep(ctx, wait) {
		return Result{Err: ctx.Err(), Sent: sent, Done: time.Now()}
	}
	return Result{Status: 200, Sent: sent, Done: time.Now()}
}

func (r *releasing) ReleaseVU(vu uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.inDo[vu] {
		r.overlaps++
	}
	r.released = append(r.released, vu)
}

func (r *releasing) releases() []uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.released)
}

func newReleasing(service time.Duration, stalls ...[2]time.Duration) *releasing {
	r := &releasing{service: service, pairs: map[[2]uint64]int{}, inDo: map[uint64]bool{}}
	now := time.Now()
	for _, st := range stalls {
		r.stalls = append(r.stalls, [2]time.Time{now.Add(st[0]), now.Add(st[1])})
	}
	return r
}

// vusAt is the live VU count at each of the given times since t0, taken
// while the run goes on (inside the current synctest bubble).
func vusAt(t *testing.T, r *Generator, at ...time.Duration) []int {
	t.Helper()
	var got []int
	start := time.Now()
	for _, d := range at {
		time.Sleep(d - time.Since(start))
		synctest.Wait()
		got = append(got, r.Stats()[0].VUs)
	}
	return got
}

func TestIdleVUsRetireAfterAStall(t *testing.T) {
	// 100/s (a start every 10 ms) for 9 s, 1 ms service, 5 pre-allocated VUs.
	// The target stalls twice, [1 s, 2.005 s) and [5 s, 6.005 s): each time
	// the 101 starts at 1.00, 1.01, ..., 2.00 s (5.00 ... 6.00 s) wait for
	// its end, so the pool grows to 101 VUs (51 by 1.5 s: 5 pre-allocated and
	// 46 new). Afterwards one VU carries the load (last in, first out) and
	// the 100 others sit idle from 2.005 s.
	// The first start more than 2 s later is at 4.01 s: from then on each
	// start retires up to 32 of the longest idle, 4.01, 4.02, 4.03 s, down
	// to the 5 pre-allocated VUs. The same after the second stall, from 8.01 s.
	tests := []struct {
		name       string
		retireIdle time.Duration
		want       []int // VUs at 0.5, 1.5, 3, 4.015, 4.5, 5.5, 7, 8.5 s
		releases   int
		shards     int             // one per VU goroutine started
		shrinks    []time.Duration // OnShrink's calls: when 101 VUs fell below 25
	}{
		{"VUs idle for 2 s retire down to the pre-allocated", 0,
			[]int{5, 51, 101, 101 - 32, 5, 51, 101, 5}, 2 * 96, 101 + 96, []time.Duration{4030 * ms, 8030 * ms}},
		{"negative RetireIdle: VUs never retire", -1,
			[]int{5, 51, 101, 101, 101, 101, 101, 101}, 0, 101, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			onEngines(t, func(t *testing.T, wrap func(Iteration) Iteration) {
				synctest.Test(t, func(t *testing.T) {
					it := newReleasing(ms, [2]time.Duration{time.Second, 2005 * ms}, [2]time.Duration{5 * time.Second, 6005 * ms})
					exec := ConstantArrivalRate{Rate: 100, Duration: 9 * time.Second, PreAllocatedVUs: 5, MaxVUs: 1000}
					rec := &fakeRecorder{}
					var (
						t0      time.Time
						mu      sync.Mutex
						shrinks []time.Duration
					)
					onShrink := func() {
						mu.Lock()
						shrinks = append(shrinks, time.Since(t0))
						mu.Unlock()
					}
					r, err := NewGenerator([]Scenario{{Name: "s", Executor: exec, Iteration: wrap(it)}}, rec,
						Options{RetireIdle: tt.retireIdle, OnStart: func(at time.Time) { t0 = at }, OnShrink: onShrink})
					if err != nil {
						t.Fatal(err)
					}
					done := make(chan error)
					go func() { done <- r.Run(t.Context()) }()
					got := vusAt(t, r, 500*ms, 1500*ms, 3*time.Second, 4015*ms, 4500*ms, 5500*ms, 7*time.Second, 8500*ms)
					if err := <-done; err != nil {
						t.Fatal(err)
					}
					if !slices.Equal(got, tt.want) {
						t.Errorf("VUs at 0.5, 1.5, 3, 4.015, 4.5, 5.5, 7, 8.5 s: %v, want %v", got, tt.want)
					}
					synctest.Wait() // OnShrink runs on a goroutine of its own
					mu.Lock()
					if !slices.Equal(shrinks, tt.shrinks) {
						t.Errorf("OnShrink called at %v, want %v (once per stall, when its VUs have retired)", shrinks, tt.shrinks)
					}
					mu.Unlock()
					rel := it.releases()
					if len(rel) != tt.releases || it.overlaps != 0 {
						t.Errorf("%d releases, %d of them during the VU's own Do; want %d and 0", len(rel), it.overlaps, tt.releases)
					}
					// Retired VUs' identities are reused: never more ids than VUs
					// alive at once, and no (vu, iter) twice. Their shards are not:
					// a VU started again takes a fresh one.
					wantShards := tt.shards
					if _, loop := r.scenarios[0].drv.(*openLoop); loop {
						wantShards = 1 // the loop records from one goroutine
					}
					if rec.shards != wantShards {
						t.Errorf("%d shards taken, want %d (one per VU goroutine started)", rec.shards, wantShards)
					}
					for pair, n := range it.pairs {
						if pair[0] < 1 || pair[0] > 101 || n != 1 {
							t.Errorf("vu %d iter %d called %d times; want ids 1..101, each pair once", pair[0], pair[1], n)
						}
					}
					// Not one start dropped or late because of a retirement.
					samples := rec.all()
					if len(samples) != 900 || rec.dropped["s"] != 0 {
						t.Errorf("%d samples, %d dropped; want 900 and 0", len(samples), rec.dropped["s"])
					}
					want := make([]time.Duration, 900)
					for i := range want {
						want[i] = time.Duration(i) * 10 * ms
					}
					it.mu.Lock()
					calls := slices.Clone(it.calls)
					it.mu.Unlock()
					offs := make([]time.Duration, len(calls))
					for n, c := range calls {
						offs[n] = c.Sub(t0)
					}
					slices.Sort(offs)
					if !slices.Equal(offs, want) {
						t.Errorf("calls not every 10 ms from t0")
					}
					for _, s := range samples {
						if s.SendLag != 0 {
							t.Fatalf("sample %+v sent late", s)
						}
					}
				})
			})
		})
	}
}

// poolState is the open-model pool's bookkeeping, read between the
// scheduler's steps (inside a synctest bubble, after synctest.Wait).
type poolState struct {
	alive, aliveCap, idleCap int
	aliveIDs                 []uint64
	parked                   []parkedVU
}

func statePool(a *openGoroutines) poolState {
	a.mu.Lock()
	defer a.mu.Unlock()
	st := poolState{alive: len(a.alive), aliveCap: cap(a.alive), idleCap: cap(a.idle), parked: slices.Clone(a.parked)}
	for _, v := range a.alive {
		st.aliveIDs = append(st.aliveIDs, v.id)
	}
	return st
}

func TestPoolShrinksAfterRetirement(t *testing.T) {
	// The stalls of TestIdleVUsRetireAfterAStall: 101 VUs at the peak (3 s,
	// 7 s), back to the 5 pre-allocated from 4.03 s and 8.03 s. After each
	// retirement the pool's slices are sized to the 5 live VUs, not to the
	// 101 of the peak, and what a retired VU leaves behind is its id and its
	// iteration count: 96 of them, which with the 5 alive are ids 1..101,
	// each once, each with exactly the iterations its id ran.
	synctest.Test(t, func(t *testing.T) {
		it := newReleasing(ms, [2]time.Duration{time.Second, 2005 * ms}, [2]time.Duration{5 * time.Second, 6005 * ms})
		exec := ConstantArrivalRate{Rate: 100, Duration: 9 * time.Second, PreAllocatedVUs: 5, MaxVUs: 1000}
		r, err := NewGenerator([]Scenario{{Name: "s", Executor: exec, Iteration: it}}, &fakeRecorder{}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		a := r.scenarios[0].drv.(*openGoroutines)
		done := make(chan error)
		go func() { done <- r.Run(t.Context()) }()
		var states []poolState
		start := time.Now()
		for _, at := range []time.Duration{3 * time.Second, 4500 * ms, 7 * time.Second, 8500 * ms} {
			time.Sleep(at - time.Since(start))
			synctest.Wait()
			states = append(states, statePool(a))
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		it.mu.Lock()
		iters := map[uint64]uint64{} // id -> iterations run
		for pair := range it.pairs {
			iters[pair[0]]++
		}
		it.mu.Unlock()
		for n, st := range states {
			peak := n%2 == 0
			switch {
			case peak && (st.alive != 101 || st.aliveCap < 101):
				t.Errorf("state %d (peak): %d VUs alive in a slice of cap %d; want 101 in cap >= 101", n, st.alive, st.aliveCap)
			case !peak && (st.alive != 5 || st.aliveCap > minShrinkCap || st.idleCap > minShrinkCap):
				t.Errorf("state %d (after retirement): %d VUs alive, alive cap %d, idle cap %d; want 5, <= %d, <= %d",
					n, st.alive, st.aliveCap, st.idleCap, minShrinkCap, minShrinkCap)
			}
			if peak {
				continue
			}
			ids := slices.Clone(st.aliveIDs)
			for _, p := range st.parked {
				ids = append(ids, p.id)
			}
			slices.Sort(ids)
			want := make([]uint64, 101)
			for i := range want {
				want[i] = uint64(i + 1)
			}
			if len(st.parked) != 96 || !slices.Equal(ids, want) {
				t.Errorf("state %d: %d parked; alive and parked ids %v; want 96 parked and ids 1..101 once each", n, len(st.parked), ids)
			}
			if n == len(states)-1 {
				// The last retirement: no parked id ran after it.
				for _, p := range st.parked {
					if p.iter != iters[p.id] {
						t.Errorf("parked id %d with %d iterations; its id ran %d", p.id, p.iter, iters[p.id])
					}
				}
			}
		}
	})
}

func TestShrink(t *testing.T) {
	tests := []struct {
		len, cap, wantCap int
	}{
		{5, 64, 64},     // small: left as is
		{5, 65, 32},     // far below: twice the length, at least half of minShrinkCap
		{50, 1024, 100}, // far below: twice the length
		{256, 1024, 1024},
		{255, 1024, 510},
		{0, 20000, 32},
	}
	for _, tt := range tests {
		s := make([]int, tt.len, tt.cap)
		for i := range s {
			s[i] = i
		}
		got := shrink(s)
		if cap(got) != tt.wantCap || len(got) != tt.len {
			t.Errorf("shrink(len %d, cap %d): len %d cap %d, want len %d cap %d", tt.len, tt.cap, len(got), cap(got), tt.len, tt.wantCap)
		}
		for i := range got {
			if got[i] != i {
				t.Fatalf("shrink(len %d, cap %d) changed element %d to %d", tt.len, tt.cap, i, got[i])
			}
		}
	}
}

func TestRetireWaitsTwiceTheGapAtSlowRates(t *testing.T) {
	// 40 a minute: a start every 1.5 s, so a VU retires after 3 s idle, not 2.
	// The target stalls [0, 3.2 s): the starts at 0, 1.5 and 3 s take 3 VUs,
	// idle from 3.2 s. Then one VU carries the 1 ms iterations; at 6 s the two
	// others have been idle 2.8 s and stay; at 7.5 s (4.3 s) they retire.
	onEngines(t, func(t *testing.T, wrap func(Iteration) Iteration) {
		synctest.Test(t, func(t *testing.T) {
			it := newReleasing(ms, [2]time.Duration{0, 3200 * ms})
			exec := ConstantArrivalRate{Rate: 40, TimeUnit: time.Minute, Duration: 9 * time.Second, PreAllocatedVUs: 1, MaxVUs: 10}
			r, err := NewGenerator([]Scenario{{Name: "s", Executor: exec, Iteration: wrap(it)}}, &fakeRecorder{}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan error)
			go func() { done <- r.Run(t.Context()) }()
			got := vusAt(t, r, 3100*ms, 6100*ms, 7400*ms, 7600*ms)
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if want := []int{3, 3, 3, 1}; !slices.Equal(got, want) {
				t.Errorf("VUs at 3.1, 6.1, 7.4, 7.6 s: %v, want %v", got, want)
			}
			if n := len(it.releases()); n != 2 {
				t.Errorf("%d releases, want 2", n)
			}
		})
	})
}

func TestIdleLimit(t *testing.T) {
	tests := []struct {
		least, gap, want time.Duration
	}{
		{2 * time.Second, 10 * ms, 2 * time.Second},
		{2 * time.Second, time.Second, 2 * time.Second},
		{2 * time.Second, 1500 * ms, 3 * time.Second},
		{2 * time.Second, time.Minute, 2 * time.Minute},
		{0, 10 * ms, 0}, // retiring is off
	}
	for _, tt := range tests {
		if got := idleLimit(tt.least, tt.gap); got != tt.want {
			t.Errorf("idleLimit(%v, %v) = %v, want %v", tt.least, tt.gap, got, tt.want)
		}
	}
}

func TestRampedDownVUsAreReleased(t *testing.T) {
	onEngines(t, func(t *testing.T, wrap func(Iteration) Iteration) {
		synctest.Test(t, func(t *testing.T) {
			// 0 -> 3 VUs over 3 s (ids 1, 2, 3 at 1, 2, 3 s), 3 -> 1 over 2 s: the
			// newest goes first, id 3 at 4 s, id 2 at 5 s. Id 1 runs to the end
			// and is left to the Iteration's owner.
			it := newReleasing(10 * ms)
			exec := RampingVUs{Stages: []Stage{{Duration: 3 * time.Second, Target: 3}, {Duration: 2 * time.Second, Target: 1},
				{Duration: time.Second, Target: 1}}, Think: 90 * ms}
			o := runScenarios(t, t.Context(), Options{}, Scenario{Name: "r", Executor: exec, Iteration: wrap(it)})
			if o.err != nil {
				t.Fatal(o.err)
			}
			if got := it.releases(); !slices.Equal(got, []uint64{3, 2}) || it.overlaps != 0 {
				t.Errorf("released %v (%d during the VU's own Do), want [3 2] and none during", got, it.overlaps)
			}
		})
	})
}
