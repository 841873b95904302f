package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/knee-dev/knee/analyze"
	"github.com/knee-dev/knee/lab"
	"github.com/knee-dev/knee/rundir"
	"github.com/knee-dev/knee/use"
)

type curveFlags struct {
	plan          planFlags
	imp           importFlags
	scenario      string
	plots         string
	summaryExport string
	keep          string
}

func (a *app) curveCommand() *cobra.Command {
	var f curveFlags
	c := &cobra.Command{
		Use:   "curve PATH",
		Short: "The throughput-latency curve of a stepped run already made: steps, knee, collapse, plots",
		Long: `knee curve reads a stepped run (a knee run directory, a k6 CSV/JSON output or
any other import) and prints the per-step table, the knee, the collapse, the
USL fit and the capacity line, and writes curve.png/.svg and
timeline.png/.svg. With --steps 0 the plan is inferred from the offered rate
the run recorded. When the run directory holds resources.jsonl (knee steps),
the USE table and the bottleneck verdict are printed too.`,
		Example: `  knee curve runs/2026-11-30T10-00-00/
  knee curve steps.csv --start 100 --step 100 --steps 10 --step-duration 20s --warmup 6s --plots out/`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error { return a.doCurve(args[0], f) },
	}
	f.plan.register(c, analyze.StepPlan{Steps: 0, Warmup: 6 * time.Second})
	f.imp.register(c)
	fl := c.Flags()
	fl.StringVar(&f.scenario, "scenario", "", "measure only this scenario")
	fl.StringVar(&f.plots, "plots", "", "directory for the plots (default: the run directory, or . for an import)")
	fl.StringVar(&f.summaryExport, "summary-export", "", "write the curve (and USE scan) as JSON to this file")
	fl.StringVar(&f.keep, "keep", "", "keep the imported run directory here (imports only)")
	return c
}

func (a *app) doCurve(path string, f curveFlags) error {
	plan := f.plan.plan()
	plan.Scenario = f.scenario
	if err := checkCurvePlan(plan); err != nil {
		return err
	}
	r, cleanup, err := a.openOrImport(path, f.imp, f.keep)
	if err != nil {
		return err
	}
	defer cleanup()
	samples, err := readResources(r)
	if err != nil {
		return usageErr(err)
	}
	res, err := lab.AnalyzeSteps(r, samples, plan, f.plan.health(), nil)
	if err != nil {
		return usageErr(fmt.Errorf("%s: %w", path, err))
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		res.Dir = path
	}
	dir := f.plots
	if dir == "" {
		dir = res.Dir
	}
	if dir == "" {
		dir = "."
	}
	res.Plots, err = lab.WriteStepPlots(dir, r, res.CurveSummary)
	return a.finishSteps(res, err, f.summaryExport)
}

// checkCurvePlan: --steps 0 infers the plan, so only the warmup is checked
// then; a given plan is checked whole.
func checkCurvePlan(p analyze.StepPlan) error {
	if p.Steps == 0 {
		if p.Warmup < 0 {
			return usagef("--warmup %s: must not be negative", p.Warmup)
		}
		return nil
	}
	if errs := lab.ValidatePlan(p); len(errs) > 0 {
		return usageErr(errors.Join(errs...))
	}
	return nil
}

// readResources reads the run directory's resources.jsonl; a run without
// one has no USE samples, which is not an error.
func readResources(r *rundir.Dir) ([]use.Sample, error) {
	if r.Dir == "" {
		return nil, nil
	}
	f, err := os.Open(filepath.Join(r.Dir, rundir.ResourcesFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	s, err := use.ReadSamples(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.Name(), err)
	}
	return s, nil
}

// labStepsFlags are the flags lab curve and lab pool share.
type labStepsFlags struct {
	plan          planFlags
	cpus          float64
	preAllocated  int
	maxVUs        int
	out           string
	summaryExport string
	quiet         bool
}

func (f *labStepsFlags) register(c *cobra.Command, def analyze.StepPlan, cpus float64) {
	f.plan.register(c, def)
	fl := c.Flags()
	fl.Float64Var(&f.cpus, "cpus", cpus, "limit the Bookstore's CPU (cgroup quota, as docker --cpus); 0 for no limit")
	fl.IntVar(&f.preAllocated, "pre-allocated-vus", lab.DefaultStepsPreAllocatedVUs, "VUs started before t0")
	fl.IntVar(&f.maxVUs, "max-vus", lab.DefaultStepsMaxVUs, "most VUs; beyond them iterations are dropped")
	fl.StringVar(&f.out, "out", "runs", "directory under which the run directory is created")
	fl.StringVar(&f.summaryExport, "summary-export", "", "write the curve, the USE scan and the verdict as JSON to this file")
	fl.BoolVar(&f.quiet, "quiet", false, "no progress lines")
}

// options fills the curve experiment's options from the flags.
func (a *app) curveOptions(f labStepsFlags, experiment string) lab.CurveOptions {
	o := lab.CurveOptions{
		CPUs: f.cpus, Start: f.plan.start, Step: f.plan.step, Steps: f.plan.steps,
		StepDuration: f.plan.stepDuration, Warmup: f.plan.warmup,
		PreAllocatedVUs: f.preAllocated, MaxVUs: f.maxVUs, Health: f.plan.health(),
		Out:        lab.ExperimentDir(f.out, experiment),
		Executable: a.env.Executable, Stderr: a.env.Stderr, Abort: a.abort.Done(), Getenv: a.env.Getenv,
	}
	if f.cpus == 0 {
		o.CPUs = -1 // the flag's 0 means no limit; the option's 0 means the default
	}
	if !f.quiet {
		o.Progress, o.Live = a.progressStream()
	}
	return o
}

// checkLabPlan rejects what the lab would otherwise replace by its defaults:
// a flag given as zero or negative means a mistake, not "the default".
func checkLabPlan(f labStepsFlags) error {
	if errs := lab.ValidatePlan(f.plan.plan()); len(errs) > 0 {
		return usageErr(errors.Join(errs...))
	}
	if f.cpus < 0 {
		return usagef("--cpus %g: must not be negative (0 for no limit)", f.cpus)
	}
	return nil
}

func (a *app) labCurveCommand() *cobra.Command {
	var f labStepsFlags
	c := &cobra.Command{
		Use:   "curve",
		Short: "The throughput-latency curve of the CPU-limited Bookstore: knee, collapse, USE scan, bottleneck",
		Long: `knee lab curve starts the Bookstore limited to --cpus 0.25 and runs the article's
stepped test against GET /api/books/{isbn}?run={vu}-{iter} (the query string
bypasses the output cache, so every request reaches the database): 100 to
1000 req/s by 100, with shorter steps than the article's 20 s / 6 s by
default so the whole run takes about three minutes. The Bookstore's cgroup
CPU and its /metrics are sampled; everything knee steps prints follows.

The article limited its .NET API to 0.5 CPU; the Go Bookstore needs about a
third of the CPU per request, so at 0.5 CPU its knee lies near 1,800 req/s,
past these steps. 0.25 CPU puts the knee inside them; --cpus 0.5 --start 200
--step 200 brackets it at the article's limit.`,
		Example: `  knee lab curve
  knee lab curve --step-duration 20s --warmup 6s --summary-export curve.json`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if err := checkLabPlan(f); err != nil {
				return err
			}
			o := a.curveOptions(f, "lab-curve")
			if errs := o.Validate(); len(errs) > 0 {
				return usageErr(errors.Join(errs...))
			}
			res, err := lab.Curve(a.ctx, o)
			return a.finishSteps(res, err, f.summaryExport)
		},
	}
	f.register(c, lab.CurveOptions{}.Defaults().Plan(), lab.DefaultCurveCPUs)
	return c
}

func (a *app) labPoolCommand() *cobra.Command {
	var f labStepsFlags
	var p lab.PoolOptions
	var serialize bool
	c := &cobra.Command{
		Use:   "pool",
		Short: "A small connection pool before a slow database: the pool fills, the database is the bottleneck",
		Long: `knee lab pool runs the stepped test against a Bookstore whose database serves
one query at a time (--serialize-queries), each held --query-delay, through a
pool of --max-pool connections that gives up after --pool-timeout (the
article's "Max Pool Size=20" exercise). The expected diagnosis is the
article's: the API's CPU well below its limit, the pool full, requests
waiting for connections and timing out, and the database named as the
bottleneck.`,
		Example: `  knee lab pool
  knee lab pool --max-pool 10 --query-delay 10ms --start 20 --step 20`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if err := checkLabPlan(f); err != nil {
				return err
			}
			if p.MaxPool <= 0 || p.PoolTimeout <= 0 || p.QueryDelay < 0 {
				return usagef("--max-pool %d, --pool-timeout %s, --query-delay %s: pool and timeout must be positive, the delay not negative", p.MaxPool, p.PoolTimeout, p.QueryDelay)
			}
			p.CurveOptions = a.curveOptions(f, "lab-pool")
			p.SerializeQueries = &serialize
			if p.QueryDelay == 0 {
				p.QueryDelay = -1 // the flag's 0 means none; the option's 0 means the default
			}
			if errs := p.Validate(); len(errs) > 0 {
				return usageErr(errors.Join(errs...))
			}
			res, err := lab.Pool(a.ctx, p)
			return a.finishSteps(res, err, f.summaryExport)
		},
	}
	f.register(c, lab.PoolOptions{}.Defaults().Plan(), lab.DefaultPoolCPUs)
	fl := c.Flags()
	fl.IntVar(&p.MaxPool, "max-pool", lab.DefaultPoolMaxPool, "the Bookstore's most open database connections")
	fl.DurationVar(&p.QueryDelay, "query-delay", lab.DefaultPoolQueryDelay, "how long each query holds its connection (a slow database); 0 for none")
	fl.BoolVar(&serialize, "serialize-queries", true, "the database runs one query at a time")
	fl.DurationVar(&p.PoolTimeout, "pool-timeout", lab.DefaultPoolTimeout, "how long a request waits for a connection before 503")
	return c
}
