package analyze

import (
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/knee-dev/knee/k6metric"
	"github.com/knee-dev/knee/rundir"
)

// Verdicts of Compare.
const (
	VerdictRealDifference = "real difference"
	VerdictWithinSpread   = "within run-to-run spread"
	// VerdictNoise: a side has fewer than MinRepetitions runs, too few to
	// tell any difference from run-to-run noise.
	VerdictNoise = "cannot be told from noise"
)

// MinRepetitions is the number of runs below which a range proves little.
const MinRepetitions = 3

// MannWhitneyMinRuns is how many runs each side needs before Compare also
// asks the Mann-Whitney U test.
const MannWhitneyMinRuns = 5

// ErrDifferentScenarios means the runs compared did not run the same scenarios.
var ErrDifferentScenarios = errors.New("analyze: runs have different scenarios")

// Spread is one metric over repetitions: the median of the runs' values and
// their range. (A median of run-level numbers, not a latency percentile.)
type Spread struct {
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	N      int     `json:"n"`
}

// MetricSpread is one metric's Spread.
type MetricSpread struct {
	Metric string `json:"metric"`
	Spread
}

// RepetitionReport summarises repeated runs of one test.
type RepetitionReport struct {
	Runs     int            `json:"runs"`
	Metrics  []MetricSpread `json:"metrics"`
	Warnings []string       `json:"warnings,omitempty"`
}

// metricValue is one named number of a summary.
type metricValue struct {
	name  string
	value float64
}

// summaryMetrics are the numbers compared across runs, in report order.
func summaryMetrics(s rundir.Summary) []metricValue {
	errRate := 0.0
	if s.Requests > 0 {
		errRate = float64(s.Errors) / float64(s.Requests)
	}
	return []metricValue{
		{"rate", s.Rate},
		{"p50_ms", s.LatencyMS.P50},
		{"p90_ms", s.LatencyMS.P90},
		{"p95_ms", s.LatencyMS.P95},
		{"p99_ms", s.LatencyMS.P99},
		{"p99.9_ms", s.LatencyMS.P999},
		{"max_ms", s.LatencyMS.Max},
		{"mean_ms", s.LatencyMS.Mean},
		{"error_rate", errRate},
		{k6metric.DroppedIterations, float64(s.DroppedIterations)},
		{"slower_than_1s", float64(s.SlowerThan1s)},
	}
}

// metricColumns turns summaries into one column of values per metric.
func metricColumns(ss []rundir.Summary) (names []string, cols [][]float64) {
	for i, s := range ss {
		for j, m := range summaryMetrics(s) {
			if i == 0 {
				names = append(names, m.name)
				cols = append(cols, make([]float64, 0, len(ss)))
			}
			cols[j] = append(cols[j], m.value)
		}
	}
	return names, cols
}

// spreadOf is the median and range of a few run-level numbers.
func spreadOf(xs []float64) Spread {
	if len(xs) == 0 {
		return Spread{}
	}
	s := Spread{Median: medianOf(xs), Min: xs[0], Max: xs[0], N: len(xs)}
	for _, x := range xs[1:] {
		s.Min, s.Max = min(s.Min, x), max(s.Max, x)
	}
	return s
}

// Repetitions gives each metric's median and [min, max] over repeated runs,
// and warns when there are fewer than MinRepetitions.
func Repetitions(ss []rundir.Summary) RepetitionReport {
	rep := RepetitionReport{Runs: len(ss)}
	names, cols := metricColumns(ss)
	for i, n := range names {
		rep.Metrics = append(rep.Metrics, MetricSpread{Metric: n, Spread: spreadOf(cols[i])})
	}
	if len(ss) < MinRepetitions {
		rep.Warnings = append(rep.Warnings, fewRunsWarning("", len(ss)))
	}
	return rep
}

func fewRunsWarning(side string, n int) string {
	if side != "" {
		side += ": "
	}
	return fmt.Sprintf("%sonly %d run(s): one run is an anecdote and its range says nothing about "+
		"run-to-run spread; repeat at least %d times", side, n, MinRepetitions)
}

// MetricComparison is one metric of base against candidate.
type MetricComparison struct {
	Metric      string       `json:"metric"`
	Base        Spread       `json:"base"`
	Candidate   Spread       `json:"candidate"`
	Ratio       float64      `json:"ratio"` // candidate median / base median; 0 when base is 0 (no ratio)
	Overlap     bool         `json:"ranges_overlap"`
	MannWhitney *MannWhitney `json:"mann_whitney,omitempty"`
	Verdict     string       `json:"verdict"`
	// RunsNeeded is, for VerdictNoise, about how many runs a side would
	// tell the difference of the medians from the spread the runs show
	// (RunsNeeded); 0 when the runs show no spread or no difference.
	RunsNeeded int `json:"runs_needed,omitempty"`
	// Noise says, for VerdictNoise, what RunsNeeded is or why there is none.
	Noise string `json:"noise,omitempty"`
}

// Comparison is Compare's answer.
type Comparison struct {
	BaseRuns      int                `json:"base_runs"`
	CandidateRuns int                `json:"candidate_runs"`
	Metrics       []MetricComparison `json:"metrics"`
	Warnings      []string           `json:"warnings,omitempty"`
}

// Compare sets repeated runs of a candidate against repeated runs of a base.
// With fewer than MinRepetitions runs on a side every metric "cannot be
// told from noise" (one run is an anecdote; two give a range that says
// little), with the runs a side RunsNeeded estimates. Otherwise a metric is
// a "real difference" only when the two ranges do not overlap and, when
// both sides have MannWhitneyMinRuns runs or more, the two-sided
// Mann-Whitney U test gives p < 0.05; else it is "within run-to-run
// spread". Runs of different scenarios are an error (ErrDifferentScenarios);
// different environments are warnings.
func Compare(base, cand []*rundir.Dir) (Comparison, error) {
	if len(base) == 0 || len(cand) == 0 {
		return Comparison{}, fmt.Errorf("analyze: compare needs at least one base and one candidate run (got %d and %d)",
			len(base), len(cand))
	}
	all := append(append([]*rundir.Dir(nil), base...), cand...)
	if err := sameScenarios(all); err != nil {
		return Comparison{}, err
	}
	out := Comparison{BaseRuns: len(base), CandidateRuns: len(cand)}
	names, bcols := metricColumns(summaries(base))
	_, ccols := metricColumns(summaries(cand))
	for i, n := range names {
		out.Metrics = append(out.Metrics, compareMetric(n, bcols[i], ccols[i]))
	}
	if len(base) < MinRepetitions || len(cand) < MinRepetitions {
		out.Warnings = append(out.Warnings, fmt.Sprintf("fewer than %d runs a side: no difference can be told from noise; "+
			"the runs a side a metric would need are 2·(1.96 + 0.84)²·s²/d², d the difference of its medians, s the "+
			"standard deviation of its runs within a side (pooled), at least %d", MinRepetitions, MinRepetitions))
	}
	if len(base) < MinRepetitions {
		out.Warnings = append(out.Warnings, fewRunsWarning("base", len(base)))
	}
	if len(cand) < MinRepetitions {
		out.Warnings = append(out.Warnings, fewRunsWarning("candidate", len(cand)))
	}
	out.Warnings = append(out.Warnings, environmentWarnings(all)...)
	return out, nil
}

func summaries(rs []*rundir.Dir) []rundir.Summary {
	out := make([]rundir.Summary, len(rs))
	for i, r := range rs {
		out[i] = Summarize(r, SummaryOptions{})
	}
	return out
}

// compareMetric judges one metric.
func compareMetric(name string, b, c []float64) MetricComparison {
	m := MetricComparison{Metric: name, Base: spreadOf(b), Candidate: spreadOf(c)}
	if m.Base.Median != 0 {
		m.Ratio = m.Candidate.Median / m.Base.Median
	}
	m.Overlap = m.Base.Min <= m.Candidate.Max && m.Candidate.Min <= m.Base.Max
	differs := !m.Overlap
	if len(b) >= MannWhitneyMinRuns && len(c) >= MannWhitneyMinRuns {
		mw := MannWhitneyU(b, c)
		m.MannWhitney = &mw
		differs = differs && mw.P < 0.05
	}
	m.Verdict = VerdictWithinSpread
	if differs {
		m.Verdict = VerdictRealDifference
	}
	if len(b) < MinRepetitions || len(c) < MinRepetitions {
		m.Verdict = VerdictNoise
		m.RunsNeeded, m.Noise = RunsNeeded(b, c)
	}
	return m
}

// zTwoSided5 and zPower80 are the standard normal quantiles of a two-sided
// 5 % test (0.975) and of 80 % power (0.80).
const (
	zTwoSided5 = 1.959964
	zPower80   = 0.841621
	// maxRunsNeeded bounds RunsNeeded: a difference that needs more is
	// none worth telling.
	maxRunsNeeded = 1_000_000
)

// RunsNeeded estimates how many runs a side would tell the difference of
// two sides' medians from their run-to-run spread, by the two-sample rule
// for a difference of means (normal approximation, 5 % two-sided, 80 %
// power): n = 2·(z₀.₉₇₅ + z₀.₈)²·s²/d², d the difference of the medians and
// s the standard deviation of the runs within a side, pooled over the sides
// with two runs or more; never fewer than MinRepetitions. With one run a
// side there is no spread to size from, and with equal medians no
// difference to tell: n is then 0 and why says so.
func RunsNeeded(b, c []float64) (n int, why string) {
	var ss float64
	df := 0
	for _, xs := range [][]float64{b, c} {
		if len(xs) < 2 {
			continue
		}
		mean := 0.0
		for _, x := range xs {
			mean += x
		}
		mean /= float64(len(xs))
		for _, x := range xs {
			ss += (x - mean) * (x - mean)
		}
		df += len(xs) - 1
	}
	d := math.Abs(medianOf(c) - medianOf(b))
	switch {
	case df == 0:
		return 0, "one run a side: no spread to size repetitions from"
	case d == 0:
		return 0, "equal medians: no difference to tell"
	}
	s := math.Sqrt(ss / float64(df))
	z := zTwoSided5 + zPower80
	need := 2 * z * z * s * s / (d * d)
	if need > maxRunsNeeded {
		return maxRunsNeeded, fmt.Sprintf("a difference of %.4g against a run-to-run standard deviation of %.4g needs over %d runs a side: as good as none", d, s, maxRunsNeeded)
	}
	n = max(MinRepetitions, int(math.Ceil(need)))
	return n, fmt.Sprintf("a difference of %.4g against a run-to-run standard deviation of %.4g needs about %d runs a side", d, s, n)
}

// sameScenarios checks that every run ran what the first one ran.
func sameScenarios(rs []*rundir.Dir) error {
	want := scenarioFingerprint(rs[0])
	for _, r := range rs[1:] {
		if got := scenarioFingerprint(r); got != want {
			return fmt.Errorf("%w: %s ran %s but %s ran %s; compare runs of the same test",
				ErrDifferentScenarios, runLabel(rs[0]), want, runLabel(r), got)
		}
	}
	return nil
}

// scenarioFingerprint is what must match between compared runs: each
// scenario's name, executor, model, rate, VUs and think time.
func scenarioFingerprint(r *rundir.Dir) string {
	s := ""
	for i, sc := range r.Meta.Scenarios {
		if i > 0 {
			s += "; "
		}
		s += fmt.Sprintf("%s (%s, %s, rate %g, %d VUs, think %s)",
			sc.Name, sc.Executor, sc.Model, sc.TargetRate, sc.VUs, sc.Think)
	}
	if s == "" {
		return "no scenarios"
	}
	return s
}

func runLabel(r *rundir.Dir) string {
	switch {
	case r.Meta.ID != "":
		return "run " + r.Meta.ID
	case r.Dir != "":
		return r.Dir
	}
	return "a run"
}

// ErrNotRepetitions means runs given as repetitions of one test are not:
// they ran different scenarios, models or targets.
var ErrNotRepetitions = errors.New("analyze: runs are not repetitions of one test")

// SameTest checks that runs are repetitions of one test: the same
// scenarios (as Compare requires: name, executor, model, rate, VUs, think),
// the same run model and the same requests (the target). A median over a
// closed and an open run, or over two endpoints, describes neither.
func SameTest(runs []*rundir.Dir) error {
	if len(runs) < 2 {
		return nil
	}
	want := testFingerprint(runs[0])
	for _, r := range runs[1:] {
		if got := testFingerprint(r); got != want {
			return fmt.Errorf("%w: %s ran %s but %s ran %s; report each run on its own, or set them side by side with knee compare",
				ErrNotRepetitions, runLabel(runs[0]), want, runLabel(r), got)
		}
	}
	return nil
}

// testFingerprint is scenarioFingerprint with the run's model and each
// scenario's requests.
func testFingerprint(r *rundir.Dir) string {
	s := scenarioFingerprint(r)
	if r.Meta.Model != "" {
		s = r.Meta.Model + " model: " + s
	}
	for _, sc := range r.Meta.Scenarios {
		reqs := append([]string(nil), sc.Requests...)
		sort.Strings(reqs)
		s += fmt.Sprintf("; %s requests %q", sc.Name, reqs)
	}
	return s
}
