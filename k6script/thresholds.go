package k6script

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/knee-dev/knee/analyze"
)

// OwnThreshold is a threshold judged on k6's metrics as k6 sums them
// (K6Metrics): the built-ins (http_req_duration, http_reqs, checks, ...),
// the script's custom metrics, and their submetrics on any tag.
type OwnThreshold struct {
	analyze.K6Expr
	Series string // the metric, or its submetric's name
}

// aggsOf are the aggregates a metric kind has (k6's metrics.Thresholds.Run).
var aggsOf = map[string][]string{
	KindTrend:   {"avg", "min", "max", "med", "p"},
	KindCounter: {"count", "rate"},
	KindRate:    {"rate"},
	KindGauge:   {"value"},
}

// SplitThresholds takes the thresholds knee judges on k6's metrics out of
// all, parsed (with one parser, package analyze's), and makes the
// submetrics they name so their values are summed from the start. The
// rest, on metrics knee takes from the run directory
// (dropped_iterations) or cannot judge, are left for analyze, which
// says which. Every problem is reported.
func (s *Script) SplitThresholds(all map[string][]string) (rest map[string][]string, own []OwnThreshold, err error) {
	rest = map[string][]string{}
	keys := make([]string, 0, len(all))
	for k := range all {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var errs []error
	for _, key := range keys {
		metric, tags, kerr := analyze.ParseK6Key(key)
		if kerr != nil {
			errs = append(errs, kerr)
			continue
		}
		kind := s.k6.kind(metric)
		if kind == "" {
			rest[key] = all[key]
			continue
		}
		for _, expr := range all[key] {
			e, perr := analyze.ParseK6Expr(key, expr)
			if perr != nil {
				errs = append(errs, perr)
				continue
			}
			if !hasAgg(kind, e.Agg) {
				errs = append(errs, fmt.Errorf("threshold %s: a %s has no aggregate %q; use %s, e.g. %s", e.Expr, kind, e.Agg,
					strings.Join(aggsOf[kind], ", "), example(kind)))
				continue
			}
			s.k6.want(metric, tags)
			own = append(own, OwnThreshold{K6Expr: e, Series: SubmetricName(metric, tags)})
		}
	}
	return rest, own, errors.Join(errs...)
}

func hasAgg(kind, agg string) bool {
	for _, a := range aggsOf[kind] {
		if a == agg {
			return true
		}
	}
	return false
}

func example(kind string) string {
	switch kind {
	case KindTrend:
		return "p(95)<200"
	case KindCounter:
		return "count>100"
	case KindGauge:
		return "value<10"
	}
	return "rate>0.99"
}

// EvaluateOwn judges the thresholds on k6's metrics as they stand (after
// the run, or during it for abortOnFail); span is the test's length so
// far, for a Counter's rate. Values are k6's: a Trend's percentile
// interpolates between its sorted values. A series with no values is
// judged as k6 judges it at the end (a Trend's aggregates and a Counter's
// are 0) with a note; a Rate with none k6 cannot judge, and neither
// fails.
func (s *Script) EvaluateOwn(ts []OwnThreshold, span time.Duration) []analyze.ThresholdResult {
	out := make([]analyze.ThresholdResult, 0, len(ts))
	for _, t := range ts {
		res := analyze.ThresholdResult{Expr: t.Expr}
		st, _ := s.k6.Stat(t.Series)
		var got float64
		switch t.Agg {
		case "avg":
			got = st.Avg
		case "min":
			got = st.Min
		case "max":
			got = st.Max
		case "med":
			got, _ = s.k6.percentile(t.Series, 50)
		case "p":
			got, _ = s.k6.percentile(t.Series, t.P)
		case "count": // a Counter's count is the sum of what was added, as in k6
			got, res.Unit = st.Sum, "count"
		case "rate":
			if st.Kind == KindCounter {
				got, res.Unit = math.NaN(), "per s"
				if span > 0 {
					got = st.Sum / span.Seconds()
				}
			} else {
				got, res.Unit = st.Rate, "fraction"
			}
		case "value":
			got = st.Value
		}
		if res.Unit == "" && s.isTime(t.Metric) {
			res.Unit = "ms"
		}
		res.Value = got
		switch {
		case st.Count == 0 && st.Kind == KindRate:
			res.Pass, res.Note = true, "no values: k6 cannot judge a rate of nothing, and does not fail it"
		case st.Count == 0:
			res.Pass, res.Note = analyze.CompareOp(got, t.Op, t.Value), "no values: judged as k6 does, on 0"
		default:
			res.Pass = analyze.CompareOp(got, t.Op, t.Value)
			if st.Sampled && (t.Agg == "p" || t.Agg == "med") {
				res.Note = fmt.Sprintf("estimated: %d values, a uniform sample of %d kept", st.Count, TrendKeep)
			}
		}
		out = append(out, res)
	}
	return out
}

// isTime reports whether a metric's values are durations in ms.
func (s *Script) isTime(metric string) bool {
	if k6Builtins[metric] == KindTrend {
		return true
	}
	s.metrics.mu.Lock()
	defer s.metrics.mu.Unlock()
	x, ok := s.metrics.byName[metric]
	return ok && x.isTime
}
