package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/knee-dev/knee/analyze"
	"github.com/knee-dev/knee/fault"
	"github.com/knee-dev/knee/report"
	"github.com/knee-dev/knee/rundir"
	"github.com/knee-dev/knee/runner"
	"github.com/knee-dev/knee/scenario"
)

// runFlags are knee run's flags beyond the scenario's own.
type runFlags struct {
	sc            scenario.Flags
	out           string
	summaryExport string
	interval      time.Duration
	sendLagLimit  time.Duration
	faults        []string
	targetPID     int
	targetCgroup  string
	targetCommit  string
	quiet         bool
	repeat        int
	repeatPause   time.Duration
	junit         string
	split         splitFlags
	script        scriptFlags // a k6 script's flags (runscript.go)
	outs          []string    // --out values: the run directory's parent, k6 outputs, prometheus-rw (splitOuts)
	dashboard     string
}

func (a *app) runCommand() *cobra.Command {
	var f runFlags
	c := &cobra.Command{
		Use:   "run [scenario.yaml | script.js | -]",
		Short: "Generate load (open or closed model) and record it into a run directory",
		Long: `knee run generates load with one of k6's executors and records every latency in
HdrHistograms, written every interval to a run directory (run.json, latency.hlog,
counters.jsonl) under --out.

Open model (constant-arrival-rate, ramping-arrival-rate): requests start on a
schedule, latency counts from each one's intended start, and an iteration that
finds all --max-vus busy is counted in dropped_iterations, never sent late,
and said before the summary. Defaults, the same for flags and scenario files:
time unit 1s, 50 pre-allocated VUs, and max VUs max(1000, peak rate × 10 s),
so a 10 s stall of the target at the peak rate drops nothing (a waiting VU
costs about 17 KB of memory and holds one connection).
Closed model (constant-vus, ramping-vus): each VU sends, waits for the reply,
thinks, and sends again; its iteration interval is recorded so coordinated
omission can be detected and corrected by knee analyze.`,
		Example: `  knee run --executor constant-arrival-rate --rate 200 --duration 60s --max-vus 2000 \
      --url 'http://127.0.0.1:5080/api/books/{isbn}' --var isbn=9780441172719,9780261102217 \
      --out runs/ --summary-export summary.json
  knee run --executor constant-vus --vus 20 --think 100ms --duration 60s --url 'http://127.0.0.1:5080/api/books/{isbn}' --var isbn=9780441172719
  knee run ./scenario.yaml --threshold 'p(95)<200ms'
  knee run - < scenario.yaml                 # the scenario from standard input`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) == 1 && isScript(args[0]) {
				if err := applyK6Env(c.Flags(), a.env.Getenv); err != nil {
					return usageErr(fmt.Errorf("%s: %w", args[0], err))
				}
			}
			if err := splitOuts(&f, len(args) == 1 && isScript(args[0])); err != nil {
				return usageErr(err)
			}
			return a.doRun(c, args, f)
		},
	}
	fl := c.Flags()
	// Scenario flags default to zero so "not given" can be told from "given" (scenario.Flags).
	fl.StringVar(&f.sc.Executor, "executor", "", "constant-arrival-rate, ramping-arrival-rate, constant-vus or ramping-vus (default: inferred)")
	fl.Float64Var(&f.sc.Rate, "rate", 0, "iterations per --time-unit (arrival-rate executors)")
	fl.Float64Var(&f.sc.StartRate, "start-rate", 0, "starting rate of ramping-arrival-rate")
	fl.DurationVar(&f.sc.TimeUnit, "time-unit", 0, "the period of --rate (default 1s)")
	fl.DurationVar(&f.sc.Duration, "duration", 0, "how long to start iterations")
	fl.IntVar(&f.sc.VUs, "vus", 0, "VUs of constant-vus (start VUs of ramping-vus)")
	fl.DurationVar(&f.sc.Think, "think", 0, "closed model: pause after each reply")
	fl.IntVar(&f.sc.PreAllocatedVUs, "pre-allocated-vus", 0, "VUs started before t0 (default 50, or --max-vus if lower)")
	fl.IntVar(&f.sc.MaxVUs, "max-vus", 0, "most VUs the open model may run; beyond it iterations are dropped (default max(1000, peak rate × 10 s): a 10 s stall of the target drops nothing)")
	fl.StringVar(&f.sc.Stages, "stages", "", `ramping stages "30s:100,1m:300" (duration:target,...)`)
	registerRequestFlags(fl, &f.sc)
	fl.IntVar(&f.sc.MaxConns, "max-conns", 0, "connections per host (0: no limit)")
	fl.BoolVar(&f.sc.HTTP2, "http2", false, "speak HTTP/2 (h2 over TLS, h2c over http://)")
	fl.BoolVar(&f.sc.Insecure, "insecure", false, "do not verify TLS certificates")
	fl.Uint64Var(&f.sc.Seed, "seed", 0, "seed of the {name} value choices")
	fl.DurationVar(&f.sc.GracefulStop, "graceful-stop", 0, "how long in-flight requests may finish after the end (default 30s)")
	fl.StringArrayVar(&f.sc.Thresholds, "threshold", nil, "pass/fail criterion, e.g. 'p(95)<200ms', 'errors<1%' (transport, 5xx), 'failed<1%' (also 4xx, k6's http_req_failed) (exit 99 when one fails)")

	fl.StringArrayVar(&f.outs, "out", nil, "directory under which the run directory is created (default runs); prometheus-rw=URL pushes every interval to Prometheus too; with a k6 script also csv=FILE or json=FILE, k6's outputs (repeatable)")
	fl.StringVar(&f.summaryExport, "summary-export", "", "write the end-of-run summary as JSON to this file")
	fl.StringVar(&f.junit, "junit", "", "write the thresholds as JUnit XML to this file (one test case per threshold)")
	fl.DurationVar(&f.interval, "interval", runner.DefaultInterval, "histogram interval (one line per interval in latency.hlog)")
	fl.DurationVar(&f.sendLagLimit, "send-lag-limit", analyze.DefaultSendLagLimit, "send-lag p99 above which the generator is reported as the limit")
	fl.StringArrayVar(&f.faults, "fault", nil, "freeze the target: freeze@AT:FOR, e.g. freeze@30s:5s (repeatable)")
	fl.IntVar(&f.targetPID, "target-pid", 0, "the target's PID: faults freeze it with SIGSTOP/SIGCONT; its cgroup limits go into the environment note")
	fl.StringVar(&f.targetCgroup, "target-cgroup", "", "the target's cgroup: faults freeze it with the cgroup freezer")
	fl.StringVar(&f.targetCommit, "target-commit", "", "the target's VCS commit, for the environment note")
	fl.BoolVar(&f.quiet, "quiet", false, "no progress lines")
	fl.IntVar(&f.repeat, "repeat", 1, "run the same test N times, each into its own run directory, and report median and range (N >= 3 for a firm result)")
	fl.DurationVar(&f.repeatPause, "repeat-pause", 5*time.Second, "pause between repetitions, so one run's tail does not land in the next")
	registerSplitFlags(fl, &f.split)
	registerScriptFlags(fl, &f.script)
	a.registerDashboardFlag(fl, &f.dashboard)
	return c
}

func (a *app) doRun(c *cobra.Command, args []string, f runFlags) error {
	if len(args) == 1 && isScript(args[0]) {
		return a.doRunScript(c, args[0], f)
	}
	cfg, err := a.loadConfig(c, args, f.sc)
	if err != nil {
		return usageErr(err)
	}
	thresholds, err := analyze.ParseThresholds(cfg.Thresholds)
	if err != nil {
		return usageErr(err)
	}
	for _, s := range f.faults {
		ft, err := parseFaultFlag(s)
		if err != nil {
			return usageErr(err)
		}
		cfg.Faults = append(cfg.Faults, ft)
	}
	if f.repeat < 1 {
		return usagef("--repeat %d: must be at least 1", f.repeat)
	}
	opt, err := a.runOptions(f)
	if err != nil {
		return usageErr(err)
	}
	defer os.Remove(opt.Dir) // the directory runOptions made, if no run wrote into it (repetitions write beside it)
	if f.dashboard != "" && f.repeat > 1 {
		return usagef("--dashboard follows one run: not with --repeat %d", f.repeat)
	}
	defer a.liveOutputs(&opt, f.split.promRW, f.split.closeTimeout)()
	if f.repeat == 1 {
		res, err := a.executeRun(cfg, opt, f.dashboard, thresholds)
		if res == nil {
			return notRun(err)
		}
		jr := junitReport{path: f.junit}
		jr.add(res, thresholds)
		ferr := errors.Join(a.finishRun(res, f.summaryExport, thresholds), jr.write())
		if err != nil {
			// The load ran and its summary is printed; what failed after it
			// is a failure of the run, not bad input.
			return &ExitError{Code: ExitFailure, Err: errors.Join(err, ferr)}
		}
		if nr := noResponse(res.Summary); nr != nil {
			return errors.Join(ferr, nr)
		}
		return ferr
	}
	return a.repeatRuns(cfg, opt, f, thresholds)
}

// repeatRuns runs the test f.repeat times and reports each metric's median
// and range over the repetitions: one run's figure is never the result.
func (a *app) repeatRuns(cfg *scenario.Config, opt runner.Options, f runFlags, ts []analyze.Threshold) error {
	jr := junitReport{path: f.junit}
	base := opt.Dir
	return a.repeat(f, &jr, func(i int) (*rundir.Summary, error) {
		opt.Dir = fmt.Sprintf("%s-r%d", base, i)
		res, err := runner.Execute(a.ctx, cfg, opt)
		if res == nil {
			return nil, notRun(err)
		}
		jr.add(res, ts)
		ferr := a.finishRun(res, "", ts)
		if err != nil {
			return &res.Summary, &ExitError{Code: ExitFailure, Err: errors.Join(err, ferr)}
		}
		if nr := noResponse(res.Summary); nr != nil {
			return &res.Summary, errors.Join(ferr, nr)
		}
		return &res.Summary, ferr
	})
}

// repeat calls once for repetitions 1..f.repeat, pausing f.repeatPause
// between them, then prints each metric's median and range and writes the
// summary export and the JUnit file. A repetition whose thresholds failed
// does not stop the others; any other failure does.
func (a *app) repeat(f runFlags, jr *junitReport, once func(i int) (*rundir.Summary, error)) error {
	var sums []rundir.Summary
	failed := false
	for i := 1; i <= f.repeat; i++ {
		if i > 1 {
			select {
			case <-a.ctx.Done():
			case <-time.After(f.repeatPause):
			}
		}
		if a.ctx.Err() != nil {
			fmt.Fprintf(a.env.Stderr, "interrupted: %d of %d repetitions ran\n", i-1, f.repeat)
			break
		}
		fmt.Fprintf(a.env.Stdout, "\n== repetition %d of %d\n", i, f.repeat)
		sum, err := once(i)
		if sum != nil {
			sums = append(sums, *sum)
		}
		if err != nil {
			var ee *ExitError
			if !errors.As(err, &ee) || ee.Code != ExitThresholds {
				return errors.Join(fmt.Errorf("repetition %d of %d: %w", i, f.repeat, err), jr.write())
			}
			failed = true
		}
	}
	rep := analyze.Repetitions(sums)
	fmt.Fprintln(a.env.Stdout)
	if err := report.Repetitions(a.env.Stdout, rep); err != nil {
		return err
	}
	if f.summaryExport != "" {
		if err := writeJSON(f.summaryExport, map[string]any{"runs": sums, "repetitions": rep}); err != nil {
			return err
		}
	}
	if err := jr.write(); err != nil {
		return err
	}
	if failed {
		return &ExitError{Code: ExitThresholds, Err: errors.New("thresholds failed in at least one repetition")}
	}
	return nil
}

// noResponse is the exit of a run in which not one request got a response
// (refused, DNS, timeouts): exit 1 even when no threshold was set, since the
// target was never measured; nil otherwise.
func noResponse(s rundir.Summary) error {
	if !analyze.NoResponse(s) {
		return nil
	}
	msg := fmt.Sprintf("no response at all: %d of %d requests failed", s.NoResponse, s.Requests)
	if s.FirstError != "" {
		msg += ": " + s.FirstError
	}
	return &ExitError{Code: ExitFailure, Err: errors.New(msg)}
}

// notRun is the exit of a run that never started: bad input (exit 2), unless
// the run directory could not be created (exit 1).
func notRun(err error) error {
	if errors.Is(err, runner.ErrRunDir) || errors.Is(err, runner.ErrNotReleased) {
		return &ExitError{Code: ExitFailure, Err: err}
	}
	return usageErr(err)
}

// registerRequestFlags registers the flags of the one request a flag-built
// scenario sends (knee run, knee steps).
func registerRequestFlags(fl *pflag.FlagSet, sc *scenario.Flags) {
	fl.StringVar(&sc.URL, "url", "", "URL template; {name} from --var, {vu}, {iter} (add ?run={vu}-{iter} to bypass caches)")
	fl.StringVar(&sc.Method, "method", "", "HTTP method (default GET)")
	fl.StringArrayVar(&sc.Headers, "header", nil, `request header "Name: value" (repeatable)`)
	fl.StringVar(&sc.Body, "body", "", "request body template")
	fl.StringArrayVar(&sc.Vars, "var", nil, "value list for a placeholder: name=v1,v2,v3 (repeatable)")
	fl.StringVar(&sc.Name, "name", "", "the request's name tag (default: the URL template)")
	fl.DurationVar(&sc.Timeout, "timeout", 0, "per-request timeout (default 60s)")
	fl.StringSliceVar(&sc.RedactQuery, "redact-query", nil, "query parameters whose values are secrets, masked in every output, e.g. token,api_key (URL userinfo and Authorization, Cookie and API-key headers always are)")
	fl.Var(&sc.Client, "client", "HTTP/1.1 client: auto (the lean client for plain http:// where it applies, else net/http) or net/http")
}

// loadConfig reads the scenario file, or builds one scenario from flags; not both.
func (a *app) loadConfig(c *cobra.Command, args []string, sf scenario.Flags) (*scenario.Config, error) {
	if len(args) == 0 {
		cfg, err := scenario.FromFlags(sf)
		if err == nil {
			a.red.Merge(cfg.Redactor())
		}
		return cfg, err
	}
	var given []string
	c.Flags().Visit(func(fl *pflag.Flag) {
		if scenarioFlag[fl.Name] {
			given = append(given, "--"+fl.Name)
		}
	})
	if len(given) > 0 {
		return nil, fmt.Errorf("%s: scenario flags (%s) cannot be mixed with a scenario file; put them in the file", args[0], strings.Join(given, ", "))
	}
	cfg, err := scenario.ReadPath(args[0], a.env.Stdin)
	if err != nil {
		return nil, err
	}
	cfg.Thresholds = append(cfg.Thresholds, sf.Thresholds...)
	cfg.HTTP.Client = sf.Client // a choice of client, not of scenario: allowed with a file
	cfg.RedactQuery = append(cfg.RedactQuery, sf.RedactQuery...)
	a.red.Merge(cfg.Redactor())
	return cfg, nil
}

// scenarioFlag names the flags that describe the scenario itself.
var scenarioFlag = map[string]bool{
	"executor": true, "rate": true, "start-rate": true, "time-unit": true, "duration": true, "vus": true,
	"think": true, "pre-allocated-vus": true, "max-vus": true, "stages": true, "url": true, "method": true,
	"header": true, "body": true, "var": true, "name": true, "timeout": true, "max-conns": true, "http2": true,
	"insecure": true, "seed": true, "graceful-stop": true,
}

func (a *app) runOptions(f runFlags) (runner.Options, error) {
	opt := runner.Options{
		Interval:     f.interval,
		SendLagLimit: f.sendLagLimit,
		Abort:        a.abort.Done(),
		TargetPID:    f.targetPID,
		TargetCommit: f.targetCommit,
		Getenv:       a.env.Getenv,
	}
	if f.interval <= 0 {
		return opt, fmt.Errorf("--interval %s: must be positive, e.g. 1s", f.interval)
	}
	var err error
	if opt.Split, err = f.split.parse(); err != nil {
		return opt, err
	}
	if a.coord, err = f.split.coordinator(&opt.Split, a.env.Getenv, a.env.Stderr); err != nil {
		return opt, err
	}
	if a.coord != nil && f.repeat > 1 {
		return opt, fmt.Errorf("--coordinator takes one run: not with --repeat %d", f.repeat)
	}
	if !f.quiet {
		opt.Progress, opt.Live = a.progressStream()
	}
	switch {
	case f.targetPID != 0 && f.targetCgroup != "":
		return opt, fmt.Errorf("give --target-pid or --target-cgroup, not both")
	case f.targetPID != 0:
		fr, err := fault.NewSignalFreezer(f.targetPID)
		if err != nil {
			return opt, fmt.Errorf("--target-pid %d: %w", f.targetPID, err)
		}
		opt.Target = fr
	case f.targetCgroup != "":
		cg, err := fault.Open(f.targetCgroup)
		if err != nil {
			return opt, fmt.Errorf("--target-cgroup: %w", err)
		}
		opt.Target = cg
	}
	dir, err := newRunDir(f.out)
	if err != nil {
		return opt, err
	}
	opt.Dir = dir
	return opt, nil
}

// newRunDir makes a fresh run directory under base, named by start time.
// The directory is made here, exclusively, so two runs started in the same
// second (two runners sharing one --out) each get their own: a name taken
// between a check and a create would make two runs write one directory.
func newRunDir(base string) (string, error) {
	if err := os.MkdirAll(base, 0o755); err != nil {
		return "", fmt.Errorf("--out %s: %w", base, err)
	}
	id := time.Now().UTC().Format("2006-01-02T15-04-05")
	for i := 0; i < 1000; i++ {
		dir := filepath.Join(base, id)
		if i > 0 {
			dir = fmt.Sprintf("%s-%d", dir, i)
		}
		err := os.Mkdir(dir, 0o755)
		if err == nil {
			return dir, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", fmt.Errorf("--out %s: %w", base, err)
		}
	}
	return "", fmt.Errorf("--out %s: over 1000 runs started this second", base)
}

// finishRun prints the run's notices and summary, exports it and evaluates thresholds.
func (a *app) finishRun(res *runner.Result, export string, ts []analyze.Threshold) (err error) {
	defer func() { err = errors.Join(err, a.sendPart(res)) }()
	for _, n := range res.Notices {
		fmt.Fprintln(a.env.Stdout, n) // first: what the figures below leave out
	}
	fmt.Fprintf(a.env.Stdout, "run directory: %s\n", res.Dir)
	if err := report.Summary(a.tables(), res.Summary); err != nil {
		return err
	}
	if export != "" {
		if err := writeJSON(export, res.Summary); err != nil {
			return err
		}
	}
	if len(ts) == 0 {
		return nil
	}
	if part := res.Run.Meta.Part; part != nil {
		// One runner's requests are a slice of the test's: its thresholds
		// are the merge's to judge, and a part that failed them here would
		// fail its Job and stop the other runners.
		fmt.Fprintf(a.env.Stdout, "thresholds: %d recorded in run.json for the merge (knee merge judges them on every runner's requests)\n", len(part.Thresholds))
		return nil
	}
	results := analyze.EvaluateThresholds(res.Run, ts)
	printThresholds(a.env.Stdout, results)
	if !analyze.ThresholdsPass(results) {
		return &ExitError{Code: ExitThresholds, Err: fmt.Errorf("thresholds failed")}
	}
	return nil
}

// sendPart sends the run directory to --coordinator, if given: even after
// an interrupt (what was measured is kept), but not after a second one.
func (a *app) sendPart(res *runner.Result) error {
	if a.coord == nil {
		return nil
	}
	defer a.coord.Close()
	if err := a.coord.Send(a.abort, res.Dir); err != nil {
		return &ExitError{Code: ExitFailure, Err: err}
	}
	fmt.Fprintf(a.env.Stderr, "knee: part sent to the coordinator %s\n", a.coord.URL)
	return nil
}

func printThresholds(w interface{ Write([]byte) (int, error) }, rs []analyze.ThresholdResult) {
	fmt.Fprintln(w, "thresholds")
	printThresholdRows(w, rs)
}

// printThresholdRows prints one line per threshold, under a heading
// printed before.
func printThresholdRows(w interface{ Write([]byte) (int, error) }, rs []analyze.ThresholdResult) {
	for _, r := range rs {
		mark := "PASS"
		if !r.Pass {
			mark = "FAIL"
		}
		fmt.Fprintf(w, "  %s  %-28s %s\n", mark, r.Expr, r.Measured())
	}
}

// writeJSON writes v to path, indented, with "format_version" first.
func writeJSON(path string, v any) error {
	b, err := marshalExport(v)
	if err != nil {
		return err
	}
	if err := rundir.WriteFileAtomic(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("--summary-export: %w", err)
	}
	return nil
}

// parseFaultFlag parses freeze@AT:FOR, e.g. freeze@30s:5s.
func parseFaultFlag(s string) (scenario.Fault, error) {
	kind, rest, ok := strings.Cut(s, "@")
	at, dur, ok2 := strings.Cut(rest, ":")
	if !ok || !ok2 || kind != scenario.FaultFreeze {
		return scenario.Fault{}, fmt.Errorf("--fault %q: write freeze@AT:FOR, e.g. freeze@30s:5s", s)
	}
	atD, err := time.ParseDuration(at)
	if err != nil || atD < 0 {
		return scenario.Fault{}, fmt.Errorf("--fault %q: %q is not a duration (e.g. 30s)", s, at)
	}
	forD, err := time.ParseDuration(dur)
	if err != nil || forD <= 0 {
		return scenario.Fault{}, fmt.Errorf("--fault %q: %q is not a positive duration (e.g. 5s)", s, dur)
	}
	return scenario.Fault{Kind: scenario.FaultFreeze, At: atD, For: forD}, nil
}
