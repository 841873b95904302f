package load

import (
	"context"
	"time"
)

// openLoop drives an open-model scenario whose Iteration offers a Loop
// (LoopIteration) from the scenario's one goroutine: it starts every due
// iteration on the VU its pool picks (vuPool: an idle VU, a new one while
// fewer than max are alive, or none, and the start is counted dropped), and
// then waits on the Loop until the next intended start or until iterations
// end. No VU is a goroutine, so a stall that needs thousands of VUs leaves
// nothing of them behind but their ids, and no start is handed between
// goroutines. Unlike openGoroutines, where a VU that finishes takes the
// next start itself, every start is the pool's pick.
//
// When the Loop cannot be made (NewLoop's error), the scenario runs on
// openGoroutines, with a goroutine per VU, and the VUs made in prepare
// hand their identities over to its pool.
type openLoop struct {
	vuPool[*loopVU]
	a  *openGoroutines // the schedule and the pool's bounds; and the fallback, which alone runs it
	it LoopIteration

	slack time.Duration // starts closer together share a wake-up

	busy  map[uint64]*loopVU // VUs inside an iteration, by id
	peak  int                // the most entries busy has had since it was made
	next  int64              // the next iteration neither started nor dropped
	shard ShardSink          // where the ended iterations are recorded
	ended []Ended            // collect's buffer
}

// loopVU is one VU of the loop engine: an id, its iteration count, and,
// while busy, the intended start of its iteration.
type loopVU struct {
	id       uint64
	iter     uint64
	intended time.Time
}

func (l *openLoop) prepare(s *scenarioRun) {
	l.vuPool = vuPool[*loopVU]{pre: l.a.pre, max: l.a.max}
	l.setUp(s)
	switch l.slack = s.gen.opt.TimerSlack; {
	case l.slack == 0:
		l.slack = DefaultTimerSlack
	case l.slack < 0:
		l.slack = 0 // the Loop's own wait is precise; no sharing of wake-ups
	}
	l.busy = make(map[uint64]*loopVU)
	now := time.Now()
	for range l.pre {
		id, iter := l.spawn()
		l.push(&loopVU{id: id, iter: iter}, now)
	}
	s.live.vus.Add(int64(l.alive))
}

func (l *openLoop) offered(elapsed time.Duration) float64 { return l.a.offered(elapsed) }

func (l *openLoop) run(s *scenarioRun, start time.Time) {
	loop, err := l.it.NewLoop()
	if err != nil {
		l.fallback(s, start)
		return
	}
	defer loop.Close() //nolint:errcheck // nothing is in flight: every iteration ended below
	s.live.start.Store(&start)
	unwatchStop := context.AfterFunc(s.stop, loop.Wake)
	defer unwatchStop()
	unwatchHard := context.AfterFunc(s.hard, loop.Wake)
	defer unwatchHard()
	l.letGo = func(gone []*loopVU) { l.retired(s, loop, gone) }

	l.shard, l.ended = s.gen.rec.Shard(), make([]Ended, 0, 64)
	end := start.Add(l.a.sched.Duration())
	var batch time.Time // when the last starts were made
	for s.stop.Err() == nil {
		now := time.Now()
		if !now.Before(s.lateStartsEnd(end)) {
			l.next = dropRest(s, l.a.sched, l.next)
			break
		}
		due, ok, started := l.startDue(s, loop, start, now)
		if started {
			batch = now
		}
		if !ok && !now.Before(end) {
			break
		}
		if !ok {
			due = end
		}
		// Starts closer together than the slack share one wake-up, each
		// still timed from its own intended start: the next start waits
		// for the slack after the last ones made. Wake-ups for iterations
		// that end do not count; they make no start.
		if earliest := batch.Add(l.slack); due.Before(earliest) {
			due = earliest
		}
		l.collect(s, loop, due)
	}
	drainLoop(s, loop, s.graceDeadline(end), func() int { return len(l.busy) },
		func(until time.Time) { l.collect(s, loop, until) })
	// The VUs alive at the end are not released one by one: Close lets go
	// of everything.
	s.live.vus.Add(-int64(l.alive))
}

// lateCheckEvery is how many overdue starts startDue makes between looks at
// the clock: a time.Now per 64 starts is nothing beside the starts.
const lateCheckEvery = 64

// startDue starts (or drops) every iteration due by now and returns when
// the next one is due, ok false when the schedule has no more; started is
// true when it made or dropped any start. A generator far behind its
// schedule looks at the clock every lateCheckEvery starts and returns (due
// now) once the late starts' end has passed, for run to drop the rest.
func (l *openLoop) startDue(s *scenarioRun, loop Loop, start, now time.Time) (next time.Time, ok, started bool) {
	lateEnd := s.lateStartsEnd(start.Add(l.a.sched.Duration()))
	reap := func() bool { return l.reap(s, loop) }
	for n := 0; ; n, started = n+1, true {
		off, more := l.a.sched.Offset(l.next)
		if !more {
			return time.Time{}, false, started
		}
		due := start.Add(off)
		if due.After(now) {
			return due, true, started
		}
		if n%lateCheckEvery == lateCheckEvery-1 {
			if t := time.Now(); !t.Before(lateEnd) {
				return t, true, started
			}
		}
		l.next++
		v, by := l.assign(now, off, reap)
		switch by {
		case takerNew:
			id, iter := l.spawn()
			v = &loopVU{id: id, iter: iter}
			s.live.vus.Add(1)
		case takerNone:
			s.drop()
			continue
		}
		v.intended = due
		l.busy[v.id] = v
		l.peak = max(l.peak, len(l.busy))
		s.live.busy.Add(1)
		s.live.started.Add(1)
		loop.Start(v.id, v.iter)
	}
}

// reap records the iterations that have ended but that the Loop has not
// returned yet (it may sleep through ends to wake once per start; see
// Loop.Wait), and reports whether a VU is idle now: a start that finds
// none looks there before it makes a VU, which would open a connection.
func (l *openLoop) reap(s *scenarioRun, loop Loop) bool {
	l.collect(s, loop, time.Now())
	return len(l.idle) > 0
}

// collect waits on the Loop until until (see Loop.Wait) and records what
// has ended.
func (l *openLoop) collect(s *scenarioRun, loop Loop, until time.Time) {
	l.ended = loop.Wait(until, l.ended[:0])
	l.record(s, l.ended)
}

// record records the ended iterations and makes their VUs idle.
func (l *openLoop) record(s *scenarioRun, ended []Ended) {
	if len(ended) == 0 {
		return
	}
	now := time.Now()
	for _, e := range ended {
		v := l.busy[e.VU]
		if v == nil {
			continue // not ours: a Loop bug, but never a panic mid-run
		}
		delete(l.busy, e.VU)
		l.shard.Record(s.openSample(stamp(e.Result, now, now), v.intended))
		v.iter++
		l.push(v, now)
		s.live.busy.Add(-1)
	}
}

// retired lets go of the VUs the pool retired (its letGo): the Loop frees
// what it holds for them and their identities are parked for reuse.
func (l *openLoop) retired(s *scenarioRun, loop Loop, gone []*loopVU) {
	for _, v := range gone {
		loop.Release(v.id)
		l.park(v.id, v.iter)
	}
	s.live.vus.Add(-int64(len(gone)))
	// Go's maps never shrink: the one a stall's thousands of busy VUs
	// grew is made again once it holds under a quarter of them.
	if b := len(l.busy); l.peak > minShrinkCap && b < l.peak/4 {
		busy := make(map[uint64]*loopVU, 2*b)
		for id, v := range l.busy {
			busy[id] = v
		}
		l.busy, l.peak = busy, 2*b
	}
}

// drainLoop lets the iterations in flight on loop end within the grace
// period, until deadline, then cancels the rest and waits for them: the
// same two deadlines as finish, for both models' loop engines. busy is how
// many are in flight; collect waits on loop until its until (zero: no
// limit) and records what has ended.
func drainLoop(s *scenarioRun, loop Loop, deadline time.Time, busy func() int, collect func(until time.Time)) {
	for busy() > 0 && s.grace > 0 && s.hard.Err() == nil && time.Now().Before(deadline) {
		collect(deadline)
	}
	if busy() > 0 {
		loop.Cancel()
	}
	for busy() > 0 {
		collect(time.Time{})
	}
}

// fallback runs the scenario on openGoroutines, its VUs goroutines, taking over
// the identities of the pre-allocated VUs made in prepare.
func (l *openLoop) fallback(s *scenarioRun, start time.Time) {
	s.live.vus.Add(-int64(l.alive))
	l.a.adopt(l.handOver(func(v *loopVU) parkedVU { return parkedVU{v.id, v.iter} }))
	l.a.prepare(s)
	l.a.run(s, start)
}
