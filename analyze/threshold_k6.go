package analyze

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/knee-dev/knee/k6metric"
)

// K6Expr is one k6 threshold expression, "AGGREGATE OP NUMBER" as k6's
// metrics/thresholds_parser.go reads it, for a metric's values that
// package k6script sums as k6 does.
type K6Expr struct {
	Expr   string            // "key: expression", as written
	Metric string            // the metric, without its tags
	Tags   map[string]string // the submetric's tags; nil for the whole metric
	Agg    string            // avg, min, max, med, p, count, rate, value
	P      float64           // for p(N): N
	Op     string            // <, <=, >, >=, ==, !=
	Value  float64
}

// ParseK6Key reads a threshold's key as k6 v1.8.1 reads it: first
// metrics.ParseMetricName (which k6's Thresholds.Validate calls), then the
// metrics engine's Metric.AddSubmetric. The metric is the text before the
// first '{' as written (k6 looks that name up, spaces and all); one '}'
// ends the key; every tag has a non-empty text after its first ':'; the
// tags are split at ',', each at its first ':', spaces and then quotes
// trimmed around key and value (a value of spaces is the empty value).
func ParseK6Key(key string) (metric string, tags map[string]string, err error) {
	open, closing := strings.IndexByte(key, '{'), strings.LastIndexByte(key, '}')
	if open < 0 && closing < 0 {
		return key, nil, nil
	}
	if open < 0 || closing < 0 || closing < open || closing != len(key)-1 {
		return "", nil, fmt.Errorf("threshold key %q: write metric{tag:value,...} with one closing brace at its end", key)
	}
	inner := key[open+1 : closing]
	tags = map[string]string{}
	for _, kv := range strings.Split(inner, ",") {
		k, v, _ := strings.Cut(kv, ":")
		if v == "" {
			if strings.TrimSpace(inner) == "" {
				return "", nil, fmt.Errorf("threshold key %q: the tags between {} are empty; remove {} or name a tag", key)
			}
			return "", nil, fmt.Errorf("threshold key %q: tag %q: write tag:value", key, strings.TrimSpace(kv))
		}
		tags[strings.Trim(strings.TrimSpace(k), `"'`)] = strings.Trim(strings.TrimSpace(v), `"'`)
	}
	return key[:open], tags, nil
}

// ParseK6Expr reads one k6 threshold of key (metric or
// metric{tag:value,...}) as k6 v1.8.1's metrics/thresholds_parser.go
// does: the first of <=, <, >=, >, ===, ==, != with text after it splits
// the expression (so "count!==5" reads as the method "count!", refused as
// k6 refuses it); the method is value, count, rate, avg, min, med, max or
// p(N); the value is any float Go's strconv reads (".5", "1e3"). === reads
// as ==.
func ParseK6Expr(key, expr string) (K6Expr, error) {
	full := strings.TrimSpace(key) + ": " + strings.TrimSpace(expr)
	metric, tags, err := ParseK6Key(key)
	if err != nil {
		return K6Expr{}, &ThresholdError{Expr: full, Msg: err.Error(), Fix: "e.g. http_req_duration{status:200}"}
	}
	bad := func(msg string) (K6Expr, error) {
		return K6Expr{}, &ThresholdError{Expr: full, Msg: msg, Fix: "e.g. p(95)<200, rate<0.01, count>100"}
	}
	var method, value string
	e := K6Expr{Expr: full, Metric: metric, Tags: tags}
	for _, op := range []string{"<=", "<", ">=", ">", "===", "==", "!="} {
		left, right, _ := strings.Cut(expr, op)
		if right != "" {
			method, e.Op, value = strings.TrimSpace(left), op, strings.TrimSpace(right)
			break
		}
	}
	if e.Op == "" {
		return bad("not AGGREGATE OP NUMBER: no operator (<, <=, >, >=, ==, ===, !=) with a value after it")
	}
	if e.Op == "===" {
		e.Op = "=="
	}
	switch {
	case method == "value" || method == "count" || method == "rate" || method == "avg" || method == "min" || method == "med" || method == "max":
		e.Agg = method
	case strings.HasPrefix(method, "p(") && strings.HasSuffix(method, ")"):
		p, err := strconv.ParseFloat(method[2:len(method)-1], 64)
		if err != nil {
			return bad(fmt.Sprintf("percentile %q is not a number", method))
		}
		if p < 0 || p > 100 {
			return e, &ThresholdError{Expr: full, Msg: "p(N) needs N between 0 and 100", Fix: "e.g. p(99.9)"}
		}
		e.Agg, e.P = "p", p
	default:
		return bad(fmt.Sprintf("%q is none of k6's aggregation methods (value, count, rate, avg, min, med, max, p(N))", method))
	}
	v, err := strconv.ParseFloat(value, 64)
	if err != nil {
		return bad(fmt.Sprintf("the value %q is not a number", value))
	}
	e.Value = v
	return e, nil
}

// k6Metric says how one k6 metric's threshold aggregates map onto knee's.
type k6Metric struct {
	aggs map[string]Aggregate // k6 aggregate word -> knee aggregate; nil = latency (passed through)
	desc string
}

// k6MetricSpec describes the k6 metrics whose thresholds knee can evaluate.
func k6MetricSpec(metric string) (k6Metric, bool) {
	switch metric {
	case k6metric.HTTPReqDuration:
		return k6Metric{desc: "p(N), avg, med, min, max"}, true
	case k6metric.HTTPReqFailed:
		return k6Metric{aggs: map[string]Aggregate{"rate": AggFailed}, desc: "rate"}, true
	case k6metric.HTTPReqs, k6metric.Iterations:
		return k6Metric{aggs: map[string]Aggregate{"count": AggRequests, "rate": AggRate}, desc: "count, rate"}, true
	case k6metric.DroppedIterations:
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

// K6Series is what a k6 threshold reads of one series (a metric or a
// submetric), summed as k6 sums it; package k6script supplies it.
type K6Series struct {
	Kind             string // trend, counter, rate, gauge
	Time             bool   // a Trend of durations in ms
	Count            int64  // values added
	Sum, Rate, Value float64
	Min, Max, Avg    float64
	Pct              func(p float64) float64 // a Trend's p-th percentile (0..100) by k6's rule
	Sampled          bool                    // the percentiles are estimated from a sample
	SampleSize       int
}

// k6Aggs are the aggregates a metric kind has (k6's metrics.Thresholds.Run).
var k6Aggs = map[string][]string{
	"trend":   {"avg", "min", "max", "med", "p"},
	"counter": {"count", "rate"},
	"rate":    {"rate"},
	"gauge":   {"value"},
}

// CheckK6Agg says whether a metric of kind has e's aggregate, as k6's
// Thresholds.Validate does.
func CheckK6Agg(e K6Expr, kind string) error {
	for _, a := range k6Aggs[kind] {
		if a == e.Agg {
			return nil
		}
	}
	ex := map[string]string{"trend": "p(95)<200", "counter": "count>100", "gauge": "value<10", "rate": "rate>0.99"}[kind]
	return &ThresholdError{Expr: e.Expr, Msg: fmt.Sprintf("a %s has no aggregate %q", kind, e.Agg),
		Fix: fmt.Sprintf("use %s, e.g. %s", strings.Join(k6Aggs[kind], ", "), ex)}
}

// EvaluateK6 judges k6 thresholds as k6 does at the end of a test, on the
// series each names (series gives it); elapsed is the test's length so
// far, for a Counter's rate. A series with no values is judged as k6
// judges it (a Trend's aggregates and a Counter's are 0), with a note; a
// Rate with none k6 cannot judge, and neither fails.
func EvaluateK6(ts []K6Expr, series func(K6Expr) K6Series, elapsed time.Duration) []ThresholdResult {
	out := make([]ThresholdResult, 0, len(ts))
	for _, t := range ts {
		res := ThresholdResult{Expr: t.Expr}
		st := series(t)
		var got float64
		switch t.Agg {
		case "avg":
			got = st.Avg
		case "min":
			got = st.Min
		case "max":
			got = st.Max
		case "med", "p":
			p := 50.0
			if t.Agg == "p" {
				p = t.P
			}
			if st.Pct != nil {
				got = st.Pct(p)
			}
		case "count": // a Counter's count is the sum of what was added, as in k6
			got, res.Unit = st.Sum, "count"
		case "rate":
			if st.Kind == "counter" {
				got, res.Unit = math.NaN(), "per s"
				if elapsed > 0 {
					got = st.Sum / elapsed.Seconds()
				}
			} else {
				got, res.Unit = st.Rate, "fraction"
			}
		case "value":
			got = st.Value
		}
		if res.Unit == "" && st.Time {
			res.Unit = "ms"
		}
		res.Value = got
		switch {
		case st.Count == 0 && st.Kind == "rate":
			res.Pass, res.Note = true, "no values: k6 cannot judge a rate of nothing, and does not fail it"
		case st.Count == 0:
			res.Pass, res.Note = CompareOp(got, t.Op, t.Value), "no values: judged as k6 does, on 0"
		default:
			res.Pass = CompareOp(got, t.Op, t.Value)
			if st.Sampled && (t.Agg == "p" || t.Agg == "med") {
				res.Note = fmt.Sprintf("estimated: %d values, a uniform sample of %d kept", st.Count, st.SampleSize)
			}
		}
		out = append(out, res)
	}
	return out
}
