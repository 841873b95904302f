package runner

import (
	"context"
	"errors"
	"fmt"

	"github.com/knee-dev/knee/analyze"
	"github.com/knee-dev/knee/rundir"
	"github.com/knee-dev/knee/scenario"
	"github.com/knee-dev/knee/use"
)

// StepsOptions are a stepped run's: the run's Options (Resources is always
// on) and the plan its steps are measured by.
type StepsOptions struct {
	Options
	// Plan gives Start, Step, Steps, StepDuration (the hold), Jump and
	// Warmup; it must be the plan cfg's stepped scenario was built from.
	Plan       analyze.StepPlan
	Health     analyze.Health
	Thresholds use.Thresholds // of the USE verdict; nil means use's defaults
}

// Steps runs cfg, whose stepped scenario follows opt.Plan, with USE
// sampling (opt.Plan goes into run.json, for knee curve), then measures it (analyze.Analyze): the curve, its knee and
// collapse, the USE tables and the bottleneck. The result carries the run
// directory and its summary; an interrupted run is measured as far as it
// went, and says so in its notes. run is the directory read back, for the
// plots (report.WriteStepPlots), which are its callers' to write.
//
// An error means there is nothing to report: the plan or cfg was wrong,
// the run failed, or it reached no step to measure.
func Steps(ctx context.Context, cfg *scenario.Config, opt StepsOptions) (steps *analyze.StepsResult, run *rundir.Dir, err error) {
	if errs := analyze.ValidatePlan(opt.Plan); len(errs) > 0 {
		return nil, nil, errors.Join(errs...)
	}
	o := opt.Options
	o.Resources = true
	p := opt.Plan
	o.StepPlan = &rundir.StepPlan{Scenario: p.Scenario, Start: p.Start, Step: p.Step, Steps: p.Steps,
		StepDuration: p.StepDuration, Jump: p.Jump, Warmup: p.Warmup}
	res, err := Execute(ctx, cfg, o)
	if res == nil {
		return nil, nil, err
	}
	if err != nil {
		return nil, nil, fmt.Errorf("stepped run (run directory %s): %w", res.Dir, err)
	}
	a, err := analyze.Analyze(res.Run, analyze.Options{Plan: &opt.Plan, Health: opt.Health, Samples: res.Resources, USEThresholds: opt.Thresholds})
	if err == nil && a.Steps == nil {
		err = a.NoSteps
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", res.Dir, err)
	}
	out := a.Steps
	out.Dir, out.Summary = res.Dir, &res.Summary
	if res.Summary.Interrupted {
		out.Notes = append(out.Notes, "the run was interrupted: only the steps it reached are measured")
	}
	return out, res.Run, nil
}
