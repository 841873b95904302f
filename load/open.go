package load

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/knee-dev/knee/load/schedule"
)

func (c ConstantArrivalRate) newDriver() (driver, error) {
	sched, err := schedule.NewConstant(c.Rate, c.TimeUnit, c.Duration)
	if err != nil {
		return nil, err
	}
	return &arrivals{sched: sched, pre: c.PreAllocatedVUs, max: c.PeakVUs()}, nil
}

func (c RampingArrivalRate) newDriver() (driver, error) {
	sched, err := schedule.NewRamping(c.StartRate, c.TimeUnit, c.Stages)
	if err != nil {
		return nil, err
	}
	return &arrivals{sched: sched, pre: c.PreAllocatedVUs, max: c.PeakVUs()}, nil
}

// arrivals drives the open model without a hand-off per iteration.
//
// Every idle VU claims the next unclaimed iteration (next, one counter),
// sleeps on its own timer until that iteration's intended start and runs
// it: an idle VU always waits on a claimed iteration, so "no VU was idle
// at iteration i's start" is exactly "i was still unclaimed at its start".
// The scheduler goroutine (run) only sleeps until the start of the first
// unclaimed iteration; if it is still unclaimed then, it claims it itself
// and starts a new VU with it while fewer than max exist, else counts it
// as dropped. Claims are a compare-and-swap on next, so an iteration is
// run or dropped exactly once, and never run after it was dropped.
//
// At a steady rate with idle VUs the scheduler wakes about once per
// pre-allocated VU's worth of iterations, not once per iteration, and a
// VU goes from its timer straight to its request.
type arrivals struct {
	sched    schedule.Schedule
	pre, max int

	next     atomic.Int64  // the first iteration no VU or scheduler has claimed
	start    time.Time     // set by run before begun is closed
	begun    chan struct{} // closed once start is set: VUs may claim
	alarm    *alarm        // keeps the VUs' timers punctual; nil: none
	spawned  int           // VUs started; scheduler goroutine only
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
	a.begun = make(chan struct{})
	a.alarm = newAlarm()
	a.iterCtx, a.cancelIt = context.WithCancel(s.hard)
	// Pre-allocated VUs have their shard before prepare returns, so the
	// first iterations find them ready.
	var ready sync.WaitGroup
	ready.Add(a.pre)
	for range a.pre {
		a.spawn(s, nil, ready.Done)
	}
	ready.Wait()
}

// spawn starts a VU, with first in hand when one is given.
// ready, if not nil, is called once the VU can take work.
func (a *arrivals) spawn(s *scenarioRun, first *job, ready func()) {
	a.spawned++
	s.live.vus.Add(1)
	a.wg.Add(1)
	go a.vu(s, s.nextVUID(), first, ready)
}

// claim takes the next unclaimed iteration for a VU: its number and offset
// from the start; false once the schedule has no more. It needs no start
// time, so pre-allocated VUs claim theirs before the scenario starts.
func (a *arrivals) claim() (int64, time.Duration, bool) {
	i := a.next.Add(1) - 1
	off, ok := a.sched.Offset(i)
	return i, off, ok
}

func (a *arrivals) vu(s *scenarioRun, id uint64, first *job, ready func()) {
	defer a.wg.Done()
	defer s.live.vus.Add(-1)
	shard := s.runner.rec.Shard()
	var i int64
	var off time.Duration
	ok := true
	if first == nil {
		i, off, ok = a.claim()
	}
	if ready != nil {
		ready()
	}
	select {
	case <-a.begun:
	case <-s.stop.Done():
		return
	}
	timer := newStoppedTimer()
	defer timer.Stop()
	for iter := uint64(0); ; iter++ {
		var j job
		if first != nil {
			j, first = *first, nil
		} else {
			if !ok {
				return
			}
			j = job{i: i, intended: a.start.Add(off)}
			if !wait(timer, j.intended, s.stop) {
				return
			}
		}
		a.armAfter(j.i)
		s.live.busy.Add(1)
		s.live.started.Add(1)
		called := time.Now()
		res := stamp(s.it.Do(a.iterCtx, id, iter), called, time.Now())
		shard.Record(Sample{
			Scenario: s.name,
			Result:   res,
			Latency:  res.Done.Sub(j.intended),
			Service:  res.Done.Sub(res.Sent),
			SendLag:  res.Sent.Sub(j.intended),
		})
		s.live.busy.Add(-1)
		i, off, ok = a.claim()
	}
}

// run is the scheduler. It sleeps until the absolute intended start of the
// first unclaimed iteration, never "last + interval", so lateness does not
// accumulate; when it wakes late, every past-due unclaimed iteration is
// dealt with at once, each with its own intended time.
func (a *arrivals) run(s *scenarioRun, start time.Time) {
	s.live.start.Store(&start)
	a.start = start
	close(a.begun)
	defer a.alarm.close()
	a.armAfter(-1) // the chain's start: iteration 0
	timer := newStoppedTimer()
	defer timer.Stop()
	for {
		i := a.next.Load()
		off, ok := a.sched.Offset(i)
		if !ok {
			// The schedule is done; the scenario lasts until its end.
			wait(timer, start.Add(a.sched.Duration()), s.stop)
			break
		}
		due := start.Add(off)
		if !wait(timer, due, s.stop) {
			break
		}
		if a.next.CompareAndSwap(i, i+1) {
			a.armAfter(i)
			a.dispatch(s, job{i: i, intended: due})
		}
	}
	done := make(chan struct{})
	go func() { a.wg.Wait(); close(done) }()
	s.finish(done, a.cancelIt)
}

// armAfter arms the alarm for the start after iteration i's: called by
// whoever deals with i at its start, it keeps the alarm one start ahead.
func (a *arrivals) armAfter(i int64) {
	if a.alarm == nil {
		return
	}
	if off, ok := a.sched.Offset(i + 1); ok {
		a.alarm.arm(i+1, a.start.Add(off))
	}
}

// dispatch starts a new VU with j, the scheduler's own claim, or counts it
// dropped when max VUs exist (every one of them busy, or it would have
// claimed j). It never blocks.
func (a *arrivals) dispatch(s *scenarioRun, j job) {
	if a.spawned < a.max {
		a.spawn(s, &j, nil)
		return
	}
	s.live.dropped.Add(1)
	s.runner.rec.Dropped(s.name, 1)
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
