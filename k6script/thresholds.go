package k6script

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/knee-dev/knee/analyze"
)

// OwnThreshold is a threshold on what only the script measures: checks
// (rate) and its custom metrics. The rest (http_req_duration, ...) are
// judged on the run directory by package analyze.
type OwnThreshold struct {
	Expr   string // "metric: expression", as analyze writes them
	Metric string
	Agg    string  // avg, min, max, med, p, count, rate, value
	P      float64 // for p(N)
	Op     string
	Value  float64
}

var ownExpr = regexp.MustCompile(`^\s*(avg|min|max|med|count|rate|value|p\((\d+(?:\.\d+)?)\))\s*(<=|>=|===|==|!==|!=|<|>)\s*(-?\d+(?:\.\d+)?(?:e-?\d+)?)\s*$`)

// aggsOf are the aggregates a metric kind has (k6's).
var aggsOf = map[string][]string{
	KindTrend:   {"avg", "min", "max", "med", "p"},
	KindCounter: {"count", "rate"},
	KindRate:    {"rate"},
	KindGauge:   {"value", "min", "max"},
}

// SplitThresholds takes the thresholds on checks and on the script's custom
// metrics out of all, parsed; the rest are left for analyze. Every problem
// is reported.
func (s *Script) SplitThresholds(all map[string][]string) (rest map[string][]string, own []OwnThreshold, err error) {
	rest = map[string][]string{}
	kinds := map[string]string{"checks": KindRate}
	s.metrics.mu.Lock()
	for n, m := range s.metrics.byName {
		kinds[n] = m.kind
	}
	s.metrics.mu.Unlock()
	keys := make([]string, 0, len(all))
	for k := range all {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var errs []error
	for _, key := range keys {
		metric := strings.TrimSpace(key)
		kind, ok := kinds[metric]
		if !ok && isGroupSeries(metric) {
			kind, ok = KindTrend, true // k6's group_duration or http_req_duration of one group, a time Trend
		}
		if !ok {
			if i := strings.IndexByte(metric, '{'); i > 0 {
				if _, custom := kinds[metric[:i]]; custom {
					errs = append(errs, fmt.Errorf("threshold %s: tags on a custom metric or checks are not supported by knee; remove {...}", key))
					continue
				}
			}
			rest[key] = all[key]
			continue
		}
		for _, expr := range all[key] {
			t, err := parseOwn(metric, kind, expr)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			own = append(own, t)
		}
	}
	return rest, own, errors.Join(errs...)
}

// isGroupSeries reports whether metric is one of the Trend series knee
// keeps per group: "group_duration{group:::a}" or
// "http_req_duration{group:::a::b}", the group tag alone.
func isGroupSeries(metric string) bool {
	for _, prefix := range []string{"group_duration{group:", "http_req_duration{group:"} {
		if g, ok := strings.CutPrefix(metric, prefix); ok && strings.HasSuffix(g, "}") {
			return strings.HasPrefix(g, "::") && !strings.ContainsAny(strings.TrimSuffix(g, "}"), ",{}")
		}
	}
	return false
}

func parseOwn(metric, kind, expr string) (OwnThreshold, error) {
	m := ownExpr.FindStringSubmatch(expr)
	full := metric + ": " + expr
	if m == nil {
		return OwnThreshold{}, fmt.Errorf("threshold %s: write AGGREGATE OP NUMBER, e.g. %s", full, example(kind))
	}
	op := m[3]
	switch op { // JavaScript's === and !== are == and != on numbers
	case "===":
		op = "=="
	case "!==":
		op = "!="
	}
	t := OwnThreshold{Expr: full, Metric: metric, Agg: m[1], Op: op}
	if m[2] != "" {
		t.Agg = "p"
		t.P, _ = strconv.ParseFloat(m[2], 64)
		if t.P < 0 || t.P > 100 {
			return t, fmt.Errorf("threshold %s: p(N) needs N between 0 and 100", full)
		}
	}
	t.Value, _ = strconv.ParseFloat(m[4], 64)
	for _, a := range aggsOf[kind] {
		if a == t.Agg {
			return t, nil
		}
	}
	return t, fmt.Errorf("threshold %s: a %s has no aggregate %q; use %s", full, kind, t.Agg, strings.Join(aggsOf[kind], ", "))
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

// EvaluateOwn judges the thresholds after the run on the custom metrics'
// results ms (Script.Metrics); span is the run's measured length, for a
// Counter's rate.
func (s *Script) EvaluateOwn(ts []OwnThreshold, ms []MetricResult, span time.Duration) []analyze.ThresholdResult {
	byName := map[string]MetricResult{}
	for _, r := range ms {
		byName[r.Name] = r
	}
	out := make([]analyze.ThresholdResult, 0, len(ts))
	for _, t := range ts {
		res := analyze.ThresholdResult{Expr: t.Expr}
		var got float64
		var have bool
		if t.Metric == "checks" {
			rate, total := s.Checks.Rate()
			got, have, res.Unit = rate, total > 0, "fraction"
		} else {
			m := byName[t.Metric]
			have = m.Count > 0
			switch t.Agg {
			case "avg":
				got = m.Avg
			case "min":
				got = m.Min
			case "max":
				got = m.Max
			case "med":
				got = m.Percentile(50)
			case "p":
				got = m.Percentile(t.P)
			case "count": // a Counter's count is the sum of what was added, as in k6
				got, res.Unit = m.Sum, "count"
			case "rate":
				if m.Kind == KindCounter {
					got, res.Unit = math.NaN(), "per s"
					if span > 0 {
						got = m.Sum / span.Seconds()
					}
				} else {
					got, res.Unit = m.Rate, "fraction"
				}
			case "value":
				got = m.Value
			}
			if res.Unit == "" && m.Time {
				res.Unit = "ms"
			}
		}
		res.Value = got
		if !have {
			res.Note = "no values"
			out = append(out, res)
			continue
		}
		res.Pass = analyze.CompareOp(got, t.Op, t.Value)
		out = append(out, res)
	}
	return out
}
