package load

import (
	"context"
	"sync"
	"time"

	"github.com/knee-dev/knee/load/schedule"
)

func (c ConstantArrivalRate) newDriver() (driver, error) {
	sched, err := c.starts()
	if err != nil {
		return nil, err
	}
	return &openGoroutines{sched: sched, vuPool: vuPool[*openVU]{pre: c.PreAllocatedVUs, max: c.PeakVUs()}}, nil
}

func (c RampingArrivalRate) newDriver() (driver, error) {
	sched, err := c.starts()
	if err != nil {
		return nil, err
	}
	return &openGoroutines{sched: sched, vuPool: vuPool[*openVU]{pre: c.PreAllocatedVUs, max: c.PeakVUs()}}, nil
}

// starts is the schedule c's driver follows: this runner's share of it.
func (c ConstantArrivalRate) starts() (schedule.Schedule, error) {
	whole, err := schedule.NewConstant(c.Rate, c.TimeUnit, c.Duration)
	if err != nil {
		return nil, err
	}
	return schedule.Segmented(whole, c.Share), nil
}

// starts is the schedule c's driver follows: this runner's share of it.
func (c RampingArrivalRate) starts() (schedule.Schedule, error) {
	whole, err := schedule.NewRamping(c.StartRate, c.TimeUnit, c.Stages)
	if err != nil {
		return nil, err
	}
	return schedule.Segmented(whole, c.Share), nil
}

// OpenStarts is the schedule of an open-model executor's starts as this
// runner makes them (its share of a split test, Segment) and their peak
// rate per second; ok is false for a closed-model executor.
func OpenStarts(e Executor) (sched schedule.Schedule, peak float64, ok bool, err error) {
	var share schedule.Share
	switch c := e.(type) {
	case ConstantArrivalRate:
		sched, err = c.starts()
		peak, share = c.PeakRate(), c.Share
	case RampingArrivalRate:
		sched, err = c.starts()
		peak, share = c.PeakRate(), c.Share
	default:
		return nil, 0, false, nil
	}
	frac, _ := share.Segment().Length().Float64()
	return sched, peak * frac, true, err
}

// openGoroutines drives the open model on goroutines: iteration i starts at start+Offset(i)
// on a VU that is free then, on a new VU, or not at all (dropped).
//
// Most starts need no hand-off between goroutines: a VU that finishes an
// iteration starts the next one itself if it is already due, and if it is
// not, and no other VU is waiting for it, and starts are at least the
// alarm's gap (Options.TimerSlack) apart, the VU becomes the pacer: it
// sleeps on the pacer's precise timer (see pacer.go; one for the
// scenario, as there is one pacer at a time) until that start and makes
// it, so the goroutine that wakes is the one that sends. Only when no VU is
// free for a start does the scheduler goroutine (run) wake, on an alarm
// that whoever started the previous iteration set (see alarm.go), and hand
// the start to an idle VU, a new one while fewer than max are alive, or
// count it dropped. Every start is taken once, under mu, in order, with its
// own intended time, and never before it.
//
// Idle VUs wait on their own jobs channel (capacity 1) in the pool
// (vuPool), which picks the VU that takes each of the scheduler's starts
// and retires those idle too long; a VU that finishes does not take the
// next start itself when the pool would rotate it to the VU idle longest.
// Jobs channels are sent on and closed only under mu, and only for VUs
// taken off the idle stack, so closing them all at the end is safe and
// lets each VU drain its last job first.
type openGoroutines struct {
	sched schedule.Schedule
	slack time.Duration // Options.TimerSlack, for the pacer and the alarm

	wg       sync.WaitGroup
	iterCtx  context.Context
	cancelIt context.CancelFunc

	mu sync.Mutex
	vuPool[*openVU]
	start time.Time // the scenario's start; set before the first iteration
	next  int64     // the next iteration neither started nor dropped
	alive []*openVU // every live VU, to close their jobs at the end: vuPool.alive of them
	pacer *openVU   // the VU asleep until next's start, if any
	pace  pacer     // the timer the pacer sleeps on; the pacer VU alone uses it
	alarm alarm     // the scheduler's: set for next's start while there is no pacer
	armed time.Time // what alarm is set to; zero: cancelled or rung
	woke  time.Time // the scheduler's last wake-up, for the alarm's gap
	done  bool      // no iteration starts any more; jobs are closed
	wakes int       // the scheduler's wake-ups, for tests
	sets  int       // the alarm's settings (a system call each on a kernel timer), for tests
}

// openVU is one VU of the open model on goroutines. A retired VU leaves its
// id and iteration count behind (parkedVU). Nothing else of it is kept:
// its shard holds no data of its own (a shard records into the recorder's
// stripes), so a VU started later takes a fresh one.
type openVU struct {
	id    uint64
	iter  uint64    // its goroutine only
	shard ShardSink // its goroutine's
	jobs  chan job
	at    int // index in openGoroutines.alive; guarded by openGoroutines.mu
	// retiring is set before its jobs are closed to retire the VU, as
	// opposed to ending the scenario.
	retiring bool
}

// job is one iteration to run: its number and intended start.
type job struct {
	i        int64
	intended time.Time
}

func (a *openGoroutines) offered(elapsed time.Duration) float64 { return a.sched.Rate(elapsed) }

func (a *openGoroutines) prepare(s *scenarioRun) {
	a.setUp(s)
	a.letGo = a.retireVUs
	a.slack = s.gen.opt.TimerSlack
	a.iterCtx, a.cancelIt = context.WithCancel(s.hard)
	// Pre-allocated VUs are idle before prepare returns, and have their
	// shard, so the first iterations find them ready.
	var ready sync.WaitGroup
	ready.Add(a.pre)
	a.mu.Lock()
	for range a.pre {
		a.spawnLocked(s, nil, ready.Done)
	}
	a.mu.Unlock()
	ready.Wait()
}

// spawnLocked starts a VU, reusing a retired one's identity if there is
// one: busy with first when one is given, else idle. ready, if not nil, is
// called once the VU can take work. mu held.
func (a *openGoroutines) spawnLocked(s *scenarioRun, first *job, ready func()) {
	id, iter := a.spawn()
	v := &openVU{id: id, iter: iter, jobs: make(chan job, 1)}
	if first != nil {
		v.jobs <- *first
		s.live.busy.Add(1)
	} else {
		a.push(v, time.Now())
	}
	v.at = len(a.alive)
	a.alive = append(a.alive, v)
	s.live.vus.Add(1)
	a.wg.Add(1)
	go a.vu(s, v, v.jobs, ready)
}

// vu runs the jobs handed to v, and after each iteration the ones it
// starts itself (see after), until its jobs are closed: at the end of the
// scenario, or when v retires (then v's resources are released and its
// identity parked for reuse).
func (a *openGoroutines) vu(s *scenarioRun, v *openVU, jobs chan job, ready func()) {
	defer a.wg.Done()
	defer s.live.vus.Add(-1)
	v.shard = s.gen.rec.Shard()
	if ready != nil {
		ready()
	}
	self, _ := s.it.(SelfRecording)
	for j := range jobs {
		for more := true; more; j, more = a.after(s, v) {
			a.iterate(s, v, self, j)
		}
	}
	if v.retiring {
		a.retired(s, v)
	}
}

// iterate runs one iteration on v and records it.
func (a *openGoroutines) iterate(s *scenarioRun, v *openVU, self SelfRecording, j job) {
	called := time.Now()
	if self != nil {
		self.DoRecord(a.iterCtx, Start{Scenario: s.name, VU: v.id, Iter: v.iter, Intended: j.intended, Called: called}, v.shard)
	} else {
		res := stamp(s.it.Do(a.iterCtx, v.id, v.iter), called, time.Now())
		v.shard.Record(s.openSample(res, j.intended))
	}
	v.iter++
	s.live.busy.Add(-1)
}

// after is what v does once an iteration is done: it takes the next start
// if it is due, or sleeps until it as the pacer if no other VU does, and
// returns that job; or, when there is no start for it, it goes on the
// idle stack and returns false.
func (a *openGoroutines) after(s *scenarioRun, v *openVU) (job, bool) {
	a.mu.Lock()
	for !a.done && s.stop.Err() == nil {
		due, off, ok := a.nextStart()
		if !ok {
			break
		}
		now := time.Now()
		gap := a.gap(off)
		if a.rotating(now, gap) {
			// The VU idle longest takes it, from the scheduler.
			break
		}
		if !due.After(now) {
			// Behind the schedule: v takes this start; any others due
			// are the scheduler's to hand out (arm rings its alarm for
			// them). Handing them out here would hold mu for long while
			// the VUs that finish queue for it.
			j := a.take(due)
			a.begin(time.Now(), off) // the pool retires at every start, however made
			s.live.busy.Add(1)
			s.live.started.Add(1)
			a.arm()
			a.mu.Unlock()
			return j, true
		}
		if a.pacer != nil || gap < a.alarm.gap() {
			// Someone paces already; or starts come closer together
			// than the alarm's gap, and the scheduler starts several
			// per wake-up, cheaper than a wake-up each.
			break
		}
		a.pacer = v
		a.arm() // moves the alarm to the start after: v makes this one
		pace := a.pace
		a.mu.Unlock()
		pace.wait(due, s.stop) // woken early or stopped: the loop looks again
		a.mu.Lock()
		a.pacer = nil
	}
	a.arm()
	a.push(v, time.Now())
	a.mu.Unlock()
	return job{}, false
}

// nextStart is when iteration next is due, and its offset; false when the
// schedule has no more. mu held.
func (a *openGoroutines) nextStart() (time.Time, time.Duration, bool) {
	off, ok := a.sched.Offset(a.next)
	return a.start.Add(off), off, ok
}

// take makes next, due at due, started (or dropped) and returns its job.
// mu held.
func (a *openGoroutines) take(due time.Time) job {
	j := job{i: a.next, intended: due}
	a.next++
	return j
}

// arm sets the scheduler's alarm for the next start no VU is asleep for:
// next's, or the one after it while a pacer makes next's (or the
// schedule's end when there is none). So the alarm is set once per start
// that a VU makes itself, when it becomes the pacer: the start it then
// takes leaves the alarm where it is, already on the following start, for
// the case that the iteration is still running then. A start due sooner
// than the alarm's gap after the scheduler's last wake-up waits for the
// gap; one already due rings at once. mu held.
func (a *openGoroutines) arm() {
	if a.done {
		return
	}
	now := time.Now()
	if !a.armed.IsZero() && !a.armed.After(now) {
		// It rang, or is about to: the scheduler sets it again once it
		// has looked (and finds a pacer, if one came meanwhile).
		return
	}
	i := a.next
	if a.pacer != nil {
		i++
	}
	at := a.start.Add(a.sched.Duration())
	if off, ok := a.sched.Offset(i); ok {
		at = a.start.Add(off)
	}
	if earliest := a.woke.Add(a.alarm.gap()); at.Before(earliest) && at.After(now) {
		at = earliest
	}
	if !at.Equal(a.armed) {
		a.armed = at
		a.alarm.set(at)
		a.sets++
	}
}

// run is the scheduler. The alarm is set to absolute intended times, never
// to "last + interval", so lateness does not accumulate; when it wakes
// late, every past-due start still goes out at once, each with its own
// intended time. It wakes at most once per TimerSlack, and not at all for
// the starts that VUs make themselves.
func (a *openGoroutines) run(s *scenarioRun, start time.Time) {
	s.live.start.Store(&start)
	a.mu.Lock()
	a.start = start
	a.alarm = newAlarm(s.stop, a.slack)
	a.pace = newPacer(s.stop, a.slack)
	a.arm()
	a.mu.Unlock()
	for ended := false; !ended && a.alarm.wait(s.stop); {
		a.mu.Lock()
		a.wakes++
		a.armed = time.Time{} // it rang; a pacer that came meanwhile sets it again when it starts
		if a.pacer == nil {
			a.woke = time.Now()
			more := true
			for more && !ended && s.stop.Err() == nil {
				// mu is let go between batches, so VUs that finish
				// meanwhile become idle (and take starts) rather than
				// queue while new VUs are started in their place.
				ended, more = a.startDue(s)
				if more {
					a.mu.Unlock()
					a.mu.Lock()
				}
			}
		}
		a.mu.Unlock()
	}
	a.mu.Lock()
	a.done = true
	for _, v := range a.alive {
		close(v.jobs)
	}
	a.mu.Unlock()
	a.alarm.close()
	done := make(chan struct{})
	go func() { a.wg.Wait(); close(done) }()
	s.finish(s.graceDeadline(a.start.Add(a.sched.Duration())), done, a.cancelIt)
	a.pace.close() // every VU has exited
}

// startBatch bounds the starts the scheduler hands out per hold of mu.
const startBatch = 16

// startDue hands the starts now due, up to startBatch, to idle VUs, new
// VUs, or counts them dropped, and sets the alarm again unless more are
// due (more); ended is true when the schedule is over. It never blocks.
// mu held.
func (a *openGoroutines) startDue(s *scenarioRun) (ended, more bool) {
	now := time.Now()
	if end := a.start.Add(a.sched.Duration()); !now.Before(s.lateStartsEnd(end)) {
		a.next = dropRest(s, a.sched, a.next)
		return true, false
	}
	for n := 0; ; n++ {
		due, off, ok := a.nextStart()
		if !ok {
			if !now.Before(a.start.Add(a.sched.Duration())) {
				return true, false
			}
			break
		}
		if due.After(now) {
			break
		}
		if n == startBatch {
			return false, true
		}
		j := a.take(due)
		// The clock is read at each start, not once per wake-up: with
		// every start overdue, VUs that finish race the scheduler for
		// them, and a scheduler that drops faster takes more from them
		// (BenchmarkScheduler/past-due's dropped/op).
		switch v, by := a.assign(time.Now(), off, nil); by {
		case takerIdle:
			s.live.busy.Add(1)
			s.live.started.Add(1)
			v.jobs <- j // capacity 1 and the VU was idle: it is empty
		case takerNew:
			s.live.started.Add(1)
			a.spawnLocked(s, &j, nil)
		default:
			s.drop()
		}
	}
	a.arm()
	return false, false
}

// dropRest counts every iteration of sched from next on dropped, for a
// generator that fell so far behind that their time is past (see
// lateStartsEnd), and returns the schedule's end.
func dropRest(s *scenarioRun, sched schedule.Schedule, next int64) int64 {
	n := schedule.Remaining(sched, next)
	if n == 0 {
		return next
	}
	s.live.dropped.Add(n)
	if late, ok := s.gen.rec.(LateSink); ok {
		late.DroppedLate(s.name, n)
	} else {
		s.gen.rec.Dropped(s.name, n)
	}
	return next + n
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
