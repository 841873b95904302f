package analyze

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/knee-dev/knee/rundir"
)

// PlanGiven names the fields of a step plan its user gave (knee curve's
// flags set on the command line); the others hold defaults.
type PlanGiven struct{ Start, Step, Steps, StepDuration, Jump, Warmup bool }

// ResolvePlan completes a step plan given in part. given nil: p is as its
// caller made it, nothing fitted:
//
//   - no plan (Start and Steps 0): the one run.json's stages describe
//     (PlanFromMeta), else the one the offered rates show (InferPlan);
//     Warmup and Scenario are kept;
//   - Steps 0: as many whole steps as the run holds (StepsIn).
//
// given set (knee curve's flags): a run that stored the plan it was made
// by (knee steps, StoredPlan) is measured by that plan, warmup included;
// a flag given overrides --warmup and may ask for fewer --steps, and one
// that contradicts the run (another start, step, step duration or jump,
// more steps than it made) is an error naming both. Otherwise p is
// checked (ValidatePartialPlan) and completed as above, its jump read from
// the data (FitJump) unless given, and a warmup as long as the steps it
// finds is an error naming where their length came from.
func ResolvePlan(r *rundir.Dir, p StepPlan, given *PlanGiven) (StepPlan, error) {
	if given != nil {
		if s, ok := StoredPlan(r, p.Scenario); ok {
			return overStored(s, p, *given)
		}
		if errs := ValidatePartialPlan(p); len(errs) > 0 {
			return StepPlan{}, errors.Join(errs...)
		}
	}
	if p.Start == 0 && p.Steps == 0 {
		from := "the stages in run.json"
		m, ok := PlanFromMeta(r, p.Scenario)
		if !ok {
			var err error
			if m, err = InferPlan(r, p.Scenario, p.Warmup); err != nil {
				return StepPlan{}, err
			}
			from = "the rates the run offered"
		}
		m.Warmup = p.Warmup
		if given != nil && m.Warmup >= m.StepDuration {
			flag := "--warmup"
			if !given.Warmup {
				flag = "the default --warmup"
			}
			return StepPlan{}, fmt.Errorf("%s %v leaves nothing of this run's %v steps (read from %s) to measure; give a --warmup shorter than %v",
				flag, m.Warmup, m.StepDuration, from, m.StepDuration)
		}
		return m, nil
	}
	if given != nil && !given.Jump {
		p.Jump = FitJump(r, p, p.Steps == 0)
	}
	if p.Steps == 0 {
		p.Steps = StepsIn(r, p)
	}
	return p, nil
}

// StoredPlan is the plan a knee stepped run stored in run.json (knee steps,
// knee lab curve), when it is one of scenario's ("" asks for any).
func StoredPlan(r *rundir.Dir, scenario string) (StepPlan, bool) {
	s := r.Meta.StepPlan
	if s == nil || (scenario != "" && s.Scenario != "" && s.Scenario != scenario) {
		return StepPlan{}, false
	}
	p := StepPlan{Start: s.Start, Step: s.Step, Steps: s.Steps, StepDuration: s.StepDuration, Jump: s.Jump, Warmup: s.Warmup, Scenario: s.Scenario}
	if scenario != "" {
		p.Scenario = scenario
	}
	return p, true
}

// overStored is the run's stored plan s with the fields of p its user gave:
// --warmup replaces s's, --steps may be fewer; any other field given must
// be s's own, as the run was made by s.
func overStored(s, p StepPlan, g PlanGiven) (StepPlan, error) {
	desc := fmt.Sprintf("run.json: %d steps from %g req/s by %g, each a %v jump and a %v hold, %v warmup",
		s.Steps, s.Start, s.Step, s.Jump, s.StepDuration, s.Warmup)
	var errs []error
	conflict := func(flag string, given, own any) {
		errs = append(errs, fmt.Errorf("%s %v conflicts with the plan this run was made by (%s %v); leave %s out", flag, given, flag, own, flag))
	}
	if g.Start && p.Start != s.Start {
		conflict("--start", p.Start, s.Start)
	}
	if g.Step && p.Step != s.Step {
		conflict("--step", p.Step, s.Step)
	}
	if g.StepDuration && p.StepDuration != s.StepDuration {
		conflict("--step-duration", p.StepDuration, s.StepDuration)
	}
	if g.Jump && p.Jump != s.Jump {
		conflict("--jump", p.Jump, s.Jump)
	}
	if g.Steps && p.Steps > s.Steps {
		errs = append(errs, fmt.Errorf("--steps %d: the run made only %d steps; give at most --steps %d", p.Steps, s.Steps, s.Steps))
	}
	if len(errs) > 0 {
		return StepPlan{}, fmt.Errorf("%w (%s)", errors.Join(errs...), desc)
	}
	if g.Steps {
		s.Steps = p.Steps
	}
	if g.Warmup {
		s.Warmup = p.Warmup
	}
	if errs := ValidatePlan(s); len(errs) > 0 {
		return StepPlan{}, fmt.Errorf("%w (the run's own plan, %s)", errors.Join(errs...), desc)
	}
	return s, nil
}

// StepsIn is how many whole steps of p (Steps ignored) the run holds: the
// steps that end by the end of its last interval, half an interval allowed
// for a timestamp grid the run's start did not fall on.
func StepsIn(r *rundir.Dir, p StepPlan) int {
	if len(r.Intervals) == 0 || p.Period() <= 0 {
		return 0
	}
	end := r.Intervals[len(r.Intervals)-1].End
	return max(0, int((end-p.Offset+nominalInterval(r)/2)/p.Period()))
}

// maxJumpIntervals bounds the jumps FitJump tries, in interval lengths.
const maxJumpIntervals = 10

// FitJump returns the jump (0, one interval, two, ... up to ten, and never
// as long as the hold) under which the run's achieved rates match p's
// offered rates best: the mean squared relative difference (capped, see
// mismatchCap) over the intervals that lie wholly inside a hold, its first
// interval left out. A
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
	grain := nominalInterval(r)
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

// mismatchCap is the most an interval's relative difference counts for in
// rateMismatch. A step the target could not keep up with (a collapse:
// 40 req/s of 300) is far off under every jump, and most under the right
// one, whose holds lie wholly in it; uncapped, it outweighed every healthy
// step and a run with 1 s ramps fitted a 0 s jump. Capped, each interval
// votes for the jumps under which it is within 10 % of its offered rate.
const mismatchCap = 0.1

// rateMismatch is the mean squared relative difference between achieved and
// offered rate, each capped at mismatchCap², over the intervals wholly
// inside a hold of p but for its first grain, and their count.
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
		sum += min(d*d, mismatchCap*mismatchCap)
		n++
	}
	if n == 0 {
		return 0, 0
	}
	return sum / float64(n), n
}
