package lab

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/knee-dev/knee/analyze"
	"github.com/knee-dev/knee/report"
	"github.com/knee-dev/knee/runner"
	"github.com/knee-dev/knee/scenario"
	"github.com/knee-dev/knee/use"
)

// StepsOptions run a stepped test of the lab: a ramping-arrival-rate run
// whose stages are schedule.Steps (a 1 s jump, then a hold, per step), with
// USE sampling.
type StepsOptions struct {
	// Plan gives Start, Step, Steps, StepDuration (the hold), Jump
	// (analyze.DefaultJump) and Warmup; Offset must stay zero.
	Plan            analyze.StepPlan
	PreAllocatedVUs int // 0 means scenario.DefaultStepsPreAllocatedVUs
	MaxVUs          int // 0 means scenario.DefaultStepsMaxVUs
	Health          analyze.Health
	Thresholds      use.Thresholds // nil means use.DefaultThresholds()
	Probes          []use.Probe    // the target's; the machine and knee are always sampled

	Dir          string // the run directory to create
	TargetPID    int
	TargetCommit string
	Progress     io.Writer
	Live         bool
	Abort        <-chan struct{}
	Getenv       func(string) string
	Notes        []string
}

// stepsLoad is the scenario load of a lab plan.
func stepsLoad(p analyze.StepPlan, preAllocatedVUs, maxVUs int) scenario.Steps {
	return scenario.Steps{Start: p.Start, Step: p.Step, Count: p.Steps, Hold: p.StepDuration, PreAllocatedVUs: preAllocatedVUs, MaxVUs: maxVUs}
}

// RunSteps runs cfg, whose one scenario must be the stepped load of
// opt.Plan, with USE sampling into opt.Dir, then analyses it
// (analyze.Analyze) and writes the plots into the run directory. An
// interrupted run is analysed as far as it went.
func RunSteps(ctx context.Context, cfg *scenario.Config, opt StepsOptions) (*analyze.StepsResult, error) {
	if errs := analyze.ValidatePlan(opt.Plan); len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	res, err := runner.Execute(ctx, cfg, runner.Options{
		Dir:          opt.Dir,
		Progress:     opt.Progress,
		Live:         opt.Live,
		Abort:        opt.Abort,
		TargetPID:    opt.TargetPID,
		TargetCommit: opt.TargetCommit,
		Getenv:       opt.Getenv,
		Notes:        opt.Notes,
		Resources:    true,
		Probes:       opt.Probes,
	})
	if res == nil {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("stepped run (run directory %s): %w", res.Dir, err)
	}
	a, err := analyze.Analyze(res.Run, analyze.Options{Plan: &opt.Plan, Health: opt.Health, Samples: res.Resources, USEThresholds: opt.Thresholds})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", res.Dir, err)
	}
	out := a.Steps
	out.Dir, out.Summary = res.Dir, &res.Summary
	if res.Summary.Interrupted {
		out.Notes = append(out.Notes, "the run was interrupted: only the steps it reached are measured")
	}
	plots, err := report.WriteStepPlots(res.Dir, res.Run, out.CurveSummary)
	out.Plots = plots
	if err != nil {
		return out, err
	}
	return out, nil
}
