package lab

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"time"

	"github.com/knee-dev/knee/analyze"
	"github.com/knee-dev/knee/bookstore"
	"github.com/knee-dev/knee/fault"
	"github.com/knee-dev/knee/report"
	"github.com/knee-dev/knee/request"
	"github.com/knee-dev/knee/runner"
	"github.com/knee-dev/knee/scenario"
	"github.com/knee-dev/knee/use"
	"github.com/knee-dev/knee/use/probe"
)

// CurveOptions set up the throughput-latency curve experiment. Zero fields
// take the defaults below: the article's steps (100..1000 req/s by 100),
// with shorter steps so the whole run takes about three minutes (the
// article's own are 20 s steps with a 6 s warmup), and a CPU limit of 0.25.
//
// Why not the article's 0.5 CPU: the Go Bookstore spends about a third of
// the CPU per request that the article's .NET API did, so at 0.5 CPU its
// knee lies near 1,800 req/s, past the article's steps (measured here:
// 1,000 req/s used 0.33 of 0.5 cores). At 0.25 CPU the knee falls inside
// them, where the article's was; --cpus 0.5 --start 200 --step 200 brackets
// it at the article's limit.
type CurveOptions struct {
	CPUs            float64 // the Bookstore's CPU limit; 0 means DefaultCurveCPUs, negative none
	Start, Step     float64 // req/s
	Steps           int
	StepDuration    time.Duration // the hold of each step, after its 1 s jump
	Warmup          time.Duration // dropped from the start of every step
	PreAllocatedVUs int
	MaxVUs          int
	Health          analyze.Health
	Thresholds      use.Thresholds // nil means use.DefaultThresholds()

	Out        string // the run directory to create
	Executable string // the knee binary, to start the Bookstore
	Progress   io.Writer
	Live       bool
	Stderr     io.Writer // the Bookstore's own stderr
	Abort      <-chan struct{}
	Getenv     func(string) string
}

// Defaults of the curve experiment.
const (
	DefaultCurveCPUs         = 0.25
	DefaultCurveStart        = 100
	DefaultCurveStep         = 100
	DefaultCurveSteps        = 10
	DefaultCurveStepDuration = 15 * time.Second
	DefaultCurveWarmup       = 5 * time.Second
)

// Defaults returns o with every zero field set to its default.
func (o CurveOptions) Defaults() CurveOptions {
	if o.CPUs == 0 {
		o.CPUs = DefaultCurveCPUs
	}
	if o.Start == 0 {
		o.Start = DefaultCurveStart
	}
	if o.Step == 0 {
		o.Step = DefaultCurveStep
	}
	if o.Steps == 0 {
		o.Steps = DefaultCurveSteps
	}
	if o.StepDuration == 0 {
		o.StepDuration = DefaultCurveStepDuration
	}
	if o.Warmup == 0 {
		o.Warmup = DefaultCurveWarmup
	}
	return o
}

// Plan is the step plan the options describe.
func (o CurveOptions) Plan() analyze.StepPlan {
	return analyze.StepPlan{Start: o.Start, Step: o.Step, Steps: o.Steps, StepDuration: o.StepDuration, Jump: analyze.DefaultJump, Warmup: o.Warmup}
}

// Validate reports every setting that cannot work, before anything starts.
// Zero values are valid: they take the defaults.
func (o CurveOptions) Validate() []error {
	errs := analyze.ValidatePlan(o.Defaults().Plan())
	if o.MaxVUs < 0 || o.PreAllocatedVUs < 0 || (o.MaxVUs > 0 && o.MaxVUs < o.PreAllocatedVUs) {
		errs = append(errs, fmt.Errorf("--pre-allocated-vus %d, --max-vus %d: must not be negative, and --max-vus at least --pre-allocated-vus", o.PreAllocatedVUs, o.MaxVUs))
	}
	return errs
}

// StepsRequest is the curve's request: a book by ISBN with a query string
// unique per VU and iteration, so the Bookstore's output cache never
// answers and every request reaches the API and the database.
func StepsRequest(base string) request.Spec {
	return request.Spec{Name: "GET /api/books/{isbn}", URL: base + "/api/books/{isbn}?run={vu}-{iter}"}
}

// Curve runs the throughput-latency curve experiment: the Bookstore in its
// own cgroup limited to CPUs (unlimited, with a note, where cgroups cannot
// limit CPU here), a stepped run against it with its CPU and /metrics
// sampled, then the curve, the USE scan and the verdict.
func Curve(ctx context.Context, opt CurveOptions) (*analyze.StepsResult, error) {
	return bookstoreSteps(ctx, opt.Defaults(), nil, "knee lab curve: the article's throughput-latency curve")
}

// bookstoreSteps starts the Bookstore with extra `lab serve` flags and runs
// the stepped test against it.
func bookstoreSteps(ctx context.Context, opt CurveOptions, serveArgs []string, what string) (*analyze.StepsResult, error) {
	if errs := opt.Validate(); len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	var notes []string
	caps := fault.Detect()
	cpus := max(opt.CPUs, 0)
	if cpus > 0 && !caps.CPU {
		notes = append(notes, fmt.Sprintf("cannot limit the Bookstore's CPU to %g here (%s): it runs UNLIMITED, so the knee is the whole machine's, not that of a CPU-limited target", cpus, caps.CPUReason))
		say(opt.Progress, "WARNING: %s\n", notes[0])
		cpus = 0
	}
	t, err := StartBookstore(ctx, TargetOptions{Executable: opt.Executable, CPUs: cpus, Args: serveArgs, Stderr: opt.Stderr})
	if err != nil {
		return nil, err
	}
	defer t.Stop()
	notes = append(notes, t.Notes...)
	limit := "no CPU limit"
	if cpus > 0 {
		limit = strconv.FormatFloat(cpus, 'g', -1, 64) + " CPU"
	}
	say(opt.Progress, "Bookstore at %s (pid %d, %s) %v\n", t.URL, t.PID, limit, serveArgs)

	plan := opt.Plan()
	cfg := &scenario.Config{
		Scenarios: []scenario.Scenario{{
			Name: scenario.StepsScenario, Executor: stepsLoad(plan, opt.PreAllocatedVUs, opt.MaxVUs).Executor(),
			GracefulStop: scenario.DefaultGracefulStop,
			Requests:     []request.Spec{StepsRequest(t.URL)},
		}},
		Vars: map[string][]string{"isbn": bookstore.ArticleISBNs()},
	}
	say(opt.Progress, "\n== %d steps of %s from %g req/s by %g, warmup %s: about %s\n",
		plan.Steps, plan.StepDuration, plan.Start, plan.Step, plan.Warmup, time.Duration(plan.Steps)*plan.Period())
	res, run, err := runner.Steps(ctx, cfg, runner.StepsOptions{
		Options: runner.Options{
			Dir: opt.Out, TargetPID: t.PID, Probes: BookstoreProbes(t, caps.Hierarchy),
			Progress: opt.Progress, Live: opt.Live, Abort: opt.Abort, Getenv: opt.Getenv,
			Notes: append([]string{what}, notes...),
		},
		Plan: plan, Health: opt.Health, Thresholds: opt.Thresholds,
	})
	if err != nil {
		return nil, err
	}
	res.Notes = append(notes, res.Notes...)
	res.Plots, err = report.WriteStepPlots(res.Dir, run, res.CurveSummary)
	return res, err
}

// stepsLoad is the scenario load of a lab plan.
func stepsLoad(p analyze.StepPlan, preAllocatedVUs, maxVUs int) scenario.Steps {
	return scenario.Steps{Start: p.Start, Step: p.Step, Count: p.Steps, Hold: p.StepDuration, PreAllocatedVUs: preAllocatedVUs, MaxVUs: maxVUs}
}

// BookstoreProbes read the Bookstore's resources: its CPU from its cgroup
// (found from its PID; /proc without one) and its /metrics page.
func BookstoreProbes(t *Target, h fault.Hierarchy) []probe.Probe {
	return []probe.Probe{
		&probe.CPU{PID: t.PID, Hierarchy: h},
		&probe.Prom{URL: t.URL + "/metrics"},
	}
}

// ExperimentDir names a fresh run directory of experiment under base, by
// start time.
func ExperimentDir(base, experiment string) string {
	return filepath.Join(base, experiment+"-"+time.Now().UTC().Format("2006-01-02T15-04-05"))
}
