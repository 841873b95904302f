package k6script

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/knee-dev/knee/load"
)

// Iteration returns the load.Iteration of one scenario of plan: each call
// runs the scenario's exec function once in the calling VU's runtime.
// onDone, when the scenario has an iteration count, is called once that
// many iterations have finished (the caller then ends the run).
func (s *Script) Iteration(name string, sp ScenarioPlan, onDone func()) load.Iteration {
	it := &iteration{s: s, scenario: name, exec: sp.Exec, env: sp.Env, limit: sp.Iterations, perVU: sp.PerVU, onDone: onDone, done: make(chan struct{})}
	s.scenarios.Store(name, it)
	return it
}

// iteration is one scenario's work; it implements load.SelfRecording.
type iteration struct {
	s        *Script
	scenario string
	exec     string
	env      map[string]string

	// iteration count (shared-iterations, per-vu-iterations)
	limit    int64
	perVU    int64 // per-vu-iterations: each VU's share of limit
	vuMu     sync.Mutex
	byVU     map[uint64]int64 // per-vu-iterations: iterations each VU claimed
	claimed  atomic.Int64
	finished atomic.Int64
	onDone   func()
	done     chan struct{}
	doneOnce sync.Once

	startOnce sync.Once
	started   time.Time // the scenario's first iteration's due start

	taken atomic.Int64 // load's VU ids that took a runtime here (VUsTaken)
}

var _ load.SelfRecording = (*iteration)(nil)

// DoRecord runs one iteration; its requests record themselves into shard.
func (it *iteration) DoRecord(ctx context.Context, st load.Start, shard load.ShardSink) {
	if it.limit > 0 && (!it.claimVU(st.VU) || it.claimed.Add(1) > it.limit) {
		// Every iteration is taken: wait for the run to end instead of spinning.
		select {
		case <-it.done:
		case <-ctx.Done():
		}
		return
	}
	v, fresh, err := it.s.vuFor(ctx, st.VU, &it.taken)
	if err != nil {
		it.s.errs.add(err.Error())
		it.finish()
		return
	}
	if fresh && !st.Intended.IsZero() {
		// A VU made now ran its init code first: its requests went out that
		// much later than due, and are charged for it as any start lag.
		st.Called = time.Now()
	}
	it.startOnce.Do(func() { it.started = dueStart(st) })
	it.s.exec.startOnce.Do(func() { it.s.exec.start = dueStart(st) })
	v.scStart = it.started
	v.iterate(ctx, it.exec, it.env, st, shard)
	it.finish()
}

// claimVU takes one iteration of the VU's own share under
// per-vu-iterations; false once the VU ran its share. Always true for
// shared-iterations.
func (it *iteration) claimVU(vu uint64) bool {
	if it.perVU <= 0 {
		return true
	}
	it.vuMu.Lock()
	defer it.vuMu.Unlock()
	if it.byVU == nil {
		it.byVU = map[uint64]int64{}
	}
	if it.byVU[vu] >= it.perVU {
		return false
	}
	it.byVU[vu]++
	return true
}

func (it *iteration) finish() {
	if it.limit > 0 && it.finished.Add(1) == it.limit {
		it.doneOnce.Do(func() {
			close(it.done)
			if it.onDone != nil {
				it.onDone()
			}
		})
	}
}

// Do runs one iteration for an executor that does not know
// load.SelfRecording: its last request is the Result, the others are lost.
func (it *iteration) Do(ctx context.Context, vu, iter uint64) load.Result {
	var last lastSample
	it.DoRecord(ctx, load.Start{Scenario: it.scenario, VU: vu, Iter: iter, Called: time.Now()}, &last)
	return last.s.Result
}

type lastSample struct{ s load.Sample }

func (l *lastSample) Record(s load.Sample) { l.s = s }
