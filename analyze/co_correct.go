package analyze

import (
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/knee-dev/knee/record"
	"github.com/knee-dev/knee/rundir"
)

// ErrNoCorrection means Correct had nothing to correct: no closed-model
// latencies, or no way to know the expected interval.
var ErrNoCorrection = errors.New("analyze: nothing to correct for coordinated omission")

// Where Correct took a scenario's expected interval from.
const (
	IntervalGiven    = "given"
	IntervalMetric   = "interval metric median"
	IntervalResponse = "median response + think"
)

// ScenarioCorrection is the expected interval Correct used for one scenario.
type ScenarioCorrection struct {
	Scenario   string  `json:"scenario"`
	IntervalMS float64 `json:"interval_ms"`
	Source     string  `json:"source"` // IntervalGiven, IntervalMetric or IntervalResponse
}

// Correction holds the raw and the corrected latencies side by side; the
// corrected numbers estimate what an open-model run would have measured and
// never replace the raw ones.
type Correction struct {
	Raw       *record.Histogram `json:"-"`
	Corrected *record.Histogram `json:"-"`

	RawMS                 record.Latencies     `json:"raw_ms"`
	CorrectedMS           record.Latencies     `json:"corrected_ms"`
	RawCount              int64                `json:"raw_count"`
	CorrectedCount        int64                `json:"corrected_count"` // raw plus synthetic values
	RawSlowerThan1s       int64                `json:"raw_slower_than_1s"`
	CorrectedSlowerThan1s int64                `json:"corrected_slower_than_1s"`
	Scenarios             []ScenarioCorrection `json:"scenarios"`
	Skipped               []string             `json:"skipped,omitempty"` // open-model scenarios, already uncoordinated
}

// Correct applies HdrHistogram's coordinated-omission correction to the
// closed-model latencies of r: every value d adds d-I, d-2I, ... down to I,
// the requests a VU would have sent had it not been waiting. The expected
// interval I of each scenario is, in order: interval if > 0; the median of
// the recorded Interval metric (response + think, per VU); or the median
// response plus the scenario's think time. Open-model scenarios already count
// from the intended start: they are merged unchanged and listed in Skipped.
func Correct(r *rundir.Dir, interval time.Duration) (Correction, error) {
	out := Correction{Raw: record.NewHistogram(), Corrected: record.NewHistogram()}
	for _, sc := range latencyScenarios(r) {
		lat := r.Merged(Selector{Scenario: sc}.Of(record.Latency), 0, 0)
		out.Raw.Merge(lat)
		if scenarioModel(r, sc) == "open" {
			out.Corrected.Merge(lat)
			out.Skipped = append(out.Skipped, sc)
			continue
		}
		i, source, err := expectedInterval(r, sc, lat, interval)
		if err != nil {
			return Correction{}, err
		}
		out.Corrected.Merge(lat.Corrected(i))
		out.Scenarios = append(out.Scenarios, ScenarioCorrection{Scenario: sc, IntervalMS: durationMS(i), Source: source})
	}
	if len(out.Scenarios) == 0 {
		return Correction{}, fmt.Errorf("%w: no closed-model latencies in the run (open-model runs need no correction)",
			ErrNoCorrection)
	}
	out.RawMS, out.CorrectedMS = out.Raw.Latencies(), out.Corrected.Latencies()
	out.RawCount, out.CorrectedCount = out.Raw.Count(), out.Corrected.Count()
	out.RawSlowerThan1s = out.Raw.CountAbove(time.Second)
	out.CorrectedSlowerThan1s = out.Corrected.CountAbove(time.Second)
	return out, nil
}

// expectedInterval picks one scenario's I (see Correct).
func expectedInterval(r *rundir.Dir, sc string, lat *record.Histogram, given time.Duration) (time.Duration, string, error) {
	var i time.Duration
	var source string
	switch iv := r.Merged(Selector{Scenario: sc}.Of(record.Interval), 0, 0); {
	case given > 0:
		i, source = given, IntervalGiven
	case iv.Count() > 0:
		i, source = iv.Percentile(50), IntervalMetric
	default:
		i, source = lat.Percentile(50)+scenarioThink(r, sc), IntervalResponse
	}
	if i <= 0 {
		return 0, source, fmt.Errorf("%w: scenario %q has no interval metric, no latencies and no think time; "+
			"give the expected interval (response + think) explicitly", ErrNoCorrection, sc)
	}
	return i, source, nil
}

// latencyScenarios lists the scenarios with latency series, sorted.
func latencyScenarios(r *rundir.Dir) []string {
	seen := make(map[string]bool)
	var out []string
	for _, iv := range r.Intervals {
		for k := range iv.Histograms {
			if k.Metric == record.Latency && !seen[k.Scenario] {
				seen[k.Scenario] = true
				out = append(out, k.Scenario)
			}
		}
	}
	sort.Strings(out)
	return out
}

// scenarioModel is a scenario's model from run.json, else the run's.
func scenarioModel(r *rundir.Dir, sc string) string {
	for _, s := range r.Meta.Scenarios {
		if s.Name == sc && s.Model != "" {
			return s.Model
		}
	}
	return r.Meta.Model
}

// scenarioThink is a scenario's think time from run.json.
func scenarioThink(r *rundir.Dir, sc string) time.Duration {
	for _, s := range r.Meta.Scenarios {
		if s.Name == sc {
			return s.Think
		}
	}
	return 0
}

// Summary is raw with its request count, latencies and slower-than-1 s count
// taken from the corrected histogram, so raw and corrected export the same
// fields side by side. Service time, send lag and warnings describe the raw
// requests only and are left out.
func (c Correction) Summary(raw rundir.Summary) rundir.Summary {
	s := raw
	s.Requests = c.CorrectedCount
	s.LatencyMS = c.CorrectedMS
	s.SlowerThan1s = c.CorrectedSlowerThan1s
	s.ServiceMS, s.SendLagMS, s.Warnings = nil, nil, nil
	if s.DurationS > 0 {
		s.Rate = float64(s.Requests) / s.DurationS
	}
	return s
}
