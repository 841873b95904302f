package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/knee-dev/knee/analyze"
	"github.com/knee-dev/knee/importer"
	"github.com/knee-dev/knee/report"
	"github.com/knee-dev/knee/rundir"
)

// importFlags say how to read a file that is not a run directory.
type importFlags struct {
	format   string
	unit     string
	lenient  bool
	model    string
	interval time.Duration
}

func (f *importFlags) register(c *cobra.Command) {
	var names []string
	for _, ff := range importer.Formats() {
		names = append(names, string(ff))
	}
	c.Flags().StringVar(&f.format, "format", "auto", "input format: "+strings.Join(names, ", "))
	c.Flags().StringVar(&f.unit, "unit", "", "unit of raw values in hlog files and lists: ns, us, ms, s (default: ms for lists, ns for foreign hlogs)")
	c.Flags().BoolVar(&f.lenient, "lenient", false, "skip bad rows (their count and the first one are reported) instead of failing")
	c.Flags().StringVar(&f.model, "model", "", "open or closed: how the imported load was generated, when you know")
	c.Flags().DurationVar(&f.interval, "import-interval", time.Second, "interval length for imported samples")
}

func (f importFlags) options() importer.Options {
	return importer.Options{Format: importer.Format(f.format), Unit: importer.Unit(f.unit), Lenient: f.lenient, Model: f.model, Interval: f.interval}
}

type analyzeFlags struct {
	imp              importFlags
	window           time.Duration
	think            time.Duration
	expectedInterval time.Duration
	vus              int
	targetRate       float64
	scenario, name   string
	summaryExport    string
	keep             string
	server           string
}

func (a *app) analyzeCommand() *cobra.Command {
	var f analyzeFlags
	c := &cobra.Command{
		Use:   "analyze PATH",
		Short: "Read results right: windows vs merged percentiles, coordinated omission detected and corrected",
		Long: `knee analyze reads a knee run directory, a k6 CSV (any time format, .gz) or
JSON output, an HdrHistogram interval log or a plain list of latencies, and
shows: the summary (percentiles from merged histograms), the per-window table
with what averaging the windows' p99 would have reported, throughput over
time, the signs of coordinated omission and, for closed-model data with a
known iteration interval, the corrected percentiles beside the raw ones.`,
		Example: `  knee analyze runs/2026-11-30T10-00-00/
  knee analyze results.csv
  knee analyze closed.csv --think 100ms
  knee analyze closed.csv --expected-interval 112ms
  knee analyze values.txt --unit us`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error { return a.doAnalyze(args[0], f) },
	}
	f.imp.register(c)
	fl := c.Flags()
	fl.DurationVar(&f.window, "window", analyze.DefaultWindow, "window length of the per-window table")
	fl.DurationVar(&f.think, "think", 0, "closed model: think time between a reply and the next request (expected interval = median response + think)")
	fl.DurationVar(&f.expectedInterval, "expected-interval", 0, "closed model: one VU's expected iteration interval, for the correction")
	fl.IntVar(&f.vus, "vus", 0, "closed model: VUs, for the throughput signal")
	fl.Float64Var(&f.targetRate, "target-rate", 0, "open model: offered req/s, for the throughput signal")
	fl.StringVar(&f.scenario, "scenario", "", "analyze only this scenario")
	fl.StringVar(&f.name, "name", "", "analyze only this request name")
	fl.StringVar(&f.summaryExport, "summary-export", "", "write the analysis as JSON to this file")
	fl.StringVar(&f.keep, "keep", "", "keep the imported run directory here (imports only)")
	fl.StringVar(&f.server, "server", "", "the target's own latency record (hlog, list, or a run directory) to compare with the client's")
	return c
}

// analysisExport is knee analyze's --summary-export: knee run's summary plus the analysis.
type analysisExport struct {
	rundir.Summary
	Windows         []analyze.Window     `json:"windows"`
	WindowP99MeanMS float64              `json:"window_p99_mean_ms"`
	WindowReport    analyze.WindowReport `json:"window_report"`
	COSignals       analyze.COSignals    `json:"co_signals"`
	Corrected       *rundir.Summary      `json:"corrected,omitempty"`
	Correction      *analyze.Correction  `json:"correction,omitempty"`
}

func (a *app) doAnalyze(path string, f analyzeFlags) error {
	if f.think > 0 || f.expectedInterval > 0 {
		if f.imp.model == "" {
			f.imp.model = "closed"
		}
	}
	r, cleanup, err := a.openOrImport(path, f.imp, f.keep)
	if err != nil {
		return err
	}
	defer cleanup()
	opt := analyze.Options{
		Select: analyze.Selector{Scenario: f.scenario, Name: f.name},
		Window: f.window,
		CO:     analyze.COOptions{Think: f.think, ExpectedInterval: f.expectedInterval, VUs: f.vus, TargetRate: f.targetRate},
	}
	if f.server != "" {
		srv, cleanupSrv, err := a.openOrImport(f.server, importFlags{format: "auto", unit: f.imp.unit, interval: time.Second}, "")
		if err != nil {
			return fmt.Errorf("--server: %w", err)
		}
		defer cleanupSrv()
		opt.Server = srv
	}
	an, err := analyze.Analyze(r, opt)
	if err != nil {
		return err
	}
	if err := report.Analysis(a.tables(), an); err != nil {
		return err
	}
	if f.summaryExport != "" {
		return writeJSON(f.summaryExport, analysisExport{
			Summary: an.Summary, Windows: an.Windows.All.Windows, WindowP99MeanMS: an.Windows.All.WindowP99MeanMS,
			WindowReport: an.Windows, COSignals: an.CO, Corrected: an.Corrected, Correction: an.Correction,
		})
	}
	return nil
}

// openOrImport opens a run directory, or imports a file into one (a
// temporary one unless keep is given). cleanup removes the temporary one.
func (a *app) openOrImport(path string, f importFlags, keep string) (*rundir.Dir, func(), error) {
	none := func() {}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		r, err := rundir.Open(path)
		if err != nil {
			return nil, none, usageErr(err)
		}
		return r, none, nil
	} else if err != nil {
		return nil, none, usagef("%s: %v", path, err)
	}
	dir := keep
	cleanup := none
	if dir == "" {
		tmp, err := os.MkdirTemp("", "knee-import-")
		if err != nil {
			return nil, none, err
		}
		dir = filepath.Join(tmp, "run")
		cleanup = func() { os.RemoveAll(tmp) }
	}
	res, err := importer.Import(a.ctx, path, dir, f.options())
	if err != nil {
		cleanup()
		return nil, none, importErr(err)
	}
	a.importNotes(res)
	r, err := rundir.Open(dir)
	if err != nil {
		cleanup()
		return nil, none, err
	}
	return r, cleanup, nil
}

// importErr is bad input (exit 2) unless writing the run directory failed
// (a full disk: exit 1).
func importErr(err error) error {
	if errors.Is(err, importer.ErrWrite) {
		return err
	}
	return usageErr(err)
}

func (a *app) importNotes(res *importer.Result) {
	fmt.Fprintf(a.env.Stderr, "imported %s: %d rows as %s", res.Meta.SourceFile, res.Rows, res.Format)
	if res.Skipped > 0 {
		fmt.Fprintf(a.env.Stderr, "; skipped %d bad rows, the first: %v", res.Skipped, res.FirstBad)
	}
	if res.Clamped > 0 {
		fmt.Fprintf(a.env.Stderr, "; %d values negative or above 1 h clamped", res.Clamped)
	}
	fmt.Fprintln(a.env.Stderr)
}

func (a *app) importCommand() *cobra.Command {
	var f importFlags
	var out string
	c := &cobra.Command{
		Use:   "import FILE",
		Short: "Import k6 CSV/JSON, HdrHistogram logs or latency lists as a run directory",
		Example: `  knee import results.csv --out runs/
  knee import latencies.hlog --unit ns --out runs/`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			base := strings.TrimSuffix(filepath.Base(args[0]), filepath.Ext(args[0]))
			dir := filepath.Join(out, base)
			res, err := importer.Import(a.ctx, args[0], dir, f.options())
			if err != nil {
				return importErr(err)
			}
			a.importNotes(res)
			fmt.Fprintf(a.env.Stdout, "run directory: %s\n", res.Dir)
			return nil
		},
	}
	f.register(c)
	c.Flags().StringVar(&out, "out", "runs", "directory under which the run directory is created (named after the file)")
	return c
}
