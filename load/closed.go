package load

import (
	"context"
	"sync"
	"time"

	"github.com/knee-dev/knee/load/schedule"
)

func (c ConstantVUs) newDriver() (driver, error) {
	return &closedVUs{steps: []schedule.VUStep{{At: 0, VUs: c.VUs}}, span: c.Duration, think: c.Think}, nil
}

func (c RampingVUs) newDriver() (driver, error) {
	steps, err := schedule.VUSteps(c.StartVUs, c.Stages)
	if err != nil {
		return nil, err
	}
	return &closedVUs{steps: steps, span: c.Span(), think: c.Think}, nil
}

// closedVUs drives the closed model: each active VU loops Do, then Think. The
// VU count follows steps; a VU that is ramped down finishes its iteration
// (it is not cut short) and skips its think time.
type closedVUs struct {
	steps []schedule.VUStep
	span  time.Duration
	think time.Duration

	wg sync.WaitGroup
}

func (l *closedVUs) offered(time.Duration) float64 { return 0 }

func (l *closedVUs) prepare(*scenarioRun) {}

func (l *closedVUs) run(s *scenarioRun, start time.Time) {
	s.live.start.Store(&start)
	// end stops starting iterations at the span's end or at a run stop.
	endAt := start.Add(l.span)
	end, cancelEnd := context.WithDeadline(s.stop, endAt)
	defer cancelEnd()
	iterCtx, cancelIterations := context.WithCancel(s.hard)
	defer cancelIterations()

	var active []chan struct{} // one ramp-down signal per active VU, newest last
	timer := newStoppedTimer()
	defer timer.Stop()
	for _, step := range l.steps {
		if !wait(timer, start.Add(step.At), end) {
			break
		}
		for len(active) < step.VUs {
			retire := make(chan struct{})
			active = append(active, retire)
			s.live.vus.Add(1)
			l.wg.Add(1)
			go l.vu(s, s.nextVUID(), iterCtx, end, endAt, retire)
		}
		for len(active) > step.VUs {
			close(active[len(active)-1])
			active = active[:len(active)-1]
		}
	}
	<-end.Done()
	done := make(chan struct{})
	go func() { l.wg.Wait(); close(done) }()
	s.finish(s.graceDeadline(endAt), done, cancelIterations)
}

// vu loops until the scenario ends or it is retired. Interval is the time
// between this VU's consecutive iteration starts; for its first iteration,
// which has no predecessor, it is the iteration's service time plus think.
func (l *closedVUs) vu(s *scenarioRun, id uint64, iterCtx, end context.Context, endAt time.Time, retire <-chan struct{}) {
	defer l.wg.Done()
	defer s.live.vus.Add(-1)
	shard := s.gen.rec.Shard()
	timer := newStoppedTimer()
	defer timer.Stop()
	self, _ := s.it.(SelfRecording)
	var prev time.Time
	for iter := uint64(0); ; iter++ {
		// Two lock-free checks: a select over both channels would lock
		// end's channel, which every VU shares, on every iteration.
		if end.Err() != nil {
			return
		}
		select {
		case <-retire:
			release(s, id)
			return
		default:
		}
		// The clock decides at the very end, not which of two timers due at
		// the same instant ran first.
		called := time.Now()
		if !called.Before(endAt) {
			return
		}
		s.live.busy.Add(1)
		s.live.started.Add(1)
		if self != nil {
			st := Start{Scenario: s.name, VU: id, Iter: iter, Called: called}
			if iter > 0 {
				st.Interval = called.Sub(prev)
			}
			self.DoRecord(iterCtx, st, shard)
		} else {
			res := stamp(s.it.Do(iterCtx, id, iter), called, time.Now())
			shard.Record(s.closedSample(res, called, prev, l.think))
		}
		s.live.busy.Add(-1)
		prev = called
		if l.think > 0 {
			timer.Reset(l.think)
			select {
			case <-timer.C:
			case <-end.Done():
				return
			case <-retire:
				release(s, id)
				return
			}
		}
	}
}
