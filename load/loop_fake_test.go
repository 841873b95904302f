package load

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// goLoop is a fake Loop over any Iteration: each Start runs Do on a
// goroutine of its own, and Wait collects what has ended. It lets the open
// model's tests run on the loop engine with the fake targets they already
// use, inside synctest bubbles.
type goLoop struct {
	it     Iteration
	ctx    context.Context
	cancel context.CancelFunc
	mu     sync.Mutex
	ended  []Ended
	note   chan struct{} // capacity 1: something ended, or Wake
	wg     sync.WaitGroup
	starts int
	vus    map[uint64]bool // the VUs that started an iteration
	closed bool
}

// loopIteration offers goLoop over it; err, if set, is NewLoop's error.
type loopIteration struct {
	Iteration
	err       error
	sleepy    bool // its Loops sleep through ends (sleepyLoop)
	mu        sync.Mutex
	closedVUs []*goLoop
	rel       []uint64 // VUs released through a Loop
}

func (li *loopIteration) NewLoop() (Loop, error) {
	if li.err != nil {
		return nil, li.err
	}
	l := &goLoop{it: li.Iteration, note: make(chan struct{}, 1)}
	l.ctx, l.cancel = context.WithCancel(context.Background())
	li.mu.Lock()
	li.closedVUs = append(li.closedVUs, l)
	li.mu.Unlock()
	if li.sleepy {
		return sleepyLoop{loopRelease{l, li}}, nil
	}
	return loopRelease{l, li}, nil
}

// sleepyLoop sleeps through ends, as the event loop does when the next
// start is near: a Wait whose until is ahead returns at until with nothing;
// one whose until has passed (or is zero) returns what has ended.
type sleepyLoop struct{ loopRelease }

func (l sleepyLoop) Wait(until time.Time, ended []Ended) []Ended {
	if d := time.Until(until); !until.IsZero() && d > 0 {
		time.Sleep(d)
		return ended
	}
	return l.loopRelease.Wait(until, ended)
}

// vusStarted is how many distinct VUs started an iteration on its Loops.
func (li *loopIteration) vusStarted() int {
	li.mu.Lock()
	defer li.mu.Unlock()
	ids := map[uint64]bool{}
	for _, l := range li.closedVUs {
		l.mu.Lock()
		for id := range l.vus {
			ids[id] = true
		}
		l.mu.Unlock()
	}
	return len(ids)
}

// loopRelease records the VUs released, and releases them in the wrapped
// Iteration too when it holds per-VU resources.
type loopRelease struct {
	*goLoop
	li *loopIteration
}

func (l loopRelease) Release(vu uint64) {
	l.li.mu.Lock()
	l.li.rel = append(l.li.rel, vu)
	l.li.mu.Unlock()
	if r, ok := l.it.(VUReleaser); ok {
		r.ReleaseVU(vu)
	}
}

func (l *goLoop) Start(vu, iter uint64) {
	l.starts++
	l.mu.Lock()
	if l.vus == nil {
		l.vus = map[uint64]bool{}
	}
	l.vus[vu] = true
	l.mu.Unlock()
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		res := l.it.Do(l.ctx, vu, iter)
		l.mu.Lock()
		l.ended = append(l.ended, Ended{VU: vu, Result: res})
		l.mu.Unlock()
		l.Wake()
	}()
}

// WakeOnEnds: a goLoop's Wait always returns on an end (a sleepyLoop's
// does not: the closed model's tests use goLoop).
func (l *goLoop) WakeOnEnds() {}

func (l *goLoop) Wait(until time.Time, ended []Ended) []Ended {
	var timer <-chan time.Time
	if !until.IsZero() {
		d := time.Until(until)
		if d <= 0 {
			return l.take(ended)
		}
		t := time.NewTimer(d)
		defer t.Stop()
		timer = t.C
	}
	for {
		if out := l.take(ended); len(out) > len(ended) {
			return out
		}
		select {
		case <-l.note:
			return l.take(ended) // ended, or woken
		case <-timer:
			return l.take(ended)
		}
	}
}

func (l *goLoop) take(ended []Ended) []Ended {
	l.mu.Lock()
	defer l.mu.Unlock()
	ended = append(ended, l.ended...)
	l.ended = l.ended[:0]
	return ended
}

func (l *goLoop) Wake() {
	select {
	case l.note <- struct{}{}:
	default:
	}
}

func (l *goLoop) Cancel() { l.cancel() }

func (l *goLoop) Close() error {
	l.closed = true
	l.cancel()
	l.wg.Wait()
	return nil
}

// engines are the two ways the open model runs: a goroutine per VU, and
// the event loop (here the fake goLoop over the same targets).
var engines = []struct {
	name string
	wrap func(Iteration) Iteration
}{
	{"goroutines", func(it Iteration) Iteration { return it }},
	{"loop", func(it Iteration) Iteration { return &loopIteration{Iteration: it} }},
}

// onEngines runs f once per engine, as subtests.
func onEngines(t *testing.T, f func(t *testing.T, wrap func(Iteration) Iteration)) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) { f(t, e.wrap) })
	}
}

var errNoLoop = errors.New("no loop here")

func TestLoopFallsBackToGoroutinesWhenNoLoopCanBeMade(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// 10/s for 1 s with 250 ms service: the goroutine engine runs it,
		// taking over the 2 pre-allocated VUs' ids (1, 2) and adding a third.
		it := newReleasing(250 * ms)
		li := &loopIteration{Iteration: it, err: errNoLoop}
		exec := ConstantArrivalRate{Rate: 10, Duration: time.Second, PreAllocatedVUs: 2, MaxVUs: 5}
		o := runScenarios(t, t.Context(), Options{}, Scenario{Name: "s", Executor: exec, Iteration: li})
		if o.err != nil {
			t.Fatal(o.err)
		}
		if n := len(o.rec.all()); n != 10 || o.rec.dropped["s"] != 0 {
			t.Errorf("%d samples, %d dropped; want 10 and 0", n, o.rec.dropped["s"])
		}
		ids := map[uint64]bool{}
		for pair := range it.pairs {
			ids[pair[0]] = true
		}
		if len(ids) != 3 || !ids[1] || !ids[2] || !ids[3] {
			t.Errorf("VU ids %v, want 1, 2, 3", ids)
		}
		if st := o.runr.Stats()[0]; st.Started != 10 || st.VUs != 0 {
			t.Errorf("stats %+v, want 10 started and no VU left", st)
		}
		if o.rec.shards != 3 {
			t.Errorf("%d shards, want 3: one per VU goroutine", o.rec.shards)
		}
	})
}

// A start that finds no idle VU first takes what has ended but the Loop
// has not returned (it sleeps through ends) before it makes a VU: one VU
// runs 10/s at 50 ms each, as on a Loop that returns every end at once.
func TestLoopReapsBeforeMakingAVU(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		li := &loopIteration{Iteration: &target{service: 50 * ms}, sleepy: true}
		exec := ConstantArrivalRate{Rate: 10, Duration: time.Second, PreAllocatedVUs: 1, MaxVUs: 5}
		o := runScenarios(t, t.Context(), Options{}, Scenario{Name: "s", Executor: exec, Iteration: li})
		if o.err != nil {
			t.Fatal(o.err)
		}
		if n := li.vusStarted(); n != 1 {
			t.Errorf("%d VUs ran, want 1: a VU was made while the only one had ended", n)
		}
		if n := len(o.rec.all()); n != 10 || o.rec.dropped["s"] != 0 {
			t.Errorf("%d samples, %d dropped; want 10 and 0", n, o.rec.dropped["s"])
		}
	})
}

func TestGoroutineVUsOptionKeepsTheGoroutineEngine(t *testing.T) {
	li := &loopIteration{Iteration: &target{service: ms}}
	exec := ConstantArrivalRate{Rate: 10, Duration: time.Second, PreAllocatedVUs: 1}
	for _, goroutines := range []bool{false, true} {
		r, err := NewGenerator([]Scenario{{Name: "s", Executor: exec, Iteration: li}}, &fakeRecorder{}, Options{GoroutineVUs: goroutines})
		if err != nil {
			t.Fatal(err)
		}
		_, loop := r.scenarios[0].drv.(*openLoop)
		if loop == goroutines {
			t.Errorf("GoroutineVUs %v: loop engine %v", goroutines, loop)
		}
	}
}

func TestLoopSlackSharesWakeUpsOnlyBetweenStarts(t *testing.T) {
	const us = time.Microsecond
	tests := []struct {
		name     string
		rate     float64
		service  time.Duration
		wantLags []time.Duration // in start order
	}{
		// 10,000/s: starts 100 µs apart, the slack 200 µs. Each wake-up makes
		// the start due and the one 100 µs before it (sent 100 µs late).
		{"starts closer than the slack pair up", 10_000, 50 * us,
			[]time.Duration{0, 100 * us, 0, 100 * us, 0, 100 * us, 0, 100 * us, 0, 100 * us}},
		// 4,000/s: 250 µs apart. The iteration that ends at 100 µs wakes the
		// loop, but a wake-up that makes no start does not push the next one.
		{"an iteration's end does not delay the next start", 4_000, 100 * us,
			[]time.Duration{0, 0, 0, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				li := &loopIteration{Iteration: &target{service: tt.service}}
				exec := ConstantArrivalRate{Rate: tt.rate, Duration: time.Millisecond, PreAllocatedVUs: 2}
				o := runScenarios(t, t.Context(), Options{}, Scenario{Name: "s", Executor: exec, Iteration: li})
				if o.err != nil {
					t.Fatal(o.err)
				}
				samples := o.rec.all()
				slices.SortFunc(samples, func(a, b Sample) int { return a.Sent.Add(-a.SendLag).Compare(b.Sent.Add(-b.SendLag)) })
				var lags []time.Duration
				for _, s := range samples {
					lags = append(lags, s.SendLag)
				}
				if !slices.Equal(lags, tt.wantLags) {
					t.Errorf("send lags %v, want %v", lags, tt.wantLags)
				}
			})
		})
	}
}

func TestLoopPoolShrinksAfterRetirement(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// TestIdleVUsRetireAfterAStall's stalls on the loop engine: 101 VUs
		// busy at once in each, back to the 5 pre-allocated after.
		it := newReleasing(ms, [2]time.Duration{time.Second, 2005 * ms}, [2]time.Duration{5 * time.Second, 6005 * ms})
		li := &loopIteration{Iteration: it}
		exec := ConstantArrivalRate{Rate: 100, Duration: 9 * time.Second, PreAllocatedVUs: 5, MaxVUs: 1000}
		o := runScenarios(t, t.Context(), Options{}, Scenario{Name: "s", Executor: exec, Iteration: li})
		if o.err != nil {
			t.Fatal(o.err)
		}
		l := o.runr.scenarios[0].drv.(*openLoop)
		if l.alive != 5 || len(l.idle) != 5 || len(l.busy) != 0 {
			t.Errorf("%d alive, %d idle, %d busy at the end; want 5, 5, 0", l.alive, len(l.idle), len(l.busy))
		}
		// The busy map was made again after the stall (it had 101
		// entries), and the idle stack's array is sized to the 5 VUs.
		if l.peak > 2 || cap(l.idle) > minShrinkCap {
			t.Errorf("busy map's peak %d, idle capacity %d; want ≤ 2 and ≤ %d", l.peak, cap(l.idle), minShrinkCap)
		}
		if len(l.parked) != 96 {
			t.Errorf("%d identities parked, want 96 (101 VUs less the 5 alive)", len(l.parked))
		}
	})
}
