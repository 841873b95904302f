package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/knee-dev/knee/analyze"
)

// WindowTable prints the per-window table of the series merged across tags
// (its columns named as the curve table and report.Palette name them),
// the article's one-line comparison of averaged and merged p99 for it and
// for each tag, and the warning when they differ.
func WindowTable(w io.Writer, wr analyze.WindowReport) error {
	p := newPrinter(w)
	p.f("per %gs window (throughput over time and each window's own percentiles)\n", wr.WindowS)
	t := table{indent: "  ", header: []string{"start_s", "requests", "achieved/s", "offered/s", "dropped", "p50", "p95", "p99", "max"},
		right: []bool{true, true, true, true, true, true, true, true, true}}
	for _, win := range wr.All.Windows {
		target := "-"
		if win.Target > 0 {
			target = fmt.Sprintf("%.1f", win.Target)
		}
		t.add(fmt.Sprintf("%.0f", win.StartS), fmt.Sprint(win.Requests), fmt.Sprintf("%.1f", win.Rate), target, fmt.Sprint(win.Dropped),
			Ms(win.LatencyMS.P50), Ms(win.LatencyMS.P95), Ms(win.LatencyMS.P99), Ms(win.LatencyMS.Max))
	}
	if p.err == nil {
		p.err = t.write(w)
	}
	p.f("%s\n", wr.All.Line())
	if wr.All.Warning != "" {
		p.f("  WARNING: %s\n", wr.All.Warning)
	}
	for _, s := range wr.ByTag {
		p.f("  %s: %s\n", tagLabel(s), s.Line())
	}
	return p.err
}

func tagLabel(s analyze.WindowSeries) string {
	if s.Scenario == "" {
		return s.Name
	}
	return s.Scenario + " / " + s.Name
}

// COSignals prints the coordinated-omission verdict with each signal's numbers.
func COSignals(w io.Writer, c analyze.COSignals) error {
	p := newPrinter(w)
	p.f("coordinated omission: %s\n", strings.ToUpper(c.Verdict))
	for _, sc := range c.Scenarios {
		name := sc.Scenario
		if name == "" {
			name = "(all)"
		}
		p.f("  scenario %s (%s model): %s: %s\n", name, sc.Model, sc.Verdict, sc.Reason)
		coSignalLines(p, c.Signals, sc.Scenario)
	}
	if len(c.Scenarios) == 0 {
		coSignalLines(p, c.Signals, "")
	} else {
		// The server's record is the run's, not a scenario's.
		for _, s := range c.Signals {
			if s.Scenario == "" && s.Name == analyze.SignalServer {
				coSignalLines(p, []analyze.COSignal{s}, "")
			}
		}
	}
	if len(c.Signals) == 0 && c.Verdict != analyze.VerdictOpenModel {
		p.f("  (no signal could be computed: give --think, --vus or --target-rate)\n")
	}
	return p.err
}

// coSignalLines prints the signals of one scenario, "!" marking those that fired.
func coSignalLines(p *printer, sigs []analyze.COSignal, scenario string) {
	for _, s := range sigs {
		if s.Scenario != scenario || (scenario == "" && s.Name == analyze.SignalServer && len(sigs) > 1) {
			continue
		}
		mark := "  "
		if s.Fired {
			mark = "! "
		}
		p.f("    %s%-12s %s\n", mark, s.Name, s.Evidence)
	}
}

// Correction prints raw and corrected percentiles side by side, labelled.
func Correction(w io.Writer, c analyze.Correction) error {
	p := newPrinter(w)
	p.f("coordinated-omission correction (HdrHistogram's expected-interval method)\n")
	for _, sc := range c.Scenarios {
		p.f("  scenario %s: expected interval %s (%s)\n", sc.Scenario, Ms(sc.IntervalMS), sc.Source)
	}
	t := table{indent: "  ", header: []string{"", "requests", ">1s", "p50", "p95", "p99", "max"},
		right: []bool{false, true, true, true, true, true, true}}
	t.add("raw", fmt.Sprint(c.RawCount), fmt.Sprint(c.RawSlowerThan1s), Ms(c.RawMS.P50), Ms(c.RawMS.P95), Ms(c.RawMS.P99), Ms(c.RawMS.Max))
	t.add("corrected", fmt.Sprint(c.CorrectedCount), fmt.Sprint(c.CorrectedSlowerThan1s), Ms(c.CorrectedMS.P50), Ms(c.CorrectedMS.P95), Ms(c.CorrectedMS.P99), Ms(c.CorrectedMS.Max))
	if p.err == nil {
		p.err = t.write(w)
	}
	p.f("  (corrected adds the requests the VUs would have sent while they waited; the open model needs no correction)\n")
	return p.err
}

// Analysis prints what knee analyze says about a run, in reading order:
// the summary, the per-window table, the coordinated-omission signals and,
// where one was wanted, the correction or why there is none.
func Analysis(w io.Writer, a *analyze.Analysis) error {
	p := &errWriter{w: w}
	p.do(func() error { return Summary(w, a.Summary) })
	p.line()
	if a.Summary.NoTimestamps {
		// One interval of no known length: windows and their rates would be invented.
		p.printf("per-window table: none (the latencies have no timestamps)\n")
	} else {
		p.do(func() error { return WindowTable(w, a.Windows) })
	}
	p.line()
	p.do(func() error { return COSignals(w, a.CO) })
	switch {
	case a.Correction != nil:
		p.line()
		p.do(func() error { return Correction(w, *a.Correction) })
	case a.CorrectionNote != "":
		p.printf("\nno correction: %s\n", a.CorrectionNote)
	}
	return p.err
}
