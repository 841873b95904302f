package analyze

import (
	"fmt"
	"math"
	"time"

	"github.com/knee-dev/knee/rundir"
)

// hold is a run of consecutive intervals that offered the same rate.
type hold struct {
	start, end time.Duration
	rate       float64
	intervals  int
}

// InferPlan reads the step plan of a stepped run from the target_rate its
// counters carry per interval (summed over the scenario's counters, or all
// when scenario is ""). Holds are runs of two or more intervals at one
// positive rate; shorter runs are jumps between them. The holds must be
// evenly spaced in rate (within 1 % of a step). The plan's period is the
// span of all holds divided by their count, rounded to whole intervals;
// Jump is DefaultJump and warmup is passed through.
func InferPlan(r *rundir.Dir, scenario string, warmup time.Duration) (StepPlan, error) {
	holds := findHolds(r, scenario)
	if len(holds) == 0 {
		return StepPlan{}, fmt.Errorf("analyze: infer step plan: no interval carries a target rate held for two intervals: %w", ErrNoSteps)
	}
	n := len(holds)
	plan := StepPlan{
		Start:    holds[0].rate,
		Steps:    n,
		Jump:     DefaultJump,
		Warmup:   warmup,
		Offset:   holds[0].start,
		Scenario: scenario,
	}
	if n > 1 {
		plan.Step = (holds[n-1].rate - holds[0].rate) / float64(n-1)
	}
	tolerance := 0.01 * math.Max(math.Abs(plan.Step), plan.Start)
	for i, h := range holds {
		if math.Abs(h.rate-plan.Rate(i)) > tolerance {
			return StepPlan{}, fmt.Errorf("analyze: infer step plan: hold %d offers %g req/s, an even plan would offer %g; pass the plan explicitly", i, h.rate, plan.Rate(i))
		}
	}
	span := holds[n-1].end - holds[0].start
	period := roundTo(span/time.Duration(n), nominalInterval(r))
	plan.StepDuration = period - plan.Jump
	if plan.StepDuration <= 0 {
		return StepPlan{}, fmt.Errorf("analyze: infer step plan: steps of %v are no longer than the %v jump", period, plan.Jump)
	}
	return plan, nil
}

// findHolds groups consecutive intervals by offered rate and keeps the runs
// of two or more intervals. Neighbouring holds at one rate are joined: a
// one-interval blip between them does not split a step.
func findHolds(r *rundir.Dir, scenario string) []hold {
	var runs []hold
	for _, iv := range r.Intervals {
		rate := 0.0
		for name, c := range iv.Counters {
			if inScenario(scenario, name) {
				rate += c.TargetRate
			}
		}
		if k := len(runs) - 1; k >= 0 && sameRate(runs[k].rate, rate) && adjacent(runs[k].end, iv.Start) {
			runs[k].end = iv.End
			runs[k].intervals++
			continue
		}
		runs = append(runs, hold{start: iv.Start, end: iv.End, rate: rate, intervals: 1})
	}
	var holds []hold
	for _, h := range runs {
		if h.rate <= 0 || h.intervals < 2 {
			continue
		}
		if k := len(holds) - 1; k >= 0 && sameRate(holds[k].rate, h.rate) {
			holds[k].end = h.end
			holds[k].intervals += h.intervals
			continue
		}
		holds = append(holds, h)
	}
	return holds
}

// sameRate tells one offered rate from another. A run's per-interval offered
// rate is a count of due iterations over an interval whose length jitters by
// a few milliseconds, so a constant 100/s reads 99..101: within 2 % or 2/s
// is the same rate. Steps closer than that cannot be told apart.
// adjacent: an interval read back from an hlog has its start and length
// rounded to the millisecond, so one interval's end and the next one's start
// can differ by a millisecond or two.
func adjacent(end, start time.Duration) bool {
	d := end - start
	return d >= -5*time.Millisecond && d <= 5*time.Millisecond
}

func sameRate(a, b float64) bool {
	return math.Abs(a-b) <= math.Max(2, 0.02*math.Max(math.Abs(a), math.Abs(b)))
}

func roundTo(d, grain time.Duration) time.Duration {
	if grain <= 0 {
		return d
	}
	return (d + grain/2) / grain * grain
}
