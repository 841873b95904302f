package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/knee-dev/knee/analyze"
	"github.com/knee-dev/knee/use"
)

// CurveTable prints one line per step of a stepped run: offered and
// achieved rate, p50/p95/p99/max, dropped iterations, errors with their
// classes and the most VUs busy at once. On a terminal too narrow for that
// (an 80-column one: the full table's headers and padding alone take 94),
// the error classes leave the table for a line per step that had errors,
// below it, so that no header or number is cut.
func CurveTable(w io.Writer, steps []analyze.Step) error {
	full := table{header: []string{"offered/s", "achieved/s", "p50", "p95", "p99", "max", "dropped", "errors", "busy VUs", "error classes"},
		right: []bool{true, true, true, true, true, true, true, true, true, false}}
	narrow := table{header: full.header[:9], right: full.right[:9]}
	var classLines []string
	for _, s := range steps {
		cls := strings.TrimSpace(strings.Trim(strings.TrimSpace(classes(s.ErrorsByClass)), "[]"))
		busy := fmt.Sprint(s.BusyVUs)
		if s.NoVUs {
			busy = "-" // an import: no VU was counted, which is not 0 busy
		}
		row := []string{fmt.Sprintf("%.4g", s.OfferedRate), fmt.Sprintf("%.1f", s.Rate),
			Ms(s.LatencyMS.P50), Ms(s.LatencyMS.P95), Ms(s.LatencyMS.P99), Ms(s.LatencyMS.Max),
			fmt.Sprint(s.DroppedIterations), fmt.Sprint(s.Errors), busy}
		full.add(append(row, orDash(cls))...)
		narrow.add(row...)
		if cls != "" {
			classLines = append(classLines, fmt.Sprintf("error classes at %.4g req/s: %s\n", s.OfferedRate, cls))
		}
	}
	if full.fits(w) {
		return full.write(w)
	}
	if err := narrow.write(w); err != nil {
		return err
	}
	p := newPrinter(w)
	for _, l := range classLines {
		p.f("%s", l)
	}
	return p.err
}

// CurveFindings prints what a curve says: the knee (with Kneedle's second
// opinion), the collapse or its absence, the USL fit or why it gives no
// ceiling, and the capacity line.
func CurveFindings(w io.Writer, s analyze.CurveSummary) error {
	p := newPrinter(w)
	switch k := s.Knee; {
	case k.LastHealthyRate > 0 && k.FirstUnhealthyRate > 0:
		p.f("knee:      %s\n", kneeText(k))
	default:
		p.f("knee:      no knee found: %s\n", kneeText(k))
	}
	if c := s.Collapse; c != nil {
		p.f("collapse:  at %.4g req/s offered only %.4g req/s completed (under %.0f %% of the best rate before it)\n",
			c.AtRate, c.Rate, 100*analyze.CollapseFraction)
	} else {
		p.f("collapse:  none: achieved throughput never fell under %.0f %% of the best rate before it\n", 100*analyze.CollapseFraction)
	}
	if u := s.USL; u != nil {
		p.f("USL fit:   %s\n", USLText(*u))
	} else {
		p.f("USL fit:   no ceiling: %s\n", orDash(s.USLNote))
	}
	p.f("capacity:  %s\n", orDash(s.Capacity))
	return p.err
}

// USE prints a USE table: one row per resource, utilization, saturation
// and errors in words, then the probes that failed.
func USE(w io.Writer, t use.Table) error {
	p := newPrinter(w)
	title := t.Label
	if title == "" {
		title = "USE table"
	}
	p.f("%s\n", title)
	tab := table{indent: "  ", header: []string{"resource", "utilization", "saturation", "errors"}}
	for _, r := range t.Rows {
		tab.add(r.Resource.Title(), orDash(r.Utilization.Text), orDash(r.Saturation.Text), orDash(r.Errors.Text))
	}
	if p.err == nil {
		p.err = tab.write(w)
	}
	for _, prob := range t.Problems {
		p.f("  problem: %s\n", prob)
	}
	return p.err
}

// StepUSE prints the USE scan step by step in one matrix: a row per step,
// a column per resource that was measured, each cell the utilization
// headline and, after a slash, the saturation headline ("-" when not
// measured). This is where the resource that saturates first shows.
func StepUSE(w io.Writer, steps []use.Table) error {
	p := newPrinter(w)
	if len(steps) == 0 {
		p.f("USE per step: no steps\n")
		return p.err
	}
	var cols []use.Resource
	for _, r := range steps[0].Rows {
		if anyMeasured(steps, r.Resource) {
			cols = append(cols, r.Resource)
		}
	}
	p.f("USE per step (utilization / saturation, means over each step's measured part)\n")
	tab := table{indent: "  ", header: []string{"step"}}
	for _, c := range cols {
		tab.header = append(tab.header, c.Title())
	}
	for i, st := range steps {
		label := st.Label
		if label == "" {
			label = fmt.Sprintf("step %d", i+1)
		}
		row := []string{label}
		for _, c := range cols {
			r, _ := st.Row(c)
			row = append(row, headline(r.Utilization)+" / "+headline(r.Saturation))
		}
		tab.add(row...)
	}
	if p.err == nil {
		p.err = tab.write(w)
	}
	return p.err
}

func anyMeasured(steps []use.Table, res use.Resource) bool {
	for _, st := range steps {
		if r, ok := st.Row(res); ok && r.Measured() {
			return true
		}
	}
	return false
}

// headline is a cell's first measured metric, as a value only.
func headline(c use.Cell) string {
	s, ok := c.Headline()
	if !ok {
		return "-"
	}
	return use.FormatValue(s.Mean, s.Unit)
}

// Verdict prints the USE scan's answer: the bottleneck and its evidence,
// what else saturated at the same step, and for every other resource one
// line saying one thing: ruled out (under its thresholds), set aside (past
// one, and why it is not the bottleneck), or, all on one line, not measured.
func Verdict(w io.Writer, v use.Verdict) error {
	p := newPrinter(w)
	p.f("verdict: %s\n", orDash(v.Summary))
	if v.Bottleneck != "" {
		for _, s := range v.Evidence {
			p.f("  evidence: %s %s\n", s.Resource.Title(), s)
		}
		for _, s := range v.AlsoSaturated {
			p.f("  also saturated: %s %s\n", s.Resource.Title(), s)
		}
	}
	for _, r := range v.RuledOut {
		p.f("  ruled out: %s\n", r)
	}
	for _, r := range v.SetAside {
		p.f("  set aside: %s\n", r)
	}
	if len(v.NotMeasured) > 0 {
		p.f("  not measured, so not ruled out: %s\n", strings.Join(v.NotMeasured, ", "))
	}
	return p.err
}

// USEReport turns a USE table and its verdict into the report's
// bottleneck section (Markdown and HTML). The verdict's summary already
// carries the evidence.
func USEReport(t use.Table, v use.Verdict) *USETable {
	out := &USETable{Verdict: v.Summary}
	for _, r := range t.Rows {
		out.Rows = append(out.Rows, USERow{
			Resource:    r.Resource.Title(),
			Utilization: r.Utilization.Text,
			Saturation:  r.Saturation.Text,
			Errors:      r.Errors.Text,
		})
	}
	return out
}

// USLText describes a USL fit: its parameters, then its peak, or, when κ is
// 0 (no retrograde region), the ceiling λ/σ the throughput levels off at.
func USLText(u analyze.USL) string {
	params := fmt.Sprintf("σ=%.4g κ=%.4g λ=%.4g req/s", u.Sigma, u.Kappa, u.Lambda)
	if u.Kappa == 0 || u.PeakN == 0 {
		return fmt.Sprintf("%s: throughput levels off at %.4g req/s (λ/σ; κ=0, no retrograde region) (R²=%.3f)", params, u.PeakRate, u.R2)
	}
	return fmt.Sprintf("%s, peak %.4g req/s at N=%.4g (R²=%.3f)", params, u.PeakRate, u.PeakN, u.R2)
}
