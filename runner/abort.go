package runner

import (
	"fmt"
	"strings"
	"time"

	"github.com/knee-dev/knee/analyze"
	"github.com/knee-dev/knee/k6script"
	"github.com/knee-dev/knee/record"
	"github.com/knee-dev/knee/rundir"
)

// abortWatch judges a script's abortOnFail thresholds as the run goes, on
// everything measured so far: one cumulative interval (histograms merged,
// counters summed), so each judgement costs the same late in a run as
// early. They are judged at k6's pace (abortEvery), at the first interval
// that ends past each tick, so a test stops after about as much as k6's.
// Time is k6's test run duration (setup() included), as k6's metrics
// engine reads it for its ticks, a Counter's rate and delayAbortEval.
type abortWatch struct {
	s      *k6script.Script
	run    []analyze.Threshold      // judged on the run so far
	own    []k6script.OwnThreshold  // on k6's metrics, as k6 sums them
	delay  map[string]time.Duration // by Expr: delayAbortEval
	so     rundir.Dir               // the run so far, as one interval
	hists  record.Series
	counts map[string]rundir.IntervalCounters
	since  func() time.Duration // the test run's duration so far
	next   time.Duration        // the next judgement is due at this test run duration
}

// abortEvery is how often k6 judges thresholds during a run (its metrics
// engine's thresholdsRate, 2 s in k6 v1.8.1).
const abortEvery = 2 * time.Second

// nextJudgement is k6's first tick after elapsed: ticks fall on multiples
// of abortEvery, and an interval that ends late does not shift them.
func nextJudgement(elapsed time.Duration) time.Duration {
	return (elapsed/abortEvery + 1) * abortEvery
}

// newAbortWatch picks the thresholds plan marks abortOnFail; nil when none.
// since reads the test run's duration.
func newAbortWatch(s *k6script.Script, plan *k6script.Plan, since func() time.Duration) (*abortWatch, error) {
	if len(plan.AbortOnFail) == 0 {
		return nil, nil
	}
	delay := map[string]time.Duration{}
	for expr, d := range plan.AbortOnFail {
		delay[normalExpr(expr)] = d
	}
	runTs, ownTs, err := s.SplitThresholds(plan.Thresholds)
	if err != nil {
		return nil, err
	}
	ts, err := analyze.ParseK6Thresholds(runTs)
	if err != nil {
		return nil, err
	}
	w := &abortWatch{s: s, delay: delay, hists: record.Series{}, counts: map[string]rundir.IntervalCounters{}, since: since, next: abortEvery}
	for _, t := range ts {
		if _, ok := delay[normalExpr(t.Expr)]; ok {
			w.run = append(w.run, t)
		}
	}
	for _, t := range ownTs {
		if _, ok := delay[normalExpr(t.Expr)]; !ok {
			continue
		}
		w.own = append(w.own, t)
	}
	return w, nil
}

// normalExpr is "metric: expression" with the spaces around each part
// trimmed, so the script's key and the parsed Expr compare equal.
func normalExpr(e string) string {
	m, x, _ := strings.Cut(e, ": ")
	return strings.TrimSpace(m) + ": " + strings.TrimSpace(x)
}

// add takes one interval and returns why the run must stop (a threshold
// with abortOnFail that fails on the run so far, past its delayAbortEval),
// or "".
func (w *abortWatch) add(meta *rundir.Meta, snap record.IntervalSnapshot) string {
	w.hists.Add(snap.Histograms)
	for sc, c := range snap.Counters {
		have := w.counts[sc]
		have.Scenario = sc
		have.Counters.Add(c)
		have.End = snap.End.Seconds()
		w.counts[sc] = have
	}
	w.so.Meta = *meta
	w.so.Intervals = []rundir.Interval{{Start: 0, End: snap.End, Histograms: w.hists, Counters: w.counts}}
	// k6 judges on its test run duration (metrics/engine evaluateThresholds),
	// and aborts only once it is past delayAbortEval (metrics/thresholds.go
	// runAll: AbortGracePeriod < timeSpentInTest).
	elapsed := w.since()
	if elapsed < w.next {
		return ""
	}
	w.next = nextJudgement(elapsed)
	var due []analyze.Threshold
	for _, t := range w.run {
		if elapsed > w.delay[normalExpr(t.Expr)] {
			due = append(due, t)
		}
	}
	var own []k6script.OwnThreshold
	for _, t := range w.own {
		if elapsed > w.delay[normalExpr(t.Expr)] {
			own = append(own, t)
		}
	}
	results := append(analyze.EvaluateThresholds(&w.so, due), w.s.EvaluateOwn(own, elapsed)...)
	for _, r := range results {
		if !r.Pass && r.Note == "" { // nothing measured yet is not a crossing
			return fmt.Sprintf("threshold %s crossed at %s of the test run (%s): abortOnFail stopped the test", r.Expr, elapsed.Round(time.Millisecond), r.Measured())
		}
	}
	return ""
}
