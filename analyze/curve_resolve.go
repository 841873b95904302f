package analyze

import (
	"math"
	"time"

	"github.com/knee-dev/knee/rundir"
)

// ResolvePlan completes a step plan given in part:
//
//   - no plan (Start and Steps 0): run.json's own (PlanFromMeta), else the
//     one the offered rates show (InferPlan); Warmup and Scenario are kept;
//   - Start and StepDuration given: with fitJump, Jump is the one the
//     achieved rates fit best (FitJump); with Steps 0, the plan has as many
//     whole steps as the run holds (StepsIn).
//
// A whole plan with fitJump false comes back unchanged.
func ResolvePlan(r *rundir.Dir, p StepPlan, fitJump bool) (StepPlan, error) {
	if p.Start == 0 && p.Steps == 0 {
		if m, ok := PlanFromMeta(r, p.Scenario); ok {
			m.Warmup = p.Warmup
			return m, nil
		}
		return InferPlan(r, p.Scenario, p.Warmup)
	}
	if fitJump {
		p.Jump = FitJump(r, p, p.Steps == 0)
	}
	if p.Steps == 0 {
		p.Steps = StepsIn(r, p)
	}
	return p, nil
}

// StepsIn is how many whole steps of p (Steps ignored) the run holds: the
// steps that end by the end of its last interval, half an interval allowed
// for a timestamp grid the run's start did not fall on.
func StepsIn(r *rundir.Dir, p StepPlan) int {
	if len(r.Intervals) == 0 || p.Period() <= 0 {
		return 0
	}
	end := r.Intervals[len(r.Intervals)-1].End
	return max(0, int((end-p.Offset+typicalInterval(r)/2)/p.Period()))
}

// maxJumpIntervals bounds the jumps FitJump tries, in interval lengths.
const maxJumpIntervals = 10

// FitJump returns the jump (0, one interval, two, ... up to ten, and never
// as long as the hold) under which the run's achieved rates match p's
// offered rates best: the mean squared relative difference over the
// intervals that lie wholly inside a hold, its first interval left out. A
// stepped run that jumps at once
// (a 0 s stage) and one that ramps for a second to each rate differ in
// where every later step begins; a wrong jump shifts the steps by one jump
// more at every step. The first interval of a hold is left out because an
// imported run's interval grid starts at its first timestamp's whole
// second, not when the steps began: a k6 run that started 0.9 s into that
// second begins every step 0.9 s into an interval, which then holds 90 % of
// the step before (and a request's timestamp is when it ended, later
// still). Counting that interval made a 0 s jump look worse than a 1 s one.
// countSteps: p.Steps is unknown and taken from the data for every
// candidate. Ties (a flat plan) keep DefaultJump.
func FitJump(r *rundir.Dir, p StepPlan, countSteps bool) time.Duration {
	grain := typicalInterval(r)
	best, bestErr := DefaultJump, math.Inf(1)
	try := func(j time.Duration) {
		q := p
		q.Jump = j
		if countSteps {
			q.Steps = StepsIn(r, q)
		}
		e, n := rateMismatch(r, q, grain)
		if n == 0 {
			return
		}
		if e < bestErr-1e-12 || (math.Abs(e-bestErr) <= 1e-12 && j == DefaultJump) {
			best, bestErr = j, e
		}
	}
	try(DefaultJump)
	for k := 0; k <= maxJumpIntervals; k++ {
		if j := time.Duration(k) * grain; j < p.StepDuration && j != DefaultJump {
			try(j)
		}
	}
	return best
}

// rateMismatch is the mean squared relative difference between achieved and
// offered rate over the intervals wholly inside a hold of p but for its
// first grain, and their count.
func rateMismatch(r *rundir.Dir, p StepPlan, grain time.Duration) (float64, int) {
	const slack = 5 * time.Millisecond // interval bounds read back from an hlog are rounded
	var sum float64
	n := 0
	for _, iv := range r.Intervals {
		length := iv.End - iv.Start
		if length <= 0 {
			continue
		}
		i := int((iv.Start + length/2 - p.Offset) / p.Period())
		if iv.Start+length/2 < p.Offset || i >= p.Steps {
			continue
		}
		begin := p.Offset + time.Duration(i)*p.Period()
		if iv.Start < begin+p.Jump+grain-slack || iv.End > begin+p.Period()+slack {
			continue
		}
		offered := p.Rate(i)
		if offered <= 0 {
			continue
		}
		var requests int64
		for name, c := range iv.Counters {
			if inScenario(p.Scenario, name) {
				requests += c.Counters.Requests
			}
		}
		d := (float64(requests)/length.Seconds() - offered) / offered
		sum += d * d
		n++
	}
	if n == 0 {
		return 0, 0
	}
	return sum / float64(n), n
}
