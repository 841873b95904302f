package report

import (
	"fmt"
	"io"

	"github.com/knee-dev/knee/analyze"
)

// Repetitions prints each metric's median and range over repeated runs.
func Repetitions(w io.Writer, r analyze.RepetitionReport) error {
	p := newPrinter(w)
	p.f("over %d repetitions: median [min – max]\n", r.Runs)
	t := table{indent: "  ", right: []bool{false, true, false}}
	for _, m := range r.Metrics {
		t.add(m.Metric, fmt.Sprintf("%.3f", m.Median), fmt.Sprintf("[%.3f – %.3f]", m.Min, m.Max))
	}
	if p.err == nil {
		p.err = t.write(w)
	}
	for _, warn := range r.Warnings {
		p.f("  WARNING: %s\n", warn)
	}
	return p.err
}

// Comparison prints baseline vs candidate per metric: both ranges, the ratio
// of medians and whether the difference exceeds the run-to-run spread.
func Comparison(w io.Writer, c analyze.Comparison) error {
	p := newPrinter(w)
	p.f("baseline: %d runs, candidate: %d runs\n", c.BaseRuns, c.CandidateRuns)
	t := table{indent: "  ", header: []string{"metric", "baseline median [range]", "candidate median [range]", "ratio", "verdict"},
		right: []bool{false, false, false, true, false}}
	for _, m := range c.Metrics {
		verdict := m.Verdict
		if m.MannWhitney != nil {
			verdict += fmtP(m.MannWhitney.P)
		}
		switch {
		case m.RunsNeeded > 0:
			verdict += fmt.Sprintf(" (about %d runs a side would tell)", m.RunsNeeded)
		case m.Noise != "":
			verdict += " (" + m.Noise + ")"
		}
		t.add(m.Metric, spread(m.Base), spread(m.Candidate), Ratio(m.Ratio, m.Base.Median, 2), verdict)
	}
	if p.err == nil {
		p.err = t.write(w)
	}
	for _, warn := range c.Warnings {
		p.f("  WARNING: %s\n", warn)
	}
	return p.err
}

func spread(s analyze.Spread) string {
	return trimFloat(s.Median) + " [" + trimFloat(s.Min) + " – " + trimFloat(s.Max) + "]"
}
