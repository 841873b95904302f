package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/knee-dev/knee/analyze"
	"github.com/knee-dev/knee/k6script"
	"github.com/knee-dev/knee/load"
	"github.com/knee-dev/knee/redact"
	"github.com/knee-dev/knee/report"
	"github.com/knee-dev/knee/rundir"
	"github.com/knee-dev/knee/runner"
	"github.com/knee-dev/knee/scenario"
)

// scriptFlags are knee run's flags for a k6 script, spelt as k6 spells them.
type scriptFlags struct {
	csvOut     string // --out csv=FILE
	jsonOut    string // --out json=FILE
	env        []string
	secretEnv  []string // -e names whose values are secrets, besides the ones whose names say so
	iterations int64
	stage      []string
	modules    string // --module-cache: where https:// imports are kept
	offline    bool   // --offline: https:// imports from the cache only
}

func registerScriptFlags(fl *pflag.FlagSet, sf *scriptFlags) {
	fl.StringArrayVarP(&sf.env, "env", "e", nil, "k6 script: __ENV variable KEY=VALUE (repeatable)")
	fl.StringSliceVar(&sf.secretEnv, "secret-env", nil, "k6 script: -e names whose values are secrets, masked in every output (names with TOKEN, SECRET, PASSWORD, KEY, AUTH, ... always are)")
	fl.Int64Var(&sf.iterations, "iterations", 0, "k6 script: run this many iterations shared by --vus VUs (overrides the script's scenarios, as in k6)")
	fl.StringVar(&sf.modules, "module-cache", "", "k6 script: the directory where the modules a script imports by https:// URL are kept (default $XDG_CACHE_HOME/knee/modules, else ~/.cache/knee/modules)")
	fl.BoolVar(&sf.offline, "offline", false, "k6 script: download no module: read every https:// import from --module-cache")
	fl.StringArrayVar(&sf.stage, "stage", nil, "k6 script: a ramping-vus stage DURATION:TARGET, e.g. 30s:10 (repeatable; overrides the script's scenarios, as in k6)")
}

// isScript tells a k6 script from a scenario file by its extension.
func isScript(path string) bool {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".js", ".mjs", ".cjs", ".ts":
		return true
	}
	return false
}

// scriptAllowed are the scenario flags that mean something for a script:
// k6's execution overrides.
var scriptAllowed = map[string]bool{"vus": true, "duration": true, "stages": true, "iterations": true, "stage": true, "env": true}

// doRunScript runs a k6 script: knee run script.js, once or --repeat N
// times.
func (a *app) doRunScript(c *cobra.Command, path string, f runFlags) error {
	var bad []string
	c.Flags().Visit(func(fl *pflag.Flag) {
		if scenarioFlag[fl.Name] && !scriptAllowed[fl.Name] {
			bad = append(bad, "--"+fl.Name)
		}
	})
	if len(bad) > 0 {
		return usagef("%s: %s cannot be used with a k6 script; set them in the script's options", path, strings.Join(bad, ", "))
	}
	if f.repeat < 1 {
		return usagef("--repeat %d: must be at least 1", f.repeat)
	}
	if f.dashboard != "" && f.repeat > 1 {
		return usagef("--dashboard follows one run: not with --repeat %d", f.repeat)
	}
	sr := scriptRun{path: path, csvOut: f.script.csvOut, jsonOut: f.script.jsonOut, dashboard: f.dashboard}
	sr.cfg.Env = map[string]string{}
	for _, kv := range f.script.env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return usagef("--env %q: write KEY=VALUE", kv)
		}
		sr.cfg.Env[k] = v
		if redact.SensitiveEnv(k) || slices.Contains(f.script.secretEnv, k) {
			sr.secrets = append(sr.secrets, v)
		}
	}
	var err error
	if sr.ov, err = scriptOverrides(c.Flags(), f); err != nil {
		return usageErr(err)
	}
	sr.cfg.Redact = redact.New(f.sc.RedactQuery...)
	sr.cfg.Redact.Remember(sr.secrets...)
	sr.cfg.Getenv, sr.cfg.Stderr = a.env.Getenv, a.env.Stderr
	sr.cfg.Modules = scriptModules(f.script, a.env.Getenv)
	a.red.Merge(sr.cfg.Redact) // the terminal's scrubber masks the same query values
	if sr.flagTs, err = analyze.ParseThresholds(f.sc.Thresholds); err != nil {
		return usageErr(err)
	}
	for _, fs := range f.faults {
		ft, err := parseFaultFlag(fs)
		if err != nil {
			return usageErr(err)
		}
		sr.faults = append(sr.faults, ft)
	}
	if sr.csvOut != "" && sr.jsonOut != "" {
		return usagef("--out csv= and --out json=: give one k6 output")
	}
	opt, err := a.runOptions(f)
	if err != nil {
		return usageErr(err)
	}
	defer os.Remove(opt.Dir) // the directory runOptions made, if no run wrote into it (repetitions write beside it)
	defer a.liveOutputs(&opt, f.split.promRW, f.split.closeTimeout)()
	jr := junitReport{path: f.junit}
	if f.repeat == 1 {
		_, err := a.runScriptOnce(sr, opt, f.summaryExport, "", &jr)
		return errors.Join(err, jr.write())
	}
	// Every repetition loads the script afresh (new VUs, SharedArrays,
	// checks and metrics) into its own run directory; k6 outputs get the
	// repetition's suffix too.
	base := opt.Dir
	return a.repeat(f, &jr, func(i int) (*rundir.Summary, error) {
		opt.Dir = fmt.Sprintf("%s-r%d", base, i)
		res, err := a.runScriptOnce(sr, opt, "", fmt.Sprintf("-r%d", i), &jr)
		if res == nil {
			return nil, err
		}
		return &res.Summary, err
	})
}

// scriptRun is what every run of one script shares: what the command line
// said.
type scriptRun struct {
	path            string
	cfg             k6script.Config
	ov              k6script.Overrides
	flagTs          []analyze.Threshold
	faults          []scenario.Fault
	csvOut, jsonOut string // k6 outputs, as given
	dashboard       string
	secrets         []string // -e values that are secrets
}

// runScriptOnce loads the script, runs it into opt.Dir, prints its
// summary, checks, metrics and thresholds and adds them to jr. suffix
// ("-r2") goes before the extension of a k6 output's file. It returns the
// result (nil when the run never started) and the run's exit error.
func (a *app) runScriptOnce(sr scriptRun, opt runner.Options, export, suffix string, jr *junitReport) (*runner.ScriptResult, error) {
	s, err := k6script.Load(a.ctx, sr.path, sr.cfg)
	if err != nil {
		return nil, scriptExit(err, usageErr)
	}
	defer s.Close()
	plan, err := s.Plan(sr.ov)
	if err != nil {
		return nil, usageErr(err)
	}
	// An option the plan ignores is said before the start, as k6 warns of
	// it; run.json keeps it too.
	for _, n := range plan.Notes {
		fmt.Fprintf(a.env.Stderr, "knee: %s: %s\n", sr.path, n)
	}
	// The thresholds on k6's metrics are judged on them as k6 sums them
	// (ownTs); the rest (dropped_iterations) on the run directory.
	runTs, ownTs, err := s.SplitThresholds(plan.Thresholds)
	if err != nil {
		return nil, usageErr(fmt.Errorf("%s: options.thresholds: %w", s.Place("thresholds"), err))
	}
	thresholds, err := analyze.ParseK6Thresholds(runTs)
	if err != nil {
		return nil, usageErr(fmt.Errorf("%s: options.thresholds: %w", s.Place("thresholds"), err))
	}
	thresholds = append(thresholds, sr.flagTs...)
	// A runner of a split test records the thresholds, in knee's own
	// syntax, for the merge to judge (runner.Split): those of k6's that
	// knee's run directory can judge.
	mergeTs := append(mergeableK6(plan.Thresholds), thresholds...)
	plan.Config.Thresholds = nil
	for _, t := range mergeTs {
		plan.Config.Thresholds = append(plan.Config.Thresholds, t.String())
	}
	plan.Config.Faults = append(plan.Config.Faults, sr.faults...)
	plan.Config.Secrets = append(plan.Config.Secrets, sr.secrets...) // run.json's scrubber masks them
	k6Out, outName, err := openK6Output(sr.csvOut, sr.jsonOut, suffix)
	if err != nil {
		return nil, usageErr(err)
	}
	if k6Out != nil {
		s.SetOutput(k6Out)
	}
	var res *runner.ScriptResult
	_, err = a.withDashboard(opt, sr.dashboard, thresholds, func(opt runner.Options) (*runner.Result, error) {
		var err error
		if res, err = runner.ExecuteScript(a.ctx, s, plan, opt); res == nil {
			return nil, err
		}
		return res.Result, err
	})
	if k6Out != nil {
		if cerr := k6Out.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("--out %s: %w", outName, cerr)
		}
	}
	if res == nil {
		var se *k6script.ScriptError
		if _, aborted := s.Aborted(); aborted && errors.As(err, &se) && se.Setup {
			// test.abort() in setup(): k6's interrupt, not an exception, so
			// its exit code is ScriptAborted's.
			return nil, &ExitError{Code: ExitScriptAborted, Err: err}
		}
		if errors.As(err, &se) && se.Setup {
			return nil, &ExitError{Code: ExitScriptException, Err: err}
		}
		return nil, scriptExit(err, notRun)
	}
	own := s.EvaluateOwn(ownTs, res.TestRunDuration) // k6 judges a Counter's rate over its test run duration (metrics/engine evaluateThresholds)
	part := res.Run.Meta.Part != nil
	if part {
		// k6's metrics are not in the run directory, so the merge judges
		// what it can on knee's; a part judging its slice would be no
		// verdict either.
		own, thresholds = nil, mergeTs
	}
	// handleSummary runs after teardown, as in k6; what it returns is
	// written after knee's summary, which goes to stderr unless k6 would
	// print its default summary (handleSummary threw or returned nothing).
	var sum k6script.SummaryResult
	var hsErr error
	var data map[string]any
	if s.HasHandleSummary() || export != "" {
		data = a.summaryData(s, res, plan.Thresholds, own)
	}
	restore := func() {}
	if s.HasHandleSummary() {
		if sum, hsErr = a.callHandleSummary(s, data); !sum.Default {
			restore = a.stdoutToStderr()
		}
	}
	defer func() { restore() }()
	printChecks(a.env.Stdout, res)
	// The script's own metrics in the same block, as k6's summary lists them.
	custom := s.K6Custom(res.TestRunDuration)
	printK6(report.Wrapped(a.tables()), append(slices.Clip(res.K6), custom...), s.TrendStats(), s.TimeUnit()) // wrapped between fields on a narrow terminal
	inK6 := map[string]bool{}
	for _, c := range custom {
		inK6[c.Name] = true
	}
	printMetrics(a.env.Stdout, res.Metrics, inK6)
	if part && len(ownTs) > 0 {
		fmt.Fprintf(a.env.Stdout, "thresholds on k6's metrics: %d not judged here: this runner ran a part of a split test; knee merge judges those it can on the run directories\n", len(ownTs))
	}
	ferr := a.finishRun(res.Result, "", thresholds)
	if export != "" {
		if xerr := writeK6Export(export, data, res.Summary); xerr != nil {
			ferr = xerr // in finishRun's place: its own export's failure would have ended it there
		}
	}
	// The script's own thresholds join the block finishRun printed, if any.
	ownPass := printOwnThresholds(a.env.Stdout, own, len(thresholds) == 0)
	jr.add(res.Result, thresholds, own...)
	rerr := a.scriptVerdict(s, res, err, ferr, ownPass)
	restore()
	restore = func() {}
	if hsErr == nil {
		hsErr = a.writeSummaryOutputs(sum.Outputs)
	}
	return res, summaryExit(rerr, hsErr)
}

// mergeableK6 are the k6 thresholds knee's run directory can judge (for
// a split test's merge), in knee's syntax; the others are left out.
func mergeableK6(all map[string][]string) []analyze.Threshold {
	var out []analyze.Threshold
	for key, exprs := range all {
		for _, e := range exprs {
			if ts, err := analyze.ParseK6Thresholds(map[string][]string{key: {e}}); err == nil {
				out = append(out, ts...)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Expr < out[j].Expr })
	return out
}

// printK6 prints k6's built-in metrics as k6 sums them, one line each (on
// a terminal narrower than a line, w wraps it between its fields), under
// k6's names, with k6's summary's values written as it writes them
// (k6Value): a Trend's stats columns (summaryTrendStats), a Counter's
// count and rate per second, a Rate's share and count, a Gauge's value,
// min and max; unit is summaryTimeUnit. knee's own figures (latency from
// the intended start, send lag) are in the summary above, under knee's
// names.
func printK6(w io.Writer, ms []k6script.K6Stat, stats []string, unit string) {
	if len(ms) == 0 {
		return
	}
	fmt.Fprintln(w, "k6 metrics (as k6 sums them; setup and teardown included)")
	for _, m := range ms {
		val := func(key string) string { return k6Value(m.Values[key], m.Kind, m.Contains, unit) }
		var fields []string
		switch m.Kind {
		case k6script.KindTrend:
			for _, st := range stats {
				v := val(st)
				if st == "count" {
					v = strconv.FormatFloat(m.Values[st], 'f', -1, 64)
				}
				fields = append(fields, st+"="+v)
			}
			if m.Sampled {
				fields = append(fields, fmt.Sprintf("(percentiles estimated: %d values, a uniform sample of %d kept)", m.Count, k6script.TrendKeep))
			}
		case k6script.KindCounter:
			fields = []string{val("count"), val("rate") + "/s"}
		case k6script.KindRate:
			fields = []string{val("rate"), fmt.Sprintf("%s out of %s", jsNumber(m.Values["passes"]), jsNumber(m.Values["passes"]+m.Values["fails"]))}
		case k6script.KindGauge:
			fields = []string{val("value"), "min=" + val("min"), "max=" + val("max")}
		}
		fmt.Fprintf(w, "  %-32s %s\n", m.Name, strings.Join(fields, " "))
	}
}

// openK6Output creates the k6 output asked for (csv=FILE[,timeFormat=...]
// or json=FILE), its file name with suffix before the extension; nil when
// none was asked for. name is the output as given, for errors.
func openK6Output(csvOut, jsonOut, suffix string) (out *k6script.Output, name string, err error) {
	if csvOut == "" && jsonOut == "" {
		return nil, "", nil
	}
	path, mk, timeFormat, name := jsonOut, k6script.NewJSONOutput, "", "json="+jsonOut
	if csvOut != "" {
		name, mk = "csv="+csvOut, k6script.NewCSVOutput
		if path, timeFormat, err = k6script.ParseCSVOut(csvOut); err != nil {
			return nil, name, err
		}
	}
	if suffix != "" {
		ext := filepath.Ext(path) // steps.csv -> steps-r2.csv
		path = strings.TrimSuffix(path, ext) + suffix + ext
	}
	file, err := os.Create(path)
	if err != nil {
		return nil, name, fmt.Errorf("--out %s: %w", name, err)
	}
	out = mk(file)
	if err := out.SetTimeFormat(timeFormat); err != nil {
		out.Close()
		return nil, name, err
	}
	return out, name, nil
}

// scriptExit gives a script's phase timeouts and interruptions k6's exit
// codes; any other error goes through otherwise.
func scriptExit(err error, otherwise func(error) error) error {
	var te *k6script.TimeoutError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &te) && te.Phase == "setup":
		return &ExitError{Code: ExitSetupTimeout, Err: err}
	case errors.As(err, &te):
		return &ExitError{Code: ExitTeardownTimeout, Err: err}
	case errors.Is(err, k6script.ErrInterrupted):
		return &ExitError{Code: ExitInterrupted, Err: err}
	}
	return otherwise(err)
}

// printOwnThresholds prints a script's own thresholds (checks, custom
// metrics, groups), under a heading when heading is set; false when one
// failed.
func printOwnThresholds(w io.Writer, rs []analyze.ThresholdResult, heading bool) bool {
	if len(rs) == 0 {
		return true
	}
	if heading {
		printThresholds(w, rs)
	} else {
		printThresholdRows(w, rs)
	}
	return analyze.ThresholdsPass(rs)
}

// printMetrics prints the script's series that the k6 block has not
// (inK6): each group's http_req_duration and group_duration; of those it
// has, what knee's own histogram series of a Trend clamped.
func printMetrics(w io.Writer, ms []k6script.MetricResult, inK6 map[string]bool) {
	for _, m := range ms {
		if inK6[m.Name] {
			if m.Kind == k6script.KindTrend && m.Clamped > 0 {
				fmt.Fprintf(w, "%s: %d values outside 0.001..3,600,000 clamped in knee's series of it in latency.hlog (k6's figures above are of every value)\n", m.Name, m.Clamped)
			}
			continue
		}
		unit := ""
		if m.Time {
			unit = "ms"
		}
		switch m.Kind {
		case k6script.KindTrend:
			if m.Count == 0 {
				fmt.Fprintf(w, "%-20s no values\n", m.Name)
				continue
			}
			fmt.Fprintf(w, "%-20s count=%d avg=%.4g%s min=%.4g%s p50=%.4g%s p95=%.4g%s p99=%.4g%s max=%.4g%s", m.Name, m.Count,
				m.Avg, unit, m.Min, unit, m.Med, unit, m.P95, unit, m.P99, unit, m.Max, unit)
			if m.Clamped > 0 {
				fmt.Fprintf(w, " (%d values outside 0.001..3,600,000 clamped)", m.Clamped)
			}
			fmt.Fprintln(w)
		case k6script.KindCounter:
			fmt.Fprintf(w, "%-20s %.6g (%d adds)\n", m.Name, m.Sum, m.Count)
		case k6script.KindRate:
			fmt.Fprintf(w, "%-20s %.2f%% of %d\n", m.Name, 100*m.Rate, m.Count)
		case k6script.KindGauge:
			fmt.Fprintf(w, "%-20s %.6g (min %.6g, max %.6g)\n", m.Name, m.Value, m.Min, m.Max)
		}
	}
}

// scriptOverrides reads --vus, --duration, --iterations, --stage and --stages
// when given (k6's command-line tier).
func scriptOverrides(fl *pflag.FlagSet, f runFlags) (k6script.Overrides, error) {
	var ov k6script.Overrides
	if fl.Changed("vus") {
		v := int64(f.sc.VUs)
		ov.VUs = &v
	}
	if fl.Changed("duration") {
		d := f.sc.Duration
		ov.Duration = &d
	}
	if fl.Changed("iterations") {
		n := f.script.iterations
		ov.Iterations = &n
	}
	stages := f.script.stage
	if f.sc.Stages != "" {
		stages = append(stages, strings.Split(f.sc.Stages, ",")...)
	}
	for _, st := range stages {
		d, t, ok := strings.Cut(strings.TrimSpace(st), ":")
		dur, err := k6script.ParseDuration(d)
		if _, nerr := strconv.ParseFloat(d, 64); nerr == nil && dur != 0 {
			err = errors.New("no unit") // k6 reads --stage with time.ParseDuration (lib/models.go:69)
		}
		var target float64
		if ok && err == nil {
			_, err = fmt.Sscan(t, &target)
		}
		if !ok || err != nil {
			return ov, fmt.Errorf("--stage %q: write DURATION:TARGET, e.g. 30s:10", st)
		}
		ov.Stages = append(ov.Stages, load.Stage{Duration: dur, Target: target})
	}
	return ov, nil
}

// printChecks prints k6's checks block and the iterations' exceptions.
func printChecks(w io.Writer, res *runner.ScriptResult) {
	if len(res.Checks) > 0 {
		fmt.Fprintf(w, "checks: %.2f%% of %d passed\n", 100*res.ChecksRate, res.ChecksTotal)
		for _, ch := range res.Checks {
			mark := "✓"
			if ch.Fails > 0 {
				mark = "✗"
			}
			name := ch.Name
			if ch.Group != "" {
				name = ch.Group + " :: " + name
			}
			fmt.Fprintf(w, "  %s %-40s %d passed, %d failed\n", mark, name, ch.Passes, ch.Fails)
		}
	}
	if res.TeardownError != "" {
		fmt.Fprintf(w, "teardown failed: %s\n", res.TeardownError)
	}
	if res.IterationErrors > 0 || len(res.Checks) > 0 {
		// Beside the checks: the share of iterations that threw, which no
		// check sees.
		share := 0.0
		if res.Iterations > 0 {
			share = 100 * float64(res.IterationErrors) / float64(res.Iterations)
		}
		fmt.Fprintf(w, "iteration errors: %.2f%% of %d iterations (%d)", share, res.Iterations, res.IterationErrors)
		if res.FirstError != "" {
			fmt.Fprintf(w, "; the first: %s", res.FirstError)
		}
		fmt.Fprintln(w)
	}
}

// splitOuts reads the --out values: csv=FILE is k6's CSV output (scripts
// only), anything else the directory under which the run directory is made.
func splitOuts(f *runFlags, script bool) error {
	f.out = "runs"
	for _, o := range f.outs {
		kind, file, ok := strings.Cut(o, "=")
		switch {
		case !ok && script && (o == "csv" || o == "json"):
			// k6 reads these as its outputs to their default places
			// (file.csv; stdout), not as a directory.
			return fmt.Errorf("--out %s: with a k6 script this is k6's %s output, which knee writes to a file: give --out %s=FILE (k6's default is file.csv for csv), or ./%s for a run directory of that name", o, o, o, o)
		case !ok:
			f.out = o
		case kind == "prometheus-rw":
			if file == "" {
				return fmt.Errorf("--out prometheus-rw=URL: give the remote-write URL, e.g. prometheus-rw=http://127.0.0.1:9090/api/v1/write")
			}
			f.split.promRW = append(f.split.promRW, file)
		case (kind == "csv" || kind == "json") && file != "" && !script:
			return fmt.Errorf("--out %s: k6 outputs are written for k6 scripts (knee run script.js); a scenario's run directory imports as it is", o)
		case kind == "csv" && file != "":
			f.script.csvOut = file
		case kind == "json" && file != "":
			f.script.jsonOut = file
		case kind == "cloud" || kind == "influxdb" || kind == "experimental-prometheus-rw" || kind == "statsd":
			return fmt.Errorf("--out %s: knee writes k6's csv and json outputs only; use --out csv=FILE or json=FILE (the run directory holds every latency)", o)
		default:
			return fmt.Errorf("--out %q: give a directory, or csv=FILE / json=FILE with a k6 script", o)
		}
	}
	return nil
}
