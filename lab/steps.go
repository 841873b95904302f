package lab

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/knee-dev/knee/analyze"
	"github.com/knee-dev/knee/load"
	"github.com/knee-dev/knee/load/schedule"
	"github.com/knee-dev/knee/report"
	"github.com/knee-dev/knee/rundir"
	"github.com/knee-dev/knee/runner"
	"github.com/knee-dev/knee/scenario"
	"github.com/knee-dev/knee/use"
)

// StepsOptions run a stepped test: a ramping-arrival-rate run whose stages
// are schedule.Steps (a 1 s jump, then a hold, per step), with USE sampling.
type StepsOptions struct {
	// Plan gives Start, Step, Steps, StepDuration (the hold) and Warmup;
	// Jump and Offset must stay zero (a stepped run jumps for 1 s from t0).
	Plan            analyze.StepPlan
	PreAllocatedVUs int // 0 means 50, as the article's script
	MaxVUs          int // 0 means 2000
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

// Defaults of a stepped run's VUs, the article's k6 script's.
const (
	DefaultStepsPreAllocatedVUs = 50
	DefaultStepsMaxVUs          = 2000
)

// ValidatePlan reports every problem of a stepped test's plan, by flag
// name, before any load starts.
func ValidatePlan(p analyze.StepPlan) []error {
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
	if p.Warmup < 0 {
		errs = append(errs, fmt.Errorf("--warmup %s: must not be negative", p.Warmup))
	}
	if p.StepDuration > 0 && p.Warmup >= p.StepDuration {
		errs = append(errs, fmt.Errorf("--warmup %s leaves nothing of a %s step to measure; make it shorter than --step-duration", p.Warmup, p.StepDuration))
	}
	return errs
}

// StepsExecutor is the ramping-arrival-rate executor of plan: it starts at
// plan.Start (the first jump holds it) and steps through schedule.Steps.
func StepsExecutor(plan analyze.StepPlan, preAllocatedVUs, maxVUs int) load.RampingArrivalRate {
	if preAllocatedVUs == 0 {
		preAllocatedVUs = DefaultStepsPreAllocatedVUs
	}
	if maxVUs == 0 {
		maxVUs = max(DefaultStepsMaxVUs, preAllocatedVUs)
	}
	return load.RampingArrivalRate{
		StartRate:       plan.Start,
		TimeUnit:        time.Second,
		Stages:          schedule.Steps(plan.Start, plan.Step, plan.Steps, plan.StepDuration),
		PreAllocatedVUs: preAllocatedVUs,
		MaxVUs:          maxVUs,
	}
}

// StepsResult is what a stepped run says: the curve (plan, steps, knee,
// collapse, USL fit, capacity, flattened into the same JSON object), the
// USE table of the whole run and of each step, and the verdict. JSON names
// are the --summary-export ones.
type StepsResult struct {
	Dir string `json:"dir,omitempty"`
	analyze.CurveSummary
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

// RunSteps runs cfg, whose one scenario must be StepsExecutor(opt.Plan, ...),
// with USE sampling into opt.Dir, then analyses it (AnalyzeSteps) and
// writes the plots into the run directory. An interrupted run is analysed
// as far as it went.
func RunSteps(ctx context.Context, cfg *scenario.Config, opt StepsOptions) (*StepsResult, error) {
	if errs := ValidatePlan(opt.Plan); len(errs) > 0 {
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
	out, err := AnalyzeSteps(res.Run, res.Resources, opt.Plan, opt.Health, opt.Thresholds)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", res.Dir, err)
	}
	out.Dir, out.Summary = res.Dir, &res.Summary
	if res.Summary.Interrupted {
		out.Notes = append(out.Notes, "the run was interrupted: only the steps it reached are measured")
	}
	plots, err := WriteStepPlots(res.Dir, res.Run, out.CurveSummary)
	out.Plots = plots
	if err != nil {
		return out, err
	}
	return out, nil
}

// AnalyzeSteps reads a stepped run: the curve by plan (when plan.Steps is
// 0, read from run.json by PlanFromMeta, else inferred from the offered
// rates), then, when samples are given, the USE table of the
// whole run and of each step's measured part, and the verdict over them.
func AnalyzeSteps(r *rundir.Dir, samples []use.Sample, plan analyze.StepPlan, h analyze.Health, t use.Thresholds) (*StepsResult, error) {
	if plan.Steps == 0 {
		if p, ok := PlanFromMeta(r, plan.Scenario); ok {
			p.Warmup = plan.Warmup
			plan = p
		}
	}
	cs, err := analyze.SummarizeCurve(r, plan, h)
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
func PlanFromMeta(r *rundir.Dir, scenarioName string) (analyze.StepPlan, bool) {
	var sc *rundir.Scenario
	for i, s := range r.Meta.Scenarios {
		if scenarioName == "" && len(r.Meta.Scenarios) == 1 || s.Name == scenarioName {
			sc = &r.Meta.Scenarios[i]
		}
	}
	if sc == nil || sc.Executor != scenario.RampingArrivalRate || sc.StartTime != 0 {
		return analyze.StepPlan{}, false
	}
	var cfg struct {
		TimeUnit string `json:"timeUnit"`
		Stages   []struct {
			Duration string  `json:"duration"`
			Target   float64 `json:"target"`
		} `json:"stages"`
	}
	if err := json.Unmarshal(sc.Config, &cfg); err != nil || len(cfg.Stages) < 2 || len(cfg.Stages)%2 != 0 {
		return analyze.StepPlan{}, false
	}
	unit, err := time.ParseDuration(cfg.TimeUnit)
	if err != nil || unit <= 0 {
		return analyze.StepPlan{}, false
	}
	perSec := float64(time.Second) / float64(unit)
	var rates []float64
	var hold time.Duration
	for i := 0; i < len(cfg.Stages); i += 2 {
		jump, err1 := time.ParseDuration(cfg.Stages[i].Duration)
		h, err2 := time.ParseDuration(cfg.Stages[i+1].Duration)
		if err1 != nil || err2 != nil || jump != schedule.StepJump || (i > 0 && h != hold) || h <= 0 ||
			cfg.Stages[i].Target != cfg.Stages[i+1].Target {
			return analyze.StepPlan{}, false
		}
		hold = h
		rates = append(rates, cfg.Stages[i].Target*perSec)
	}
	if rates[0] <= 0 {
		return analyze.StepPlan{}, false
	}
	plan := analyze.StepPlan{Start: rates[0], Steps: len(rates), StepDuration: hold, Jump: schedule.StepJump, Scenario: scenarioName}
	if len(rates) > 1 {
		plan.Step = rates[1] - rates[0]
	}
	for i, rate := range rates {
		if math.Abs(rate-plan.Rate(i)) > 1e-9*math.Max(1, rate) {
			return analyze.StepPlan{}, false
		}
	}
	return plan, true
}

// StepTables summarises the samples of each step's measured part. A sample
// taken at t holds the rates of the second before it, so a step measured
// over [from, to) is read from the samples in [from+1s, to+1s).
func StepTables(samples []use.Sample, steps []analyze.Step) []use.Table {
	out := make([]use.Table, len(steps))
	for i, s := range steps {
		shift := use.DefaultInterval
		out[i] = use.Summarize(samples, s.From+shift, s.To+shift)
		out[i].Label = fmt.Sprintf("step %d: %.4g req/s", s.Index+1, s.OfferedRate)
	}
	return out
}

// Plot file names a stepped run writes into its run directory (or --plots).
const (
	CurvePlotName    = "curve"
	TimelinePlotName = "timeline"
)

// WriteStepPlots writes curve.png/.svg (the throughput-latency curve) and
// timeline.png/.svg (p50/p95/p99 per second with the steps marked) into
// dir, and returns the files written.
func WriteStepPlots(dir string, r *rundir.Dir, cs analyze.CurveSummary) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("plots: %w", err)
	}
	windows := analyze.Windows(r, time.Second, nil).All.Windows
	var written []string
	for _, f := range []report.Format{report.PNG, report.SVG} {
		for _, p := range []struct {
			name string
			draw func(io.Writer) error
		}{
			{CurvePlotName, func(w io.Writer) error { return report.WriteCurvePlot(w, f, cs) }},
			{TimelinePlotName, func(w io.Writer) error { return report.WriteTimelinePlot(w, f, windows, cs.Steps) }},
		} {
			path := filepath.Join(dir, p.name+"."+string(f))
			if err := writeFile(path, p.draw); err != nil {
				return written, err
			}
			written = append(written, path)
		}
	}
	return written, nil
}

// writeFile creates path and fills it with draw, reporting either's error.
func writeFile(path string, draw func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	if err := draw(f); err != nil {
		f.Close()
		return fmt.Errorf("plot %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("plot %s: %w", path, err)
	}
	return nil
}

// PrintSteps prints everything a stepped run says, in reading order: the
// per-step table, the knee, collapse, USL fit and capacity, the USE table of
// the run and per step, the verdict, the plots and the notes.
func PrintSteps(w io.Writer, res *StepsResult) error {
	p := &errWriter{w: w}
	p.do(func() error { return report.CurveTable(w, res.Steps) })
	p.line()
	p.do(func() error { return report.CurveFindings(w, res.CurveSummary) })
	if res.USE != nil {
		p.line()
		p.do(func() error { return report.USE(w, *res.USE) })
		p.line()
		p.do(func() error { return report.StepUSE(w, res.StepUSE) })
	}
	if res.Bottleneck != nil {
		p.line()
		p.do(func() error { return report.Verdict(w, *res.Bottleneck) })
		for _, t := range res.Then {
			p.printf("  then: %s\n", t)
		}
	}
	if len(res.Plots) > 0 || res.Dir != "" || len(res.Notes) > 0 {
		p.line()
	}
	if res.Dir != "" {
		p.printf("run directory: %s\n", res.Dir)
	}
	for _, f := range res.Plots {
		p.printf("plot: %s\n", f)
	}
	for _, n := range res.Notes {
		p.printf("note: %s\n", n)
	}
	return p.err
}

// errWriter keeps the first error of a sequence of writes.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) do(f func() error) {
	if e.err == nil {
		e.err = f()
	}
}

func (e *errWriter) line() { e.printf("\n") }

func (e *errWriter) printf(format string, a ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, a...)
	}
}
