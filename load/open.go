package load

import (
	"context"
	"sync"
	"time"

	"github.com/knee-dev/knee/load/schedule"
)

func (c ConstantArrivalRate) newDriver() (driver, error) {
	whole, err := schedule.NewConstant(c.Rate, c.TimeUnit, c.Duration)
	if err != nil {
		return nil, err
	}
	sched := schedule.Segmented(whole, c.Share)
	return &arrivals{sched: sched, pre: c.PreAllocatedVUs, max: c.PeakVUs()}, nil
}

func (c RampingArrivalRate) newDriver() (driver, error) {
	whole, err := schedule.NewRamping(c.StartRate, c.TimeUnit, c.Stages)
	if err != nil {
		return nil, err
	}
	sched := schedule.Segmented(whole, c.Share)
	return &arrivals{sched: sched, pre: c.PreAllocatedVUs, max: c.PeakVUs()}, nil
}

// arrivals drives the open model: one scheduler goroutine (run) starts
// iteration i at start+Offset(i) on an idle VU, a new VU, or not at all.
//
// Hand-off: a VU that finishes an iteration pushes itself on the idle
// stack and waits on its own jobs channel (capacity 1). The scheduler pops
// the most recently idle VU without blocking; if there is none it starts a
// VU with the job already in hand while fewer than max are alive, else it
// counts the iteration as dropped. Last in, first out keeps the VUs a rate
// needs busy and leaves the rest idle at the bottom of the stack, where
// retire finds them (see retire.go). Only the scheduler sends on or closes
// jobs channels, so closing them all at the end is safe and lets each VU
// drain its last job first.
type arrivals struct {
	sched    schedule.Schedule
	pre, max int
	idleMax  time.Duration // Options.RetireIdle, resolved in prepare; 0: never retire

	mu     sync.Mutex
	idle   []*openVU  // guarded by mu; bottom (0) idle longest, top most recently
	parked []parkedVU // guarded by mu; the identities of retired VUs, for reuse

	alive    []*openVU // every live VU; scheduler goroutine only
	wg       sync.WaitGroup
	iterCtx  context.Context
	cancelIt context.CancelFunc
}

// openVU is one VU of the open model. A retired VU leaves its id and
// iteration count behind (parkedVU), and a VU started later takes them
// over: ids, and the per-VU state an Iteration keys by id, stay as few as
// the VUs ever alive at once, and (vu, iter) never repeats. Nothing else of
// it is kept: its shard holds no data of its own (a shard records into the
// recorder's stripes), so a VU started later takes a fresh one.
type openVU struct {
	id    uint64
	iter  uint64 // its goroutine only
	jobs  chan job
	since time.Time // when it last became idle; guarded by arrivals.mu
	at    int       // index in arrivals.alive; scheduler goroutine only
	// retiring is set by the scheduler before it closes jobs to retire the
	// VU, as opposed to ending the scenario.
	retiring bool
}

// job is one iteration to run: its number and intended start.
type job struct {
	i        int64
	intended time.Time
}

func (a *arrivals) offered(elapsed time.Duration) float64 { return a.sched.Rate(elapsed) }

func (a *arrivals) prepare(s *scenarioRun) {
	a.idleMax = s.runner.opt.retireIdle()
	a.iterCtx, a.cancelIt = context.WithCancel(s.hard)
	// Pre-allocated VUs are idle before prepare returns, and have their
	// shard, so the first iterations find them ready.
	var ready sync.WaitGroup
	ready.Add(a.pre)
	for range a.pre {
		a.spawn(s, nil, ready.Done)
	}
	ready.Wait()
}

// spawn starts a VU, reusing a retired one's identity if there is one:
// busy with first when one is given, else idle. ready, if not nil, is
// called once the VU can take work.
func (a *arrivals) spawn(s *scenarioRun, first *job, ready func()) {
	a.mu.Lock()
	v := &openVU{jobs: make(chan job, 1)}
	n := len(a.parked)
	if n > 0 {
		v.id, v.iter = a.parked[n-1].id, a.parked[n-1].iter
		a.parked = a.parked[:n-1]
	}
	a.mu.Unlock()
	if n == 0 {
		v.id = s.nextVUID()
	}
	if first != nil {
		v.jobs <- *first
		s.live.busy.Add(1)
	} else {
		a.mu.Lock()
		v.since = time.Now()
		a.idle = append(a.idle, v)
		a.mu.Unlock()
	}
	v.at = len(a.alive)
	a.alive = append(a.alive, v)
	s.live.vus.Add(1)
	a.wg.Add(1)
	go a.vu(s, v, v.jobs, ready)
}

// vu runs v's jobs until the scheduler closes jobs: at the end of the
// scenario, or when it retires v (then v's resources are released and its
// identity parked for reuse).
func (a *arrivals) vu(s *scenarioRun, v *openVU, jobs chan job, ready func()) {
	defer a.wg.Done()
	defer s.live.vus.Add(-1)
	shard := s.runner.rec.Shard()
	if ready != nil {
		ready()
	}
	self, _ := s.it.(SelfRecording)
	for j := range jobs {
		called := time.Now()
		if self != nil {
			self.DoRecord(a.iterCtx, Start{Scenario: s.name, VU: v.id, Iter: v.iter, Intended: j.intended, Called: called}, shard)
		} else {
			res := stamp(s.it.Do(a.iterCtx, v.id, v.iter), called, time.Now())
			shard.Record(Sample{
				Scenario: s.name,
				Result:   res,
				Latency:  res.Done.Sub(j.intended),
				Service:  res.Done.Sub(res.Sent),
				SendLag:  res.Sent.Sub(j.intended),
			})
		}
		v.iter++
		s.live.busy.Add(-1)
		a.mu.Lock()
		v.since = time.Now()
		a.idle = append(a.idle, v)
		a.mu.Unlock()
	}
	if v.retiring {
		a.retired(s, v)
	}
}

// run is the scheduler. It sets its pacer (a kernel timer where there is
// one, see pacer.go) to each absolute intended time, never to "last +
// interval", so lateness does not accumulate; when it wakes late, every
// past-due iteration still goes out at once, each with its own intended
// time. It wakes at most once per TimerSlack.
func (a *arrivals) run(s *scenarioRun, start time.Time) {
	s.live.start.Store(&start)
	pace := newPacer(s.stop, s.runner.opt.TimerSlack)
	defer pace.close()
	var woke time.Time     // the last wake-up asked of pace
	var prev time.Duration // the previous iteration's offset
	for i := int64(0); ; i++ {
		off, ok := a.sched.Offset(i)
		if !ok {
			// The schedule is done; the scenario lasts until its end.
			pace.wait(start.Add(a.sched.Duration()), s.stop)
			break
		}
		due := start.Add(off)
		// A start due sooner than the pacer's gap after its last wake-up
		// waits for the gap; one already due goes at once.
		at := due
		if now := time.Now(); at.After(now) {
			if earliest := woke.Add(pace.gap()); at.Before(earliest) {
				at = earliest
			}
			woke = at
		}
		if !pace.wait(at, s.stop) {
			break
		}
		a.dispatch(s, job{i: i, intended: due})
		a.retire(time.Now(), idleLimit(a.idleMax, off-prev))
		prev = off
	}
	for _, v := range a.alive {
		close(v.jobs)
	}
	done := make(chan struct{})
	go func() { a.wg.Wait(); close(done) }()
	s.finish(done, a.cancelIt)
}

// dispatch hands j to an idle VU, a new VU, or counts it dropped. It never blocks.
func (a *arrivals) dispatch(s *scenarioRun, j job) {
	a.mu.Lock()
	var v *openVU
	if n := len(a.idle); n > 0 {
		v = a.idle[n-1]
		a.idle[n-1] = nil
		a.idle = a.idle[:n-1]
	}
	a.mu.Unlock()
	switch {
	case v != nil:
		s.live.busy.Add(1)
		s.live.started.Add(1)
		v.jobs <- j // capacity 1 and the VU was idle: it is empty
	case len(a.alive) < a.max:
		s.live.started.Add(1)
		a.spawn(s, &j, nil)
	default:
		s.live.dropped.Add(1)
		s.runner.rec.Dropped(s.name, 1)
	}
}

// wait blocks until the monotonic clock reaches at; false if stop came first.
// A stop is noticed even when at is already past.
func wait(timer *time.Timer, at time.Time, stop context.Context) bool {
	if stop.Err() != nil {
		return false
	}
	d := time.Until(at)
	if d <= 0 {
		return true
	}
	timer.Reset(d)
	select {
	case <-timer.C:
		return true
	case <-stop.Done():
		return false
	}
}

func newStoppedTimer() *time.Timer {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return t
}
