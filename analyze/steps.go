package analyze

import (
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/knee-dev/knee/rundir"
	"github.com/knee-dev/knee/use"
)

// rampingArrivalRate is the executor name run.json gives a stepped run
// (scenario.RampingArrivalRate; a test keeps the two equal).
const rampingArrivalRate = "ramping-arrival-rate"

// StepsResult is what a stepped run says: the curve (plan, steps, knee,
// collapse, USL fit, capacity, flattened into the same JSON object), the
// USE table of the whole run and of each step, and the verdict. JSON names
// are the --summary-export ones of knee steps and knee curve.
type StepsResult struct {
	Dir string `json:"dir,omitempty"`
	CurveSummary
	USE        *use.Table   `json:"use"`        // null when no resource was sampled
	StepUSE    []use.Table  `json:"step_use"`   // one per step, in step order
	Bottleneck *use.Verdict `json:"bottleneck"` // null when no resource was sampled
	// Then lists the other resources of the target in the order they
	// saturated after the bottleneck, each at its first step, with evidence:
	// how the saturation spread (a slow database fills the pool).
	Then    []string        `json:"then,omitempty"`
	Plots   []string        `json:"plots,omitempty"`
	Notes   []string        `json:"notes,omitempty"`
	Summary *rundir.Summary `json:"summary,omitempty"` // the whole run, when this process ran it
}

// ValidatePlan reports every problem of a stepped test's plan, by the flag
// name every command that takes a plan uses, before any load starts.
func ValidatePlan(p StepPlan) []error {
	var errs []error
	if p.Steps <= 0 {
		errs = append(errs, fmt.Errorf("--steps %d: must be positive", p.Steps))
	}
	if p.Start <= 0 {
		errs = append(errs, fmt.Errorf("--start %g: must be a positive rate in req/s", p.Start))
	}
	if p.Step < 0 {
		errs = append(errs, fmt.Errorf("--step %g: must not be negative (the curve is measured going up)", p.Step))
	}
	if p.StepDuration <= 0 {
		errs = append(errs, fmt.Errorf("--step-duration %s: must be positive, e.g. 20s", p.StepDuration))
	}
	if p.Jump < 0 {
		errs = append(errs, fmt.Errorf("--jump %s: must not be negative (0s: the rate changes at once)", p.Jump))
	}
	if p.Warmup < 0 {
		errs = append(errs, fmt.Errorf("--warmup %s: must not be negative", p.Warmup))
	}
	if p.StepDuration > 0 && p.Warmup >= p.StepDuration {
		errs = append(errs, fmt.Errorf("--warmup %s leaves nothing of a %s step to measure; make it shorter than --step-duration", p.Warmup, p.StepDuration))
	}
	return errs
}

// ValidatePartialPlan is ValidatePlan for a plan ResolvePlan completes from
// the run (knee curve's): with neither Start nor Steps the whole plan is
// read from the run, so only the warmup is checked; with Start and no
// Steps the count comes from the data and the rest is checked.
func ValidatePartialPlan(p StepPlan) []error {
	if p.Steps == 0 && p.Start == 0 {
		if p.Warmup < 0 {
			return []error{fmt.Errorf("--warmup %s: must not be negative", p.Warmup)}
		}
		return nil
	}
	if p.Steps == 0 {
		p.Steps = 1 // counted from the data
	}
	return ValidatePlan(p)
}

// ValidateGivenPlan is ValidatePlan for the fields of p its user gave
// alone, for a run directory that may hold the plan it was made by
// (ResolvePlan completes and checks the rest): the fields not given are
// set to values ValidatePlan accepts, so only the given ones can fail;
// the warmup is checked against the step duration when both are given.
func ValidateGivenPlan(p StepPlan, g PlanGiven) []error {
	if !g.Start {
		p.Start = 1
	}
	if !g.Steps || p.Steps == 0 {
		p.Steps = 1 // 0: counted from the data
	}
	if !g.Step {
		p.Step = 0
	}
	if !g.Jump {
		p.Jump = 0
	}
	if !g.Warmup {
		p.Warmup = 0
	}
	if !g.StepDuration {
		p.StepDuration = max(p.Warmup, 0) + time.Second
	}
	return ValidatePlan(p)
}

// AnalyzeSteps reads a stepped run: the curve by plan (resolved by
// ResolvePlan when given in part), then, when samples are given, the USE
// table of the whole run and of each step's measured part, and the verdict
// over them (use.JudgeSteps; nil thresholds are use's defaults).
func AnalyzeSteps(r *rundir.Dir, samples []use.Sample, plan StepPlan, h Health, t use.Thresholds) (*StepsResult, error) {
	plan, err := ResolvePlan(r, plan, nil)
	if err != nil {
		return nil, err
	}
	cs, err := SummarizeCurve(r, plan, h)
	if err != nil {
		return nil, err
	}
	out := &StepsResult{CurveSummary: cs}
	if len(samples) == 0 {
		out.Notes = append(out.Notes, "no USE samples (resources.jsonl): the bottleneck was not measured")
		return out, nil
	}
	whole := use.Summarize(samples, 0, 0)
	whole.Label = "USE table, whole run"
	out.USE = &whole
	out.StepUSE = StepTables(samples, cs.Steps)
	v := use.JudgeSteps(out.StepUSE, t)
	out.Bottleneck = &v
	out.Then = use.Spread(out.StepUSE, t, v.Bottleneck)
	return out, nil
}

// PlanFromMeta reads the step plan of a knee stepped run from run.json: a
// ramping-arrival-rate scenario (the one named, or the only one) whose
// stages are those of schedule.Steps, a 1 s jump then an equal hold per
// step, at evenly spaced rates. ok is false for any other run.
func PlanFromMeta(r *rundir.Dir, scenarioName string) (StepPlan, bool) {
	var sc *rundir.Scenario
	for i, s := range r.Meta.Scenarios {
		if scenarioName == "" && len(r.Meta.Scenarios) == 1 || s.Name == scenarioName {
			sc = &r.Meta.Scenarios[i]
		}
	}
	if sc == nil || sc.Executor != rampingArrivalRate || sc.StartTime != 0 {
		return StepPlan{}, false
	}
	var cfg struct {
		TimeUnit string `json:"timeUnit"`
		Stages   []struct {
			Duration string  `json:"duration"`
			Target   float64 `json:"target"`
		} `json:"stages"`
	}
	if err := json.Unmarshal(sc.Config, &cfg); err != nil || len(cfg.Stages) < 2 || len(cfg.Stages)%2 != 0 {
		return StepPlan{}, false
	}
	unit, err := time.ParseDuration(cfg.TimeUnit)
	if err != nil || unit <= 0 {
		return StepPlan{}, false
	}
	perSec := float64(time.Second) / float64(unit)
	var rates []float64
	var hold time.Duration
	for i := 0; i < len(cfg.Stages); i += 2 {
		jump, err1 := time.ParseDuration(cfg.Stages[i].Duration)
		h, err2 := time.ParseDuration(cfg.Stages[i+1].Duration)
		if err1 != nil || err2 != nil || jump != DefaultJump || (i > 0 && h != hold) || h <= 0 ||
			cfg.Stages[i].Target != cfg.Stages[i+1].Target {
			return StepPlan{}, false
		}
		hold = h
		rates = append(rates, cfg.Stages[i].Target*perSec)
	}
	if rates[0] <= 0 {
		return StepPlan{}, false
	}
	plan := StepPlan{Start: rates[0], Steps: len(rates), StepDuration: hold, Jump: DefaultJump, Scenario: scenarioName}
	if len(rates) > 1 {
		plan.Step = rates[1] - rates[0]
	}
	for i, rate := range rates {
		if math.Abs(rate-plan.Rate(i)) > 1e-9*math.Max(1, rate) {
			return StepPlan{}, false
		}
	}
	return plan, true
}

// StepTables summarises the samples of each step's measured part. A sample
// taken at t holds the rates of the second before it, so a step measured
// over [from, to) is read from the samples in [from+1s, to+1s).
func StepTables(samples []use.Sample, steps []Step) []use.Table {
	out := make([]use.Table, len(steps))
	for i, s := range steps {
		shift := use.DefaultInterval
		out[i] = use.Summarize(samples, s.From+shift, s.To+shift)
		out[i].Label = fmt.Sprintf("step %d: %.4g req/s", s.Index+1, s.OfferedRate)
	}
	return out
}
