package load

import (
	"context"
	"time"
)

// openLoop drives an open-model scenario whose Iteration offers a Loop
// (LoopIteration) from the scenario's one goroutine: it starts every due
// iteration on an idle VU, a new one while fewer than max are alive, or
// counts it dropped, exactly as openGoroutines does, and then waits on the Loop
// until the next intended start or until iterations end. No VU is a
// goroutine, so a stall that needs thousands of VUs leaves nothing of them
// behind but their ids, and no start is handed between goroutines. Which
// idle VU takes a start differs from openGoroutines, where a VU that finishes
// takes the next start itself: here the most recently idle one, but the one
// idle longest once it has been idle for the retire limit (see rotationDue).
//
// When the Loop cannot be made (NewLoop's error), the scenario runs on
// openGoroutines, with a goroutine per VU.
type openLoop struct {
	a  *openGoroutines // the schedule and the pool's bounds; and the fallback, which alone runs it
	it LoopIteration

	idleMax time.Duration // Options.RetireIdle, resolved
	slack   time.Duration // starts closer together share a wake-up

	busy   map[uint64]*loopVU // VUs inside an iteration, by id
	peak   int                // the most entries busy has had since it was made
	pool   poolPeak           // when the pool falls far below its peak (retire.go)
	idle   []*loopVU          // bottom (0) idle longest, top most recently
	parked []parkedVU         // retired VUs' identities, for reuse
	alive  int
	next   int64         // the next iteration neither started nor dropped
	prev   time.Duration // the offset of the one before next
	preVUs []*loopVU     // the pre-allocated VUs, made in prepare
	shard  ShardSink     // where the ended iterations are recorded
	ended  []Ended       // collect's buffer
}

// loopVU is one VU of the loop engine: an id, its iteration count, and,
// while busy, the intended start of its iteration.
type loopVU struct {
	id       uint64
	iter     uint64
	intended time.Time
	since    time.Time // when it last became idle
}

func (l *openLoop) prepare(s *scenarioRun) {
	l.idleMax = s.gen.opt.retireIdle()
	switch l.slack = s.gen.opt.TimerSlack; {
	case l.slack == 0:
		l.slack = DefaultTimerSlack
	case l.slack < 0:
		l.slack = 0 // the Loop's own wait is precise; no sharing of wake-ups
	}
	l.busy = make(map[uint64]*loopVU)
	now := time.Now()
	for range l.a.pre {
		l.preVUs = append(l.preVUs, &loopVU{id: s.nextVUID(), since: now})
	}
	l.idle = append(l.idle, l.preVUs...)
	l.alive = len(l.preVUs)
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
	l.drain(s, loop, s.graceDeadline(end))
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
		gap := off - l.prev
		l.retire(s, loop, now, idleLimit(l.idleMax, gap))
		l.prev = off
		var v *loopVU
		switch n := len(l.idle); {
		case n > 1 && rotationDue(l.idle[0].since, now, l.idleMax, gap):
			// The VU idle longest; retire, just above, has taken the
			// VUs beyond the pre-allocated ones idle for longer.
			v = l.idle[0]
			l.idle[0] = nil
			l.idle = l.idle[1:]
		case n > 0 || l.reap(s, loop):
			n = len(l.idle)
			v = l.idle[n-1]
			l.idle[n-1] = nil
			l.idle = l.idle[:n-1]
		case l.alive < l.a.max:
			v = l.spawn(s)
		default:
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

// spawn makes a new VU, taking over a retired one's identity if there is one.
func (l *openLoop) spawn(s *scenarioRun) *loopVU {
	v := &loopVU{}
	if n := len(l.parked); n > 0 {
		v.id, v.iter = l.parked[n-1].id, l.parked[n-1].iter
		l.parked = l.parked[:n-1]
	} else {
		v.id = s.nextVUID()
	}
	l.alive++
	l.pool.grew(l.alive)
	s.live.vus.Add(1)
	return v
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
		v.since = now
		l.idle = append(l.idle, v)
		s.live.busy.Add(-1)
	}
}

// retire retires the VUs idle for longer than the limit, longest idle
// first, while more than the pre-allocated ones are alive: the Loop lets go
// of what it holds for them and their identities are parked for reuse.
// Like openGoroutines, it runs at each start, up to retireBatch at a time.
func (l *openLoop) retire(s *scenarioRun, loop Loop, now time.Time, limit time.Duration) {
	if limit <= 0 {
		return
	}
	n := 0
	for ; n < retireBatch; n++ {
		if l.alive <= l.a.pre || len(l.idle) == 0 || now.Sub(l.idle[0].since) <= limit {
			break
		}
		v := l.idle[0]
		l.idle[0] = nil
		l.idle = l.idle[1:]
		loop.Release(v.id)
		l.parked = append(l.parked, parkedVU{v.id, v.iter})
		l.alive--
		s.live.vus.Add(-1)
	}
	if n > 0 {
		l.idle = shrink(l.idle)
		l.parked = shrink(l.parked)
		// Go's maps never shrink: the one a stall's thousands of busy
		// VUs grew is made again once it holds under a quarter of them.
		if b := len(l.busy); l.peak > minShrinkCap && b < l.peak/4 {
			busy := make(map[uint64]*loopVU, 2*b)
			for id, v := range l.busy {
				busy[id] = v
			}
			l.busy, l.peak = busy, 2*b
		}
		if l.pool.shrunk(l.alive) {
			s.shrunk()
		}
	}
}

// drain lets the iterations in flight end within the grace period, then
// cancels the rest and waits for them: the same two deadlines as finish.
func (l *openLoop) drain(s *scenarioRun, loop Loop, deadline time.Time) {
	for len(l.busy) > 0 && s.grace > 0 && s.hard.Err() == nil && time.Now().Before(deadline) {
		l.collect(s, loop, deadline)
	}
	if len(l.busy) > 0 {
		loop.Cancel()
	}
	for len(l.busy) > 0 {
		l.collect(s, loop, time.Time{})
	}
}

// fallback runs the scenario on openGoroutines, its VUs goroutines, taking over
// the identities of the pre-allocated VUs made in prepare.
func (l *openLoop) fallback(s *scenarioRun, start time.Time) {
	s.live.vus.Add(-int64(len(l.preVUs)))
	for i := len(l.preVUs) - 1; i >= 0; i-- {
		l.a.parked = append(l.a.parked, parkedVU{l.preVUs[i].id, 0})
	}
	l.a.prepare(s)
	l.a.run(s, start)
}
