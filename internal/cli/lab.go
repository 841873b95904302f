package cli

import (
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"runtime"
	"time"

	"github.com/spf13/cobra"

	"github.com/knee-dev/knee/analyze"
	"github.com/knee-dev/knee/bookstore"
	"github.com/knee-dev/knee/guard"
	"github.com/knee-dev/knee/lab"
	"github.com/knee-dev/knee/report"
	"github.com/knee-dev/knee/scenario"
)

func (a *app) labCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "lab",
		Short: "The article's experiments on a real sample target (the Bookstore API)",
		Long: `knee lab runs the experiments of the article knee grew from on the Bookstore
API, a real sample target (SQLite or PostgreSQL, a real connection pool, an
output cache, /metrics) that knee starts in its own cgroup so it can limit its
CPU and freeze it, as docker --cpus and docker pause do.`,
		Example: "  knee lab co\n  knee lab curve --summary-export curve.json",
	}
	c.AddCommand(a.labCOCommand(), a.labServeCommand())
	c.AddCommand(a.labCurveCommand(), a.labPoolCommand())
	return c
}

func (a *app) labCOCommand() *cobra.Command {
	var o lab.COOptions
	var out, export string
	var quiet bool
	var repeat int
	var pause time.Duration
	c := &cobra.Command{
		Use:   "co",
		Short: "The coordinated-omission experiment: closed vs open model through a 5 s freeze",
		Long: `knee lab co starts the Bookstore in its own cgroup, then runs the closed model
(20 VUs, 100 ms think) and the open model (200 req/s, maxVUs 2000) against
GET /api/books/{isbn}, 60 s each, freezing the Bookstore for 5 s at 30 s in
each run. It prints the article's table: the closed model's p99 stays in
milliseconds because its VUs stop sending while the target is frozen; the
open model's p99 is of the order of the freeze; the closed run corrected the
way HdrHistogram does comes close to the open one.`,
		Example: `  knee lab co
  knee lab co --duration 20s --freeze-at 8s --freeze-for 3s --summary-export co.json`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			o.Out = filepath.Join(out, "lab-co-"+time.Now().UTC().Format("2006-01-02T15-04-05"))
			o.Executable, o.Stderr, o.Abort, o.Getenv = a.env.Executable, a.env.Stderr, a.abort.Done(), a.env.Getenv
			if !quiet {
				o.Progress, o.Live = a.progressStream()
			}
			if err := checkCPUs(c, o.CPUs); err != nil {
				return err
			}
			if errs := o.Validate(); len(errs) > 0 {
				return usageErr(errors.Join(errs...))
			}
			if repeat < 1 {
				return usagef("--repeat %d: must be at least 1", repeat)
			}
			if repeat > 1 {
				return a.repeatCO(o, repeat, pause, export)
			}
			res, err := lab.CO(a.ctx, o)
			if err != nil {
				return err
			}
			a.printCO(res)
			if export != "" {
				return writeJSON(export, res)
			}
			return nil
		},
	}
	fl := c.Flags()
	fl.DurationVar(&o.Duration, "duration", 60*time.Second, "length of each run")
	fl.DurationVar(&o.FreezeAt, "freeze-at", 30*time.Second, "when the Bookstore is frozen, from each run's start")
	fl.DurationVar(&o.FreezeFor, "freeze-for", 5*time.Second, "how long it stays frozen")
	fl.IntVar(&o.VUs, "vus", 20, "closed model: VUs")
	fl.DurationVar(&o.Think, "think", 100*time.Millisecond, "closed model: think time")
	fl.Float64Var(&o.Rate, "rate", 200, "open model: arrival rate, req/s")
	fl.IntVar(&o.PreAllocatedVUs, "pre-allocated-vus", 50, "open model: VUs started up front")
	fl.IntVar(&o.MaxVUs, "max-vus", 2000, "open model: most VUs")
	fl.Float64Var(&o.CPUs, "cpus", 0, "limit the Bookstore's CPU (cgroup quota, as docker --cpus), e.g. 0.5; not given: no limit")
	fl.StringVar(&out, "out", "runs", "directory under which the experiment's run directories are kept")
	fl.StringVar(&export, "summary-export", "", `write {"closed", "closed_corrected", "open", "signals"} as JSON to this file`)
	fl.BoolVar(&quiet, "quiet", false, "no progress lines")
	fl.IntVar(&repeat, "repeat", 1, "repeat the experiment N times, each on a freshly started (re-seeded, empty-cache) Bookstore, and report median and range")
	fl.DurationVar(&pause, "repeat-pause", 5*time.Second, "pause between repetitions")
	return c
}

// repeatCO runs the experiment n times (lab.RepeatCO), printing each
// repetition as it goes, then each measurement's median and range.
func (a *app) repeatCO(o lab.COOptions, n int, pause time.Duration, export string) error {
	res, err := lab.RepeatCO(a.ctx, o, n, pause, func(i int, res *lab.COResult) {
		if res == nil {
			fmt.Fprintf(a.env.Stdout, "\n== repetition %d of %d\n", i, n)
			return
		}
		a.printCO(res)
	})
	if err != nil {
		return err
	}
	for _, name := range lab.COMeasurements() {
		fmt.Fprintf(a.env.Stdout, "\n%s ", name)
		report.Repetitions(a.tables(), res.Spread[name])
	}
	if export != "" {
		return writeJSON(export, res)
	}
	return nil
}

// printCO prints the article's table and the signals, each line wrapped
// between its words on a terminal narrower than it.
func (a *app) printCO(res *lab.COResult) {
	w := report.Wrapped(a.tables())
	fmt.Fprintln(w)
	report.MeasurementTable(a.tables(), []report.Measurement{
		{Name: "Closed model", Requests: res.Closed.Requests, SlowerThan1s: res.Closed.SlowerThan1s, P95MS: res.Closed.LatencyMS.P95, P99MS: res.Closed.LatencyMS.P99},
		{Name: "Closed model, corrected", Requests: res.ClosedCorrected.Requests, SlowerThan1s: -1, P95MS: res.ClosedCorrected.LatencyMS.P95, P99MS: res.ClosedCorrected.LatencyMS.P99},
		{Name: "Open model", Requests: res.Open.Requests, SlowerThan1s: res.Open.SlowerThan1s, P95MS: res.Open.LatencyMS.P95, P99MS: res.Open.LatencyMS.P99},
	})
	s := res.Signals
	fmt.Fprintf(w, "\nsigns of coordinated omission in the closed run:\n")
	fmt.Fprintf(w, "  throughput: closed %.1f req/s vs open %.1f req/s: the difference is the requests the closed model never sent\n", s.ClosedRate, s.OpenRate)
	fmt.Fprintf(w, "  max/p99 gap: max %s next to p99 %s: %s\n", report.Ms(s.ClosedMaxMS), report.Ms(s.ClosedP99MS), report.Ratio(s.MaxP99Ratio, s.ClosedP99MS, 0))
	fmt.Fprintf(w, "  verdict on the closed run: %s; on the open run: %s\n", s.Closed.Verdict, s.Open.Verdict)
	fmt.Fprintf(w, "  corrected closed p99 / open p99 = %s\n", report.Ratio(s.CorrectedToOpen, res.Open.LatencyMS.P99, 2))
	if res.Open.DroppedIterations > 0 {
		fmt.Fprintf(w, "  open model dropped %d iterations: every one of its maxVUs was busy\n", res.Open.DroppedIterations)
	}
	fmt.Fprintf(w, "\nrun directories: %s, %s\n", res.ClosedDir, res.OpenDir)
	for _, n := range res.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
}

func (a *app) labServeCommand() *cobra.Command {
	var o bookstore.Options
	var cpus float64
	c := &cobra.Command{
		Use:         "serve",
		Short:       "Run the Bookstore API (the lab's sample target) in the foreground",
		Annotations: map[string]string{signalEnds: "yes"}, // Ctrl-C is how it ends
		Example: `  knee lab serve --addr 127.0.0.1:5080
  knee lab serve --db postgres://knee:knee@127.0.0.1:5432/knee --max-pool 20 --cpus 0.5`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if err := checkCPUs(c, cpus); err != nil {
				return err
			}
			if errs := o.Validate(); len(errs) > 0 {
				return usageErr(errors.Join(errs...))
			}
			release, err := lab.LimitSelf(cpus)
			if err != nil {
				return usageErr(err)
			}
			defer release()
			// Loopback: loopback Host names only (DNS rebinding); beyond it:
			// a random token, printed. Both refuse other sites' pages.
			g, err := guard.For(o.Addr)
			if err != nil {
				return err
			}
			o.Wrap = g.Handler
			srv, err := bookstore.New(a.ctx, o)
			if err != nil {
				return err
			}
			defer srv.Close()
			ln, err := net.Listen("tcp", o.Addr)
			if err != nil {
				return usagef("--addr %s: %v", o.Addr, err)
			}
			fmt.Fprintf(a.env.Stdout, "%s%s\n", lab.ListeningPrefix, ln.Addr())
			g.Announce(a.rawStdout, "bookstore", ln.Addr()) // unscrubbed: the token is for the user
			return srv.Serve(a.ctx, ln)
		},
	}
	fl := c.Flags()
	fl.StringVar(&o.Addr, "addr", "127.0.0.1:5080", "listen address")
	fl.StringVar(&o.DB, "db", "", "database: empty for an embedded SQLite in a temporary directory, a SQLite file path, or postgres://...")
	fl.IntVar(&o.MaxPool, "max-pool", bookstore.DefaultMaxPool, "most open database connections")
	fl.DurationVar(&o.PoolTimeout, "pool-timeout", bookstore.DefaultPoolTimeout, "how long a request waits for a connection before 503")
	fl.DurationVar(&o.CacheTTL, "cache-ttl", bookstore.DefaultCacheTTL, "output cache TTL (negative disables the cache)")
	fl.DurationVar(&o.QueryDelay, "query-delay", 0, "artificial database slowness per query (held with the connection)")
	fl.BoolVar(&o.SerializeQueries, "serialize-queries", false, "run one query at a time: a database that is the bottleneck")
	fl.Float64Var(&cpus, "cpus", 0, "limit this process's CPU through a cgroup quota (as docker --cpus), e.g. 0.5; not given: no limit")
	return c
}

// checkCPUs rejects a --cpus given as zero, negative or more than the
// machine has, before anything starts.
func checkCPUs(c *cobra.Command, cpus float64) error {
	if !c.Flags().Changed("cpus") {
		return nil
	}
	if n := runtime.NumCPU(); cpus <= 0 || cpus > float64(n) {
		return usagef("--cpus %g: give a CPU limit above 0 and at most this machine's %d CPUs, e.g. --cpus 0.5 (leave it out for no limit)", cpus, n)
	}
	return nil
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
	fl.IntVar(&f.preAllocated, "pre-allocated-vus", scenario.DefaultStepsPreAllocatedVUs, "VUs started before t0")
	fl.IntVar(&f.maxVUs, "max-vus", scenario.DefaultStepsMaxVUs, "most VUs; beyond them iterations are dropped")
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
	if errs := analyze.ValidatePlan(f.plan.plan()); len(errs) > 0 {
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
