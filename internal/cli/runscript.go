package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/knee-dev/knee/analyze"
	"github.com/knee-dev/knee/k6script"
	"github.com/knee-dev/knee/load"
	"github.com/knee-dev/knee/redact"
	"github.com/knee-dev/knee/runner"
)

// scriptFlags are knee run's flags for a k6 script, spelt as k6 spells them.
type scriptFlags struct {
	csvOut     string // --out csv=FILE
	jsonOut    string // --out json=FILE
	env        []string
	iterations int64
	stage      []string
}

func registerScriptFlags(fl *pflag.FlagSet, sf *scriptFlags) {
	fl.StringArrayVarP(&sf.env, "env", "e", nil, "k6 script: __ENV variable KEY=VALUE (repeatable)")
	fl.Int64Var(&sf.iterations, "iterations", 0, "k6 script: run this many iterations shared by --vus VUs (overrides the script's scenarios, as in k6)")
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

// doRunScript runs a k6 script: knee run script.js.
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
	if f.repeat != 1 {
		return usagef("--repeat is not supported with a k6 script yet; run it %d times", f.repeat)
	}
	env := map[string]string{}
	for _, kv := range f.script.env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return usagef("--env %q: write KEY=VALUE", kv)
		}
		env[k] = v
	}
	ov, err := scriptOverrides(c.Flags(), f)
	if err != nil {
		return usageErr(err)
	}
	red := redact.New(f.sc.RedactQuery...)
	a.red.Merge(red) // the terminal's scrubber masks the same query values
	s, err := k6script.Load(path, k6script.Config{Env: env, Getenv: a.env.Getenv, Stderr: a.env.Stderr, Redact: red})
	if err != nil {
		return usageErr(err)
	}
	defer s.Close()
	plan, err := s.Plan(ov)
	if err != nil {
		return usageErr(err)
	}
	runTs, ownTs, err := s.SplitThresholds(plan.Thresholds)
	if err != nil {
		return usageErr(fmt.Errorf("%s: options.thresholds: %w", path, err))
	}
	thresholds, err := analyze.ParseK6Thresholds(runTs)
	if err != nil {
		return usageErr(fmt.Errorf("%s: options.thresholds: %w", path, err))
	}
	flagTs, err := analyze.ParseThresholds(f.sc.Thresholds)
	if err != nil {
		return usageErr(err)
	}
	thresholds = append(thresholds, flagTs...)
	for _, fs := range f.faults {
		ft, err := parseFaultFlag(fs)
		if err != nil {
			return usageErr(err)
		}
		plan.Config.Faults = append(plan.Config.Faults, ft)
	}
	opt, err := a.runOptions(f)
	if err != nil {
		return usageErr(err)
	}
	if f.script.csvOut != "" && f.script.jsonOut != "" {
		return usagef("--out csv= and --out json=: give one k6 output")
	}
	var k6Out *k6script.Output
	outName := "csv=" + f.script.csvOut
	if f.script.csvOut != "" || f.script.jsonOut != "" {
		path, mk, timeFormat := f.script.csvOut, k6script.NewCSVOutput, ""
		if f.script.jsonOut != "" {
			path, mk, outName = f.script.jsonOut, k6script.NewJSONOutput, "json="+f.script.jsonOut
		} else if path, timeFormat, err = k6script.ParseCSVOut(f.script.csvOut); err != nil {
			return usageErr(err)
		}
		file, err := os.Create(path)
		if err != nil {
			return usageErr(fmt.Errorf("--out %s: %w", outName, err))
		}
		k6Out = mk(file)
		if err := k6Out.SetTimeFormat(timeFormat); err != nil {
			k6Out.Close()
			return usageErr(err)
		}
		s.SetOutput(k6Out)
	}
	var res *runner.ScriptResult
	_, err = a.withDashboard(opt, f.dashboard, thresholds, func(opt runner.Options) (*runner.Result, error) {
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
		return usageErr(err)
	}
	printChecks(a.env.Stdout, res)
	printMetrics(a.env.Stdout, res.Metrics)
	own := s.EvaluateOwn(ownTs, res.Metrics, time.Duration(res.Summary.DurationS*float64(time.Second)))
	ferr := a.finishRun(res.Result, f.summaryExport, thresholds)
	ownPass := printOwnThresholds(a.env.Stdout, own)
	if reason, ok := s.Aborted(); ok { // k6's exit code wins over the thresholds', as in k6
		return &ExitError{Code: ExitScriptAborted, Err: errors.New(reason)}
	}
	if ferr != nil {
		return ferr
	}
	if !ownPass {
		return &ExitError{Code: ExitThresholds, Err: fmt.Errorf("thresholds failed")}
	}
	return err
}

// ExitScriptAborted is k6's exit code when the script called
// exec.test.abort().
const ExitScriptAborted = 108

// printOwnThresholds prints the thresholds on checks and custom metrics;
// false when one failed.
func printOwnThresholds(w io.Writer, rs []k6script.OwnResult) bool {
	if len(rs) == 0 {
		return true
	}
	conv := make([]analyze.ThresholdResult, 0, len(rs))
	pass := true
	for _, r := range rs {
		conv = append(conv, analyze.ThresholdResult{Expr: r.Expr, Value: r.Value, Unit: r.Unit, Pass: r.Pass, Note: r.Note})
		pass = pass && r.Pass
	}
	printThresholds(w, conv)
	return pass
}

// printMetrics prints the script's custom metrics (k6/metrics).
func printMetrics(w io.Writer, ms []k6script.MetricResult) {
	for _, m := range ms {
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
	if res.IterationErrors > 0 {
		fmt.Fprintf(w, "iteration errors: %d; the first: %s\n", res.IterationErrors, res.FirstError)
	}
}

// splitOuts reads the --out values: csv=FILE is k6's CSV output (scripts
// only), anything else the directory under which the run directory is made.
func splitOuts(f *runFlags, script bool) error {
	f.out = "runs"
	for _, o := range f.outs {
		kind, file, ok := strings.Cut(o, "=")
		switch {
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
