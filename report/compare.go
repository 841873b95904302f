package report

import (
	"io"

	"github.com/knee-dev/knee/analyze"
)

// Repetitions prints each metric's median and range over repeated runs.
func Repetitions(w io.Writer, r analyze.RepetitionReport) error {
	p := &printer{w: w}
	p.f("over %d repetitions: median [min – max]\n", r.Runs)
	for _, m := range r.Metrics {
		p.f("  %-20s %12.3f [%.3f – %.3f]\n", m.Metric, m.Median, m.Min, m.Max)
	}
	for _, warn := range r.Warnings {
		p.f("  WARNING: %s\n", warn)
	}
	return p.err
}

// Comparison prints baseline vs candidate per metric: both ranges, the ratio
// of medians and whether the difference exceeds the run-to-run spread.
func Comparison(w io.Writer, c analyze.Comparison) error {
	p := &printer{w: w}
	p.f("baseline: %d runs, candidate: %d runs\n", c.BaseRuns, c.CandidateRuns)
	p.f("  %-18s %-30s %-30s %8s  %s\n", "metric", "baseline median [range]", "candidate median [range]", "ratio", "verdict")
	for _, m := range c.Metrics {
		b := spread(m.Base)
		cd := spread(m.Candidate)
		verdict := m.Verdict
		if m.MannWhitney != nil {
			verdict += fmtP(m.MannWhitney.P)
		}
		p.f("  %-18s %-30s %-30s %7.2f×  %s\n", m.Metric, b, cd, m.Ratio, verdict)
	}
	for _, warn := range c.Warnings {
		p.f("  WARNING: %s\n", warn)
	}
	return p.err
}

func spread(s analyze.Spread) string {
	return trimFloat(s.Median) + " [" + trimFloat(s.Min) + " – " + trimFloat(s.Max) + "]"
}
