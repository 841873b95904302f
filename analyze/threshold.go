package analyze

import (
	"fmt"
	"strconv"
	"time"

	"github.com/knee-dev/knee/record"
	"github.com/knee-dev/knee/rundir"
)

// ThresholdResult is one evaluated threshold.
type ThresholdResult struct {
	Expr  string  `json:"expr"`
	Value float64 `json:"value"`
	Unit  string  `json:"unit"` // "ms", "req/s", "requests", "fraction"
	Pass  bool    `json:"pass"`
	Note  string  `json:"note,omitempty"`
}

// Measured says what the threshold measured, in its unit: a fraction as a
// percentage ("0.00 %", as thresholds on errors are written), anything else
// as the number and its unit; the note, if any, follows.
func (r ThresholdResult) Measured() string {
	var v string
	switch r.Unit {
	case "fraction":
		v = fmt.Sprintf("%.2f %%", r.Value*100)
	case "":
		v = strconv.FormatFloat(r.Value, 'g', -1, 64)
	default:
		v = strconv.FormatFloat(r.Value, 'g', -1, 64) + " " + r.Unit
	}
	if r.Note != "" {
		v += " (" + r.Note + ")"
	}
	return "measured " + v
}

// EvaluateThresholds tests every threshold against the whole run: latencies
// from the merged histogram of the threshold's tags, counts and errors from
// the counters. A latency threshold over no requests fails with a note:
// nothing measured is not a pass.
func EvaluateThresholds(r *rundir.Dir, ts []Threshold) []ThresholdResult {
	out := make([]ThresholdResult, 0, len(ts))
	for _, t := range ts {
		out = append(out, evaluateThreshold(r, t))
	}
	return out
}

// ThresholdsPass reports whether every result passed.
func ThresholdsPass(rs []ThresholdResult) bool {
	for _, r := range rs {
		if !r.Pass {
			return false
		}
	}
	return true
}

func evaluateThreshold(r *rundir.Dir, t Threshold) ThresholdResult {
	res := ThresholdResult{Expr: t.Expr}
	if res.Expr == "" {
		res.Expr = t.String()
	}
	lat := r.Merged(t.Select.Of(record.Latency), 0, 0)
	c := countersOf(r, t.Select.Scenario, 0, 0)
	requests := requestsOf(c, lat, t.Select)
	switch t.Agg {
	case AggPercentile, AggMed, AggAvg, AggMin, AggMax:
		res.Unit = "ms"
		if lat.Count() == 0 {
			res.Note = "no requests matched" + selectorNote(t.Select)
			return res
		}
		res.Value = durationMS(latencyAggregate(lat, t))
	case AggRate:
		res.Unit = "req/s"
		if span := measuredSpan(r); span > 0 {
			res.Value = float64(requests) / span.Seconds()
		}
	case AggRequests:
		res.Unit, res.Value = "requests", float64(requests)
	case AggErrors, AggFailed:
		res.Unit = "fraction"
		if c.Requests == 0 {
			res.Note = "no requests counted" + selectorNote(t.Select)
			return res
		}
		n := c.Errors
		if t.Agg == AggFailed {
			n = c.Failed
		}
		res.Value = float64(n) / float64(c.Requests)
	case AggDropped:
		res.Unit, res.Value = "requests", float64(c.DroppedIterations)
	default:
		res.Note = fmt.Sprintf("unknown aggregate %q", t.Agg)
		return res
	}
	res.Pass = CompareOp(res.Value, t.Op, t.Value)
	return res
}

// latencyAggregate reads t's latency aggregate from the merged histogram.
func latencyAggregate(h *record.Histogram, t Threshold) time.Duration {
	switch t.Agg {
	case AggPercentile:
		return h.Percentile(t.Pct)
	case AggMed:
		return h.Percentile(50)
	case AggAvg:
		return h.Mean()
	case AggMin:
		return h.Min()
	}
	return h.Max()
}

// CompareOp applies a threshold's op (< <= > >= == !=) to got and want; an
// unknown op never passes.
func CompareOp(got float64, op string, want float64) bool {
	switch op {
	case "<":
		return got < want
	case "<=":
		return got <= want
	case ">":
		return got > want
	case ">=":
		return got >= want
	case "==":
		return got == want
	case "!=":
		return got != want
	}
	return false
}

func selectorNote(s Selector) string {
	if str := s.String(); str != "" {
		return " " + str
	}
	return ""
}
