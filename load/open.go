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
// Hand-off: an idle VU waits on its own jobs channel (capacity 1) after
// putting that channel in idle. The scheduler takes an idle VU without
// blocking; if there is none it starts a VU with the job already in hand
// while fewer than max exist, else it counts the iteration as dropped.
// Only the scheduler sends on or closes jobs channels, so closing them all
// at the end is safe and lets each VU drain its last job first.
type arrivals struct {
	sched    schedule.Schedule
	pre, max int

	idle     chan chan job // VUs waiting for work; capacity max, so VUs never block on it
	vus      []chan job    // every VU's jobs channel; scheduler goroutine only
	wg       sync.WaitGroup
	iterCtx  context.Context
	cancelIt context.CancelFunc
}

// job is one iteration to run: its number and intended start.
type job struct {
	i        int64
	intended time.Time
}

func (a *arrivals) offered(elapsed time.Duration) float64 { return a.sched.Rate(elapsed) }

func (a *arrivals) prepare(s *scenarioRun) {
	a.idle = make(chan chan job, a.max)
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

// spawn starts a VU: busy with first when one is given, else idle.
// ready, if not nil, is called once the VU can take work.
func (a *arrivals) spawn(s *scenarioRun, first *job, ready func()) {
	jobs := make(chan job, 1)
	if first != nil {
		jobs <- *first
		s.live.busy.Add(1)
	} else {
		a.idle <- jobs
	}
	a.vus = append(a.vus, jobs)
	s.live.vus.Add(1)
	a.wg.Add(1)
	go a.vu(s, s.nextVUID(), jobs, ready)
}

func (a *arrivals) vu(s *scenarioRun, id uint64, jobs chan job, ready func()) {
	defer a.wg.Done()
	defer s.live.vus.Add(-1)
	shard := s.runner.rec.Shard()
	if ready != nil {
		ready()
	}
	var iter uint64
	for j := range jobs {
		called := time.Now()
		res := stamp(s.it.Do(a.iterCtx, id, iter), called, time.Now())
		shard.Record(Sample{
			Scenario: s.name,
			Result:   res,
			Latency:  res.Done.Sub(j.intended),
			Service:  res.Done.Sub(res.Sent),
			SendLag:  res.Sent.Sub(j.intended),
		})
		iter++
		s.live.busy.Add(-1)
		a.idle <- jobs
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
	var woke time.Time // the last wake-up asked of pace
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
	}
	for _, jobs := range a.vus {
		close(jobs)
	}
	done := make(chan struct{})
	go func() { a.wg.Wait(); close(done) }()
	s.finish(done, a.cancelIt)
}

// dispatch hands j to an idle VU, a new VU, or counts it dropped. It never blocks.
func (a *arrivals) dispatch(s *scenarioRun, j job) {
	select {
	case jobs := <-a.idle:
		s.live.busy.Add(1)
		s.live.started.Add(1)
		jobs <- j // capacity 1 and the VU was idle: it is empty
	default:
		if len(a.vus) < a.max {
			s.live.started.Add(1)
			a.spawn(s, &j, nil)
			return
		}
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
