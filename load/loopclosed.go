package load

import (
	"context"
	"time"
)

// closedLoop drives a closed-model scenario whose Iteration offers a Loop
// (LoopIteration) from the scenario's one goroutine, as openLoop does the
// open model: every active VU starts its next iteration when its last one
// has ended and its think time has passed, exactly as closedVUs' goroutines
// do, but a VU is an id and its connection, and an iteration's end and the
// next start are one event on one thread, not a goroutine woken through the
// runtime's netpoller. The Loop returns on every end (Loop.WakeOnEnds).
//
// When the Loop cannot be made (NewLoop's error), closedVUs runs the
// scenario with a goroutine per VU.
type closedLoop struct {
	c  *closedVUs // the steps, span and think time; and the fallback
	it LoopIteration

	loop     Loop
	shard    ShardSink
	vus      map[uint64]*closedLoopVU // the VUs alive, by id
	active   []*closedLoopVU          // the VUs not ramped down, newest last
	thinking []*closedLoopVU          // the VUs in their think time, soonest first (one think time for all)
	busy     int
	ended    []Ended
}

// closedLoopVU is one VU of the closed loop.
type closedLoopVU struct {
	id, iter     uint64
	called, prev time.Time // when this iteration started, and the last one
	busy         bool      // inside an iteration
	retired      bool      // ramped down: released when its iteration ends
	thinkUntil   time.Time
}

func (l *closedLoop) offered(time.Duration) float64 { return 0 }

func (l *closedLoop) prepare(*scenarioRun) {}

func (l *closedLoop) run(s *scenarioRun, start time.Time) {
	loop, err := l.it.NewLoop()
	if err != nil {
		l.c.run(s, start)
		return
	}
	defer loop.Close() //nolint:errcheck // nothing is in flight: every iteration ended below
	loop.WakeOnEnds()
	s.live.start.Store(&start)
	unwatchStop := context.AfterFunc(s.stop, loop.Wake)
	defer unwatchStop()
	unwatchHard := context.AfterFunc(s.hard, loop.Wake)
	defer unwatchHard()
	l.loop, l.shard, l.vus, l.ended = loop, s.gen.rec.Shard(), map[uint64]*closedLoopVU{}, make([]Ended, 0, 64)

	endAt := start.Add(l.c.span)
	steps := l.c.steps
	for s.stop.Err() == nil {
		now := time.Now()
		if !now.Before(endAt) {
			break
		}
		for len(steps) > 0 && !start.Add(steps[0].At).After(now) {
			l.resize(s, steps[0].VUs, endAt)
			steps = steps[1:]
		}
		for len(l.thinking) > 0 && !l.thinking[0].thinkUntil.After(now) {
			v := l.thinking[0]
			l.thinking[0] = nil
			l.thinking = l.thinking[1:]
			if !v.retired {
				l.start(s, v, endAt)
			}
		}
		wake := endAt
		if len(steps) > 0 {
			wake = minTime(wake, start.Add(steps[0].At))
		}
		if len(l.thinking) > 0 {
			wake = minTime(wake, l.thinking[0].thinkUntil)
		}
		l.collect(s, wake, endAt)
	}
	// No VU starts again from here (collect's endAt is zero).
	drainLoop(s, loop, s.graceDeadline(endAt), func() int { return l.busy },
		func(until time.Time) { l.collect(s, until, time.Time{}) })
	s.live.vus.Add(-int64(len(l.vus)))
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// resize makes n VUs active: new ones start at once; the newest go first
// when there are too many, a busy one once its iteration has ended
// (it is not cut short, and skips its think time), a thinking one now.
func (l *closedLoop) resize(s *scenarioRun, n int, endAt time.Time) {
	for len(l.active) < n {
		v := &closedLoopVU{id: s.nextVUID()}
		l.active = append(l.active, v)
		l.vus[v.id] = v
		s.live.vus.Add(1)
		l.start(s, v, endAt)
	}
	for len(l.active) > n {
		v := l.active[len(l.active)-1]
		l.active[len(l.active)-1] = nil
		l.active = l.active[:len(l.active)-1]
		v.retired = true
		if !v.busy {
			l.release(s, v) // thinking: the queue skips it
		}
	}
}

// start begins v's next iteration, unless the span is over.
func (l *closedLoop) start(s *scenarioRun, v *closedLoopVU, endAt time.Time) {
	// The clock decides at the very end, as closedVUs' does.
	called := time.Now()
	if !called.Before(endAt) || s.stop.Err() != nil {
		return
	}
	v.called, v.busy = called, true
	l.busy++
	s.live.busy.Add(1)
	s.live.started.Add(1)
	l.loop.Start(v.id, v.iter)
}

// release lets go of a ramped-down VU's connection and identity.
func (l *closedLoop) release(s *scenarioRun, v *closedLoopVU) {
	delete(l.vus, v.id)
	l.loop.Release(v.id)
	s.live.vus.Add(-1)
}

// collect waits on the Loop until until (zero: no limit) and records what
// has ended, as closedVUs records a sample; each VU then thinks, or starts
// again at once while the span (endAt; zero: over) lasts.
func (l *closedLoop) collect(s *scenarioRun, until, endAt time.Time) {
	l.ended = l.loop.Wait(until, l.ended[:0])
	if len(l.ended) == 0 {
		return
	}
	now := time.Now()
	think := l.c.think
	for _, e := range l.ended {
		v := l.vus[e.VU]
		if v == nil || !v.busy {
			continue // not ours: a Loop bug, but never a panic mid-run
		}
		l.shard.Record(s.closedSample(stamp(e.Result, v.called, now), v.called, v.prev, think))
		v.busy, v.prev = false, v.called
		v.iter++
		l.busy--
		s.live.busy.Add(-1)
		switch {
		case v.retired:
			l.release(s, v)
		case endAt.IsZero():
		case think > 0:
			v.thinkUntil = time.Now().Add(think)
			l.thinking = append(l.thinking, v)
		default:
			l.start(s, v, endAt)
		}
	}
}
