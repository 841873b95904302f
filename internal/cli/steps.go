package cli

import (
	"errors"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/knee-dev/knee/analyze"
	"github.com/knee-dev/knee/report"
	"github.com/knee-dev/knee/runner"
	"github.com/knee-dev/knee/scenario"
)

// planFlags are a stepped test's plan: start, step, count, hold and warmup.
type planFlags struct {
	start, step  float64
	steps        int
	stepDuration time.Duration
	jump         time.Duration // knee curve's --jump
	warmup       time.Duration
	maxP95       time.Duration
}

// register adds the plan flags with the given defaults.
func (f *planFlags) register(c *cobra.Command, def analyze.StepPlan) {
	fl := c.Flags()
	fl.Float64Var(&f.start, "start", def.Start, "offered rate of the first step, req/s")
	fl.Float64Var(&f.step, "step", def.Step, "req/s added by every next step")
	fl.IntVar(&f.steps, "steps", def.Steps, "number of steps")
	fl.DurationVar(&f.stepDuration, "step-duration", def.StepDuration, "how long each step holds its rate (after a 1 s jump to it)")
	fl.DurationVar(&f.warmup, "warmup", def.Warmup, "dropped from the start of every step before it is measured")
	fl.DurationVar(&f.maxP95, "max-p95", 0, "p95 a healthy step must stay under (your SLO); 0: 5x the first step's p95")
}

func (f planFlags) plan() analyze.StepPlan {
	return analyze.StepPlan{Start: f.start, Step: f.step, Steps: f.steps, StepDuration: f.stepDuration, Jump: f.jump, Warmup: f.warmup}
}

func (f planFlags) health() analyze.Health { return analyze.Health{MaxP95: f.maxP95} }

// stepsFlags are knee steps' flags.
type stepsFlags struct {
	plan          planFlags
	probes        probeFlags
	sc            scenario.Flags
	out           string
	summaryExport string
	targetCommit  string
	quiet         bool
}

func (a *app) stepsCommand() *cobra.Command {
	var f stepsFlags
	c := &cobra.Command{
		Use:   "steps",
		Short: "A stepped test: the throughput-latency curve, its knee and collapse, the USE scan and the bottleneck",
		Long: `knee steps raises the arrival rate step by step (ramping-arrival-rate: a 1 s
jump to each rate, then a hold of --step-duration) while it samples the
target's resources every second. It then measures every step after its
--warmup (offered and achieved rate, p50/p95/p99/max, dropped iterations,
errors, busy VUs), finds the knee (the last healthy and first unhealthy step)
and the collapse, fits the Universal Scalability Law, prints the capacity
line, the USE table of the run and per step, and the verdict: the resource
that saturated first, its evidence and why the others are not the
bottleneck. curve.png/.svg and timeline.png/.svg go into the run directory.`,
		Example: `  knee steps --start 100 --step 100 --steps 10 --step-duration 20s --warmup 6s \
      --url 'http://127.0.0.1:5080/api/books/{isbn}?run={vu}-{iter}' --var isbn=9780441172719,9780261102217 \
      --target-pid 4242 --metrics http://127.0.0.1:5080/metrics --out runs/ --summary-export s.json`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return a.doSteps(f) },
	}
	f.plan.register(c, analyze.StepPlan{Start: 100, Step: 100, Steps: 10, StepDuration: 20 * time.Second, Warmup: 6 * time.Second})
	f.probes.register(c)
	fl := c.Flags()
	registerRequestFlags(fl, &f.sc)
	fl.IntVar(&f.sc.PreAllocatedVUs, "pre-allocated-vus", scenario.DefaultStepsPreAllocatedVUs, "VUs started before t0")
	fl.IntVar(&f.sc.MaxVUs, "max-vus", scenario.DefaultStepsMaxVUs, "most VUs; beyond them iterations are dropped")
	fl.StringVar(&f.out, "out", "runs", "directory under which the run directory is created")
	fl.StringVar(&f.summaryExport, "summary-export", "", `write {"steps", "knee", "collapse", "usl", "capacity", "use", "step_use", "bottleneck", ...} as JSON to this file`)
	fl.StringVar(&f.targetCommit, "target-commit", "", "the target's VCS commit, for the environment note")
	fl.BoolVar(&f.quiet, "quiet", false, "no progress lines")
	return c
}

// doSteps checks everything before any load starts, then runs and reports.
func (a *app) doSteps(f stepsFlags) error {
	plan := f.plan.plan()
	plan.Jump = analyze.DefaultJump // knee steps ramps for schedule.StepJump to every rate
	if errs := analyze.ValidatePlan(plan); len(errs) > 0 {
		return usageErr(errors.Join(errs...))
	}
	sc := f.sc
	steps := scenario.Steps{Start: plan.Start, Step: plan.Step, Count: plan.Steps, Hold: plan.StepDuration, PreAllocatedVUs: sc.PreAllocatedVUs, MaxVUs: sc.MaxVUs}
	sc.PreAllocatedVUs, sc.MaxVUs = 0, 0 // the steps carry them
	cfg, err := scenario.FromStepFlags(sc, steps)
	if err != nil {
		return usageErr(err)
	}
	probes, err := f.probes.probes(a.ctx)
	if err != nil {
		return err
	}
	dir, err := newRunDir(f.out)
	if err != nil {
		return usageErr(err)
	}
	defer os.Remove(dir) // if nothing was written into it
	opt := runner.StepsOptions{
		Options: runner.Options{
			Dir: dir, TargetPID: f.probes.targetPID, TargetCommit: f.targetCommit,
			Abort: a.abort.Done(), Getenv: a.env.Getenv,
			Notes:  []string{"knee steps: a stepped test for the throughput-latency curve"},
			Probes: probes,
		},
		Plan: plan, Health: f.plan.health(),
	}
	if !f.quiet {
		opt.Progress, opt.Live = a.progressStream()
	}
	res, run, err := runner.Steps(a.ctx, cfg, opt)
	if err != nil {
		return err
	}
	res.Plots, err = report.WriteStepPlots(res.Dir, run, res.CurveSummary)
	return a.finishSteps(res, err, f.summaryExport)
}

// finishSteps prints a stepped run's result and exports it. A result that
// came with an error (a plot could not be written) is still printed.
func (a *app) finishSteps(res *analyze.StepsResult, runErr error, export string) error {
	if res == nil {
		return runErr
	}
	if err := report.PrintSteps(a.tables(), res); err != nil {
		return errors.Join(runErr, err)
	}
	if export != "" {
		if err := writeJSON(export, res); err != nil {
			return errors.Join(runErr, err)
		}
	}
	return runErr
}
