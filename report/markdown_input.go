package report

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/knee-dev/knee/analyze"
	"github.com/knee-dev/knee/record"
	"github.com/knee-dev/knee/rundir"
)

// DefaultTicks is how many distribution points Build asks for per halving of
// the remaining tail: enough for a smooth curve up to p99.99 in a few dozen points.
const DefaultTicks = 5

// Input is everything a Markdown or HTML report shows, already computed.
// Report renders it and computes nothing: fill it by hand (tests, imports
// with partial data) or with Build. Optional parts are nil or empty and are
// then reported as "not measured" rather than left out silently.
type Input struct {
	Title  string // defaults to "knee report: <run id>"
	Goal   string // the question the run answers
	Data   string // the test data used (e.g. "5 ISBNs from books.txt")
	Action string // what changes next and how the next run verifies it

	Thresholds []analyze.ThresholdResult

	Meta      rundir.Meta    // what was asked and the environment note
	Summary   rundir.Summary // the whole run, every endpoint merged
	Endpoints []Endpoint     // one per (scenario, request name), in tag order

	Windows analyze.WindowReport
	// Timeline is the run in chart windows (analyze.ChartWindow): what the
	// HTML report's and the dashboard's charts over time draw.
	Timeline      analyze.Timeline
	CO            *analyze.COSignals
	Correction    *analyze.Correction
	Distributions []Distribution // percentile plots: the run, each endpoint, the corrected run

	Curve *analyze.CurveSummary // stepped runs only
	USE   *USETable             // nil: the bottleneck was not measured

	// Repetitions summarises this run and its repetitions (Runs 0: not given).
	Repetitions analyze.RepetitionReport
	// RunIDs are the runs Repetitions covers, this run first.
	RunIDs []string

	Notes []string // anything else the reader must know (e.g. why a section is empty)
}

// Endpoint is one request name of one scenario.
type Endpoint struct {
	Scenario string
	Name     string
	Summary  rundir.Summary
	// SharedCounters is true when the scenario has other endpoints too:
	// errors and dropped iterations are counted per scenario, so Summary's
	// are the whole scenario's, not this endpoint's.
	SharedCounters bool
}

// Label is "name" or "scenario · name" when the scenario is not the name.
func (e Endpoint) Label() string {
	switch {
	case e.Name == "":
		return e.Scenario
	case e.Scenario == "" || e.Scenario == e.Name:
		return e.Name
	}
	return e.Scenario + " · " + e.Name
}

// Distribution is one labelled percentile distribution (record.Histogram.Distribution).
type Distribution struct {
	Label  string
	Points []record.Point
}

// USETable is the bottleneck scan, filled by package use (or by hand):
// one row per resource and the verdict drawn from them.
type USETable struct {
	Rows    []USERow
	Verdict string
}

// USERow is one resource of a USE scan, in words with its evidence.
type USERow struct {
	Resource    string
	Utilization string
	Saturation  string
	Errors      string
}

// BuildOptions says what Build asks of analyze. The zero value reports a
// plain run: default windows, CO detection from run.json, no curve, no USE.
type BuildOptions struct {
	Goal, Data, Action string
	Thresholds         []analyze.Threshold
	Window             time.Duration     // 0: analyze.DefaultWindow
	CO                 analyze.COOptions // passed to analyze.DetectCO
	CorrectInterval    time.Duration     // 0: analyze.Correct picks the expected interval
	Plan               *analyze.StepPlan // nil: not a stepped run; Steps 0: inferred
	Health             analyze.Health
	USE                *USETable
	Ticks              int // distribution ticks per half distance; 0: DefaultTicks
}

// Build assembles the Input for runs[0]; runs[1:] are its repetitions and
// only feed Input.Repetitions. Runs that are not repetitions of one test
// (analyze.SameTest) are refused with the reason: their medians and ranges
// would describe no test. It calls analyze for every number and adds
// nothing of its own.
func Build(runs []*rundir.Dir, opt BuildOptions) (Input, error) {
	if len(runs) == 0 || runs[0] == nil {
		return Input{}, errors.New("report: build needs at least one run")
	}
	for i, rr := range runs {
		if rr == nil {
			return Input{}, fmt.Errorf("report: build: repetition %d is nil", i)
		}
	}
	if err := analyze.SameTest(runs); err != nil {
		return Input{}, err
	}
	r := runs[0]
	ticks := opt.Ticks
	if ticks <= 0 {
		ticks = DefaultTicks
	}
	co := opt.CO
	if co.ExpectedInterval == 0 {
		co.ExpectedInterval = opt.CorrectInterval
	}
	an, err := analyze.Analyze(r, analyze.Options{
		Window: opt.Window, CO: co, Thresholds: opt.Thresholds, Plan: opt.Plan, Health: opt.Health,
	})
	if err != nil {
		return Input{}, fmt.Errorf("report: build: %w", err)
	}
	in := Input{
		Goal: opt.Goal, Data: opt.Data, Action: opt.Action,
		Thresholds: an.Thresholds,
		Meta:       r.Meta,
		Summary:    an.Summary,
		Windows:    an.Windows,
		CO:         &an.CO,
		USE:        opt.USE,
	}
	if all := r.Merged(analyze.Selector{}.Of(record.Latency), 0, 0); all.Count() > 0 {
		in.Distributions = append(in.Distributions, Distribution{Label: "all requests", Points: all.Distribution(ticks)})
	}
	in.Endpoints = endpoints(r)
	in.Timeline = analyze.TimelineOf(r, 0)
	if len(in.Endpoints) > 1 {
		for _, e := range in.Endpoints {
			h := r.Merged(analyze.Selector{Scenario: e.Scenario, Name: e.Name}.Of(record.Latency), 0, 0)
			in.Distributions = append(in.Distributions, Distribution{Label: e.Label(), Points: h.Distribution(ticks)})
		}
	}
	switch c := an.Correction; {
	case c != nil:
		in.Correction = c
		if c.Corrected != nil && c.Corrected.Count() > 0 {
			in.Distributions = append(in.Distributions, Distribution{
				Label: "corrected for coordinated omission", Points: c.Corrected.Distribution(ticks)})
		}
	case an.CorrectionNote != "":
		in.Notes = append(in.Notes, "coordinated-omission correction not applied: "+an.CorrectionNote)
	}
	switch {
	case an.Steps != nil:
		in.Curve = &an.Steps.CurveSummary
	case an.NoSteps != nil:
		in.Notes = append(in.Notes, "throughput-latency curve not drawn: "+an.NoSteps.Error())
	}
	summaries := make([]rundir.Summary, 0, len(runs))
	for i, rr := range runs {
		s := in.Summary
		if i > 0 {
			s = analyze.Summarize(rr, analyze.SummaryOptions{})
		}
		summaries = append(summaries, s)
		in.RunIDs = append(in.RunIDs, rr.Meta.ID)
	}
	in.Repetitions = analyze.Repetitions(summaries)
	return in, nil
}

// endpoints summarises every (scenario, name) latency series of r, in tag order.
func endpoints(r *rundir.Dir) []Endpoint {
	seen := map[analyze.Selector]bool{}
	perScenario := map[string]int{}
	var sels []analyze.Selector
	for _, iv := range r.Intervals {
		for k := range iv.Histograms {
			s := analyze.Selector{Scenario: k.Scenario, Name: k.Name}
			if k.Metric == record.Latency && !seen[s] {
				seen[s] = true
				perScenario[s.Scenario]++
				sels = append(sels, s)
			}
		}
	}
	// Sorting names, not latencies, keeps the report stable across map order.
	slices.SortFunc(sels, func(a, b analyze.Selector) int {
		if a.Scenario != b.Scenario {
			return strings.Compare(a.Scenario, b.Scenario)
		}
		return strings.Compare(a.Name, b.Name)
	})
	out := make([]Endpoint, 0, len(sels))
	for _, s := range sels {
		sel, shared := s, perScenario[s.Scenario] > 1
		if !shared {
			sel.Name = "" // the endpoint is its whole scenario: counters are exact
		}
		out = append(out, Endpoint{
			Scenario: s.Scenario, Name: s.Name, SharedCounters: shared,
			Summary: analyze.Summarize(r, analyze.SummaryOptions{Select: sel}),
		})
	}
	return out
}
