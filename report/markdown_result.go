package report

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/knee-dev/knee/analyze"
	"github.com/knee-dev/knee/k6metric"
	"github.com/knee-dev/knee/rundir"
)

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// resultRow is one row of the per-endpoint table.
type resultRow struct {
	label  string
	s      rundir.Summary
	shared bool
	// countsOnly: the row adds up scenarios of different models or
	// targets, so only its requests and errors mean something.
	countsOnly bool
	target     bool // a scenario's row: its rate against its own target
}

// resultRows is the whole run first, then each scenario when there are
// several, then each endpoint; a single endpoint is the whole run and gets
// one row.
func resultRows(in Input) []resultRow {
	if len(in.Endpoints) == 1 && len(in.Summary.Scenarios) < 2 {
		e := in.Endpoints[0]
		return []resultRow{{label: e.Label(), s: in.Summary}}
	}
	if len(in.Summary.Scenarios) < 2 {
		rows := []resultRow{{label: "all", s: in.Summary}}
		for _, e := range in.Endpoints {
			rows = append(rows, resultRow{label: e.Label(), s: e.Summary, shared: e.SharedCounters})
		}
		return rows
	}
	rows := []resultRow{{label: "all scenarios", s: in.Summary, countsOnly: true}}
	for _, sc := range in.Summary.Scenarios {
		rows = append(rows, resultRow{label: fmt.Sprintf("scenario %s (%s, %s)", sc.Scenario, orDash(sc.Model), orDash(sc.Executor)), s: sc.Summary, target: true})
	}
	for _, e := range in.Endpoints {
		rows = append(rows, resultRow{label: e.Label(), s: e.Summary, shared: e.SharedCounters})
	}
	return rows
}

// rateText is the row's rate, against its own target when it has one; "-"
// where no rate means anything (mixed scenarios, no timestamps).
func rateText(r resultRow) string {
	switch {
	case r.countsOnly || r.s.NoTimestamps:
		return "-"
	case r.target && r.s.TargetRate > 0:
		return fmt.Sprintf("%.1f/s of %.1f/s", r.s.Rate, r.s.TargetRate)
	}
	return fmt.Sprintf("%.1f/s", r.s.Rate)
}

// latencyCells are the row's p50, p95, p99, p99.9 and max; "-" for a row
// that adds up scenarios whose latencies mean different things.
func latencyCells(r resultRow) [5]string {
	if r.countsOnly {
		return [5]string{"-", "-", "-", "-", "-"}
	}
	l := r.s.LatencyMS
	return [5]string{Ms(l.P50), Ms(l.P95), Ms(l.P99), Ms(l.P999), Ms(l.Max)}
}

// measuredText is how long the run measured, or why nobody knows.
func measuredText(s rundir.Summary) string {
	if s.NoTimestamps {
		return "no timestamps: no duration, no rate"
	}
	return fmt.Sprintf("%.1f s measured", s.DurationS)
}

// offeredText is the run's rate line: offered against achieved, per
// scenario when they differ, or none without timestamps.
func offeredText(s rundir.Summary) string {
	switch {
	case s.NoTimestamps:
		return "none: the latencies have no timestamps"
	case len(s.Scenarios) > 1:
		return "per scenario (see Result): each against its own target"
	case s.TargetRate > 0:
		return fmt.Sprintf("offered %.1f req/s, achieved %.1f req/s", s.TargetRate, s.Rate)
	}
	return fmt.Sprintf("achieved %.1f req/s", s.Rate)
}

// errorsText is "errors (rate)"; "-" when the counters are the scenario's.
func errorsText(s rundir.Summary, shared bool) string {
	if shared {
		return "-"
	}
	return fmt.Sprintf("%d (%.2f %%)", s.Errors, pct(float64(s.Errors), float64(s.Requests)))
}

func droppedText(s rundir.Summary, shared bool) string {
	if shared || s.Model == "closed" {
		return "-"
	}
	return fmt.Sprintf("%d", s.DroppedIterations)
}

func mdResult(p *printer, in Input) {
	s := in.Summary
	p.f("\n## Result\n\n")
	p.f("| Endpoint | Requests | Rate | p50 | p95 | p99 | p99.9 | Max | Errors | Dropped |\n")
	p.f("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	shared := false
	for _, r := range resultRows(in) {
		l := latencyCells(r)
		p.f("| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s |\n", mdCell(r.label), r.s.Requests, rateText(r),
			l[0], l[1], l[2], l[3], l[4], errorsText(r.s, r.shared), droppedText(r.s, r.shared))
		shared = shared || r.shared
	}
	if shared {
		p.f("\nErrors and dropped iterations are counted per scenario: endpoints that share one show \"-\".\n")
	}
	p.f("\n- Error rate: %d of %d requests (%.2f %%)%s\n", s.Errors, s.Requests, pct(float64(s.Errors), float64(s.Requests)), classes(s.ErrorsByClass))
	if s.Model == "closed" {
		p.f("- Dropped iterations: not applicable (closed model: a VU waits instead of dropping)\n")
	} else {
		p.f("- Dropped iterations: %d\n", s.DroppedIterations)
	}
	p.f("- Slower than 1 s: %d\n", s.SlowerThan1s)
	if s.ServiceMS != nil {
		p.f("- Service time (send to end): %s\n", Latencies(*s.ServiceMS))
	}
	if s.SendLagMS != nil {
		p.f("- Send lag (intended to actual start): %s\n", Latencies(*s.SendLagMS))
	}
	if len(in.Windows.All.Windows) > 0 {
		p.f("- Over time: `%s` (ms)\n", in.Windows.Line())
	}
	mdWarnings(p, append(slices.Clip(s.Warnings), in.Windows.All.Warning))
	mdCO(p, in.CO, in.Correction)
	mdWarnings(p, in.Notes)
}

func mdWarnings(p *printer, ws []string) {
	// One blockquote each: a blank line between them keeps them apart.
	for _, w := range ws {
		if w != "" {
			p.f("\n> **Warning:** %s\n", strings.TrimSpace(w))
		}
	}
}

func mdCO(p *printer, co *analyze.COSignals, c *analyze.Correction) {
	p.f("\n### Coordinated omission\n\n")
	if co == nil {
		p.f("_Not checked._\n")
	} else {
		p.f("Verdict: **%s**\n\n", co.Verdict)
		for _, sc := range co.Scenarios {
			p.f("- Scenario %s (%s model): %s: %s\n", sc.Scenario, sc.Model, sc.Verdict, sc.Reason)
		}
		for _, sig := range co.Signals {
			mark := "quiet"
			if sig.Fired {
				mark = "**fired**"
			}
			name := sig.Name
			if sig.Scenario != "" && len(co.Scenarios) > 1 {
				name = sig.Scenario + " " + name
			}
			p.f("- %s (%s): %s\n", name, mark, sig.Evidence)
		}
	}
	if c == nil {
		return
	}
	p.f("\nThe closed-model latencies corrected the way HdrHistogram does (an estimate of what an open-model run " +
		"would have measured; the raw numbers stay the measurement):\n\n")
	p.f("| Measurement | Requests | Slower than 1 s | p50 | p95 | p99 | Max |\n|---|---:|---:|---:|---:|---:|---:|\n")
	p.f("| raw | %d | %d | %s | %s | %s | %s |\n", c.RawCount, c.RawSlowerThan1s,
		Ms(c.RawMS.P50), Ms(c.RawMS.P95), Ms(c.RawMS.P99), Ms(c.RawMS.Max))
	p.f("| corrected | %d | %d | %s | %s | %s | %s |\n", c.CorrectedCount, c.CorrectedSlowerThan1s,
		Ms(c.CorrectedMS.P50), Ms(c.CorrectedMS.P95), Ms(c.CorrectedMS.P99), Ms(c.CorrectedMS.Max))
	for _, sc := range c.Scenarios {
		p.f("\nScenario %s: expected interval %s (%s).\n", sc.Scenario, Ms(sc.IntervalMS), sc.Source)
	}
}

// repetitionMetrics are the metrics the report shows a range for, in order.
func repetitionMetrics() []string {
	return []string{"rate", "p50_ms", "p95_ms", "p99_ms", "max_ms", "error_rate", k6metric.DroppedIterations}
}

func mdRepetitions(p *printer, in Input) {
	rep := in.Repetitions
	p.f("\n### Repetitions\n\n")
	if rep.Runs == 0 {
		p.f("_Not given: this report covers one run and says nothing of run-to-run spread._\n")
		mdWarnings(p, []string{fmt.Sprintf("a single run is an anecdote; repeat at least %d times and report the range", analyze.MinRepetitions)})
		return
	}
	p.f("%d run(s)", rep.Runs)
	if len(in.RunIDs) > 0 {
		p.f(": %s", strings.Join(in.RunIDs, ", "))
	}
	p.f(".\n\n| Metric | Median | Range [min–max] |\n|---|---:|---|\n")
	for _, r := range repetitionRows(rep, in.Summary.Model) {
		p.f("| %s | %s | %s |\n", r.Metric, r.Median, r.Range)
	}
	mdWarnings(p, rep.Warnings)
}

// repetitionRow is one metric's median and range, formatted.
type repetitionRow struct{ Metric, Median, Range string }

// repetitionRows are the rows of the report's Repetitions table. Each row is
// labelled without a unit, as its values carry theirs ("p50", "452µs",
// "1.20s"); a closed-model run has no dropped-iteration row, since its VUs
// wait instead of dropping (the report says so once, under Result).
func repetitionRows(rep analyze.RepetitionReport, model string) []repetitionRow {
	var out []repetitionRow
	for _, name := range repetitionMetrics() {
		if model == "closed" && name == k6metric.DroppedIterations {
			continue
		}
		for _, m := range rep.Metrics {
			if m.Metric == name {
				out = append(out, repetitionRow{Metric: repetitionLabel(name), Median: spreadValue(name, m.Median),
					Range: "[" + spreadValue(name, m.Min) + "–" + spreadValue(name, m.Max) + "]"})
			}
		}
	}
	return out
}

// repetitionLabel is a metric's name for people: "p95" for p95_ms (the
// value says ms, µs or s), "error rate" for error_rate; k6's names as k6
// spells them.
func repetitionLabel(metric string) string {
	if name, ok := strings.CutSuffix(metric, "_ms"); ok {
		return name
	}
	if metric == "error_rate" {
		return "error rate"
	}
	return metric
}

func spreadValue(metric string, v float64) string {
	switch {
	case strings.HasSuffix(metric, "_ms"):
		return Ms(v)
	case metric == "rate":
		return fmt.Sprintf("%.1f/s", v)
	case metric == "error_rate":
		return fmt.Sprintf("%.2f %%", 100*v)
	}
	return fmt.Sprintf("%.0f", v)
}

func mdCurve(p *printer, c *analyze.CurveSummary) {
	if c == nil {
		return
	}
	p.f("\n### Throughput-latency curve\n\n")
	p.f("| Offered | Achieved | p50 | p95 | p99 | Dropped | Errors |\n|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, s := range c.Steps {
		p.f("| %.4g/s | %.4g/s | %s | %s | %s | %d | %d |\n", s.OfferedRate, s.Rate,
			Ms(s.LatencyMS.P50), Ms(s.LatencyMS.P95), Ms(s.LatencyMS.P99), s.DroppedIterations, s.Errors)
	}
	p.f("\n- Knee: %s\n", kneeText(c.Knee))
	if c.Collapse != nil {
		p.f("- Collapse: at %.4g req/s offered only %.4g req/s completed\n", c.Collapse.AtRate, c.Collapse.Rate)
	}
	if c.USL != nil {
		p.f("- USL fit: %s\n", USLText(*c.USL))
	}
	p.f("- Capacity: %s\n", orDash(c.Capacity))
}

func mdBottleneck(p *printer, u *USETable) {
	p.f("\n## Bottleneck\n\n")
	if u == nil {
		p.f("_Not measured: no USE scan was taken, so this run cannot say where the limit is._\n")
		return
	}
	if len(u.Rows) > 0 {
		p.f("| Resource | Utilization | Saturation | Errors |\n|---|---|---|---|\n")
		for _, r := range u.Rows {
			p.f("| %s | %s | %s | %s |\n", mdCell(r.Resource), mdCell(orDash(r.Utilization)), mdCell(orDash(r.Saturation)), mdCell(orDash(r.Errors)))
		}
		p.f("\n")
	}
	p.f("Verdict: %s\n", orNotStated(u.Verdict, "name the resource the evidence points to"))
}

// kneeText places the knee between two rates when both are known.
func kneeText(k analyze.Knee) string {
	s := orDash(k.Reason)
	if k.LastHealthyRate > 0 && k.FirstUnhealthyRate > 0 {
		s = fmt.Sprintf("between %.4g and %.4g req/s; %s", k.LastHealthyRate, k.FirstUnhealthyRate, s)
	}
	if k.KneedleRate > 0 {
		s += fmt.Sprintf(" (Kneedle on p95: %.4g req/s)", k.KneedleRate)
	}
	return s
}
