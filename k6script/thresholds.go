package k6script

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/knee-dev/knee/analyze"
	"github.com/knee-dev/knee/k6metric"
)

// OwnThreshold is a threshold judged on k6's metrics as k6 sums them
// (K6Metrics): the built-ins (http_req_duration, http_reqs, checks, ...),
// the script's custom metrics, and their submetrics on any tag.
type OwnThreshold struct {
	analyze.K6Expr
	Series string // the metric, or its submetric's name
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
		if metric == k6metric.DroppedIterations {
			// Judged on the run directory, whose count is the same as
			// k6's sum (RecordDropped), for knee merge to judge it too.
			rest[key] = all[key]
			continue
		}
		kind := s.k6.kind(metric)
		if kind == "" {
			// k6 refuses it too (metrics/thresholds.go: "no metric name %q
			// found"): a custom metric must be made in the init code.
			for _, expr := range all[key] {
				errs = append(errs, &analyze.ThresholdError{Expr: strings.TrimSpace(key) + ": " + expr,
					Msg: fmt.Sprintf("no metric named %q: neither k6's nor one the script's init code makes", metric),
					Fix: fmt.Sprintf("check the name, or make it at the top of the script: new Trend('%s'), Counter, Rate or Gauge from k6/metrics", metric)})
			}
			continue
		}
		for _, expr := range all[key] {
			e, perr := analyze.ParseK6Expr(key, expr)
			if perr != nil {
				errs = append(errs, perr)
				continue
			}
			if aerr := analyze.CheckK6Agg(e, kind); aerr != nil {
				errs = append(errs, aerr)
				continue
			}
			s.k6.want(metric, tags)
			own = append(own, OwnThreshold{K6Expr: e, Series: SubmetricName(metric, tags)})
		}
	}
	return rest, own, errors.Join(errs...)
}

// EvaluateOwn judges the thresholds on k6's metrics as they stand (after
// the run, or during it for abortOnFail) with analyze's evaluator, on the
// values k6's way sums; span is the test's length so far, for a Counter's
// rate.
func (s *Script) EvaluateOwn(ts []OwnThreshold, span time.Duration) []analyze.ThresholdResult {
	exprs := make([]analyze.K6Expr, len(ts))
	series := map[string]string{}
	for i, t := range ts {
		exprs[i] = t.K6Expr
		series[t.Expr] = t.Series
	}
	return analyze.EvaluateK6(exprs, func(e analyze.K6Expr) analyze.K6Series {
		name := series[e.Expr]
		st, _ := s.k6.Stat(name)
		return analyze.K6Series{Kind: st.Kind, Time: s.isTime(e.Metric), Count: st.Count, Sum: st.Sum, Rate: st.Rate,
			Value: st.Value, Min: st.Min, Max: st.Max, Avg: st.Avg, Sampled: st.Sampled, SampleSize: TrendKeep,
			Pct: func(p float64) float64 { v, _ := s.k6.percentile(name, p); return v }}
	}, span)
}

// isTime reports whether a metric's values are durations in ms.
func (s *Script) isTime(metric string) bool {
	if b, ok := k6metric.Lookup(metric); ok && b.Contains == k6metric.Time {
		return true
	}
	s.metrics.mu.Lock()
	defer s.metrics.mu.Unlock()
	x, ok := s.metrics.byName[metric]
	return ok && x.isTime
}
