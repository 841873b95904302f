package analyze

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// k6Metric says how one k6 metric's threshold aggregates map onto knee's.
type k6Metric struct {
	aggs map[string]Aggregate // k6 aggregate word -> knee aggregate; nil = latency (passed through)
	desc string
}

// k6MetricSpec describes the k6 metrics whose thresholds knee can evaluate.
func k6MetricSpec(metric string) (k6Metric, bool) {
	switch metric {
	case "http_req_duration":
		return k6Metric{desc: "p(N), avg, med, min, max"}, true
	case "http_req_failed":
		return k6Metric{aggs: map[string]Aggregate{"rate": AggFailed}, desc: "rate"}, true
	case "http_reqs", "iterations":
		return k6Metric{aggs: map[string]Aggregate{"count": AggRequests, "rate": AggRate}, desc: "count, rate"}, true
	case "dropped_iterations":
		return k6Metric{aggs: map[string]Aggregate{"count": AggDropped}, desc: "count"}, true
	}
	return k6Metric{}, false
}

// ParseK6Thresholds parses k6's metric-keyed form, as in a k6 script's
// options.thresholds:
//
//	http_req_duration: ['p(95)<200', 'p(99)<1000']     (a bare number is ms)
//	http_req_duration{name:GET /x}: ['p(95)<100']
//	http_req_failed: ['rate<0.01']                      (k6's rule: transport errors and statuses >= 400)
//	http_reqs: ['rate>190'], iterations: ['count>1000']
//	dropped_iterations: ['count==0']
//
// Each Threshold's Expr is "metric: expression". Every error is reported.
func ParseK6Thresholds(m map[string][]string) ([]Threshold, error) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys) // map order must not change the report
	var out []Threshold
	var errs []error
	for _, key := range keys {
		for _, expr := range m[key] {
			t, err := parseK6Threshold(key, expr)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			out = append(out, t)
		}
	}
	return out, errors.Join(errs...)
}

// parseK6Threshold translates one k6 expression of metric key into knee's syntax.
func parseK6Threshold(key, expr string) (Threshold, error) {
	full := key + ": " + expr
	metric, tags := key, ""
	if i := strings.IndexByte(key, '{'); i >= 0 {
		metric, tags = strings.TrimSpace(key[:i]), key[i:]
	}
	spec, ok := k6MetricSpec(metric)
	if !ok {
		return Threshold{}, &ThresholdError{Expr: full, Msg: fmt.Sprintf("knee cannot evaluate k6 metric %q", metric),
			Fix: "use http_req_duration, http_req_failed, http_reqs, iterations or dropped_iterations"}
	}
	body := strings.TrimSpace(expr)
	if spec.aggs != nil {
		word := body
		if i := strings.IndexAny(body, "<>=! "); i >= 0 {
			word = body[:i]
		}
		agg, ok := spec.aggs[word]
		if !ok {
			return Threshold{}, &ThresholdError{Expr: full,
				Msg: fmt.Sprintf("%s has no aggregate %q", metric, word), Fix: "use " + spec.desc}
		}
		body = string(agg) + body[len(word):]
	}
	t, err := ParseThreshold(tags + body)
	if err != nil {
		var te *ThresholdError
		if errors.As(err, &te) {
			te.Expr = full
		}
		return Threshold{}, err
	}
	if spec.aggs == nil && !t.Agg.latencyAgg() {
		return Threshold{}, &ThresholdError{Expr: full,
			Msg: fmt.Sprintf("%s has no aggregate %q", metric, t.Agg), Fix: "use " + spec.desc}
	}
	t.Expr = full
	return t, nil
}
