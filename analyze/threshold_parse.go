package analyze

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/knee-dev/knee/k6metric"
)

// Aggregate is what a threshold measures.
type Aggregate string

// The aggregates a threshold can test. Latency aggregates compare in
// milliseconds; Rate and Requests count requests; Errors is a fraction of
// requests; Dropped counts dropped iterations.
const (
	AggPercentile Aggregate = "p"                        // p(95): a latency percentile
	AggAvg        Aggregate = "avg"                      // mean latency
	AggMed        Aggregate = "med"                      // p(50)
	AggMin        Aggregate = "min"                      // fastest latency
	AggMax        Aggregate = "max"                      // slowest latency
	AggRate       Aggregate = "rate"                     // achieved req/s
	AggRequests   Aggregate = "requests"                 // request count
	AggErrors     Aggregate = "errors"                   // errors (transport, 5xx) / requests
	AggFailed     Aggregate = "failed"                   // k6's http_req_failed: (transport errors + statuses >= 400) / requests
	AggDropped    Aggregate = k6metric.DroppedIterations // dropped iteration count
)

// ErrThreshold is wrapped by every threshold parse error.
var ErrThreshold = errors.New("invalid threshold")

// ThresholdError says what is wrong with a threshold and how to fix it.
type ThresholdError struct {
	Expr string
	Msg  string // what is wrong
	Fix  string // how to write it instead
}

func (e *ThresholdError) Error() string {
	s := fmt.Sprintf("threshold %q: %s", e.Expr, e.Msg)
	if e.Fix != "" {
		s += "; " + e.Fix
	}
	return s
}

// Unwrap makes errors.Is(err, ErrThreshold) true.
func (e *ThresholdError) Unwrap() error { return ErrThreshold }

// Threshold is one parsed pass/fail criterion. Its syntax:
//
//	threshold = [ "{" tag ":" value { "," tag ":" value } "}" ] aggregate op number [ unit ]
//	tag       = "scenario" | "name"
//	aggregate = "p(" pct ")" | "avg" | "med" | "min" | "max"           latency, unit ns us µs ms s m h (default ms)
//	          | "rate" | "requests" | "dropped_iterations"               plain numbers (req/s, counts)
//	          | "errors" | "failed"                                      fraction, or percent with "%"
//	op        = "<" | "<=" | ">" | ">=" | "==" | "!="
//
// Examples: "p(95)<200ms", "p(99)<1s", "max<2s", "rate>190", "errors<1%",
// "dropped_iterations==0", "{name:GET /x}p(95)<100ms",
// "{scenario:open,name:GET /api/books/{isbn}}p(99.9)<=250ms".
// Errors and dropped iterations are counted per scenario, so they accept
// only a scenario tag.
type Threshold struct {
	Expr   string    `json:"expr"`
	Select Selector  `json:"select"`
	Agg    Aggregate `json:"aggregate"`
	Pct    float64   `json:"pct,omitempty"` // AggPercentile only, in (0, 100]
	Op     string    `json:"op"`
	Value  float64   `json:"value"` // ms for latency, fraction for errors, else as written
}

// latencyAgg reports whether a compares latencies.
func (a Aggregate) latencyAgg() bool {
	switch a {
	case AggPercentile, AggAvg, AggMed, AggMin, AggMax:
		return true
	}
	return false
}

// String is t in canonical syntax; ParseThreshold(t.String()) gives t back (but Expr).
func (t Threshold) String() string {
	agg := string(t.Agg)
	if t.Agg == AggPercentile {
		agg = "p(" + strconv.FormatFloat(t.Pct, 'g', -1, 64) + ")"
	}
	v := strconv.FormatFloat(t.Value, 'g', -1, 64)
	if t.Agg.latencyAgg() {
		v += "ms"
	}
	return t.Select.String() + agg + t.Op + v
}

// ParseThreshold parses one threshold (see Threshold for the syntax).
func ParseThreshold(expr string) (Threshold, error) {
	t := Threshold{Expr: expr}
	fail := func(msg, fix string) (Threshold, error) {
		return Threshold{}, &ThresholdError{Expr: expr, Msg: msg, Fix: fix}
	}
	rest := strings.TrimSpace(expr)
	if rest == "" {
		return fail("empty", `write e.g. "p(95)<200ms"`)
	}
	if strings.HasPrefix(rest, "{") {
		sel, after, err := parseSelector(rest)
		if err != nil {
			return fail(err.Error(), `write tags as "{name:GET /x}" or "{scenario:open,name:GET /x}"`)
		}
		t.Select, rest = sel, strings.TrimSpace(after)
	}
	agg, pct, after, err := parseAggregate(rest)
	if err != nil {
		return fail(err.Error(), "use p(N), avg, med, min, max, rate, requests, errors, failed or dropped_iterations")
	}
	t.Agg, t.Pct = agg, pct
	op, after := parseOp(strings.TrimSpace(after))
	if op == "" {
		return fail(fmt.Sprintf("missing comparison after %q", strings.TrimSpace(rest[:len(rest)-len(after)])),
			"use one of < <= > >= == !=, as in \"p(95)<200ms\"")
	}
	t.Op = op
	v, err := parseThresholdValue(t.Agg, strings.TrimSpace(after))
	if err != nil {
		return fail(err.Error(), valueFix(t.Agg))
	}
	t.Value = v
	if t.Select.Name != "" && (t.Agg == AggErrors || t.Agg == AggFailed || t.Agg == AggDropped) {
		return fail(string(t.Agg)+" is counted per scenario, not per request name",
			"use {scenario:...} or no tag")
	}
	return t, nil
}

// ParseThresholds parses every expression and reports every error at once.
func ParseThresholds(exprs []string) ([]Threshold, error) {
	var out []Threshold
	var errs []error
	for _, e := range exprs {
		t, err := ParseThreshold(e)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, t)
	}
	return out, errors.Join(errs...)
}

// parseSelector reads a leading "{tag:value,...}". Values may contain
// balanced braces ("GET /books/{isbn}"); commas split tags only at depth 1.
func parseSelector(s string) (Selector, string, error) {
	depth, end := 0, -1
	var parts []string
	last := 1
	for i, c := range s {
		switch c {
		case '{':
			depth++
		case '}':
			depth--
		case ',':
			if depth == 1 {
				parts = append(parts, s[last:i])
				last = i + 1
			}
		}
		if depth == 0 {
			end = i
			break
		}
	}
	if end < 0 {
		return Selector{}, "", errors.New("unclosed '{'")
	}
	parts = append(parts, s[last:end])
	var sel Selector
	for _, p := range parts {
		key, val, ok := strings.Cut(p, ":")
		key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		if !ok || val == "" {
			return Selector{}, "", fmt.Errorf("tag %q has no value", p)
		}
		switch key {
		case "name":
			sel.Name = val
		case "scenario":
			sel.Scenario = val
		case "group":
			return Selector{}, "", errors.New("tag group: a k6 script's requests are kept per group as http_req_duration{group:::NAME} alone (no other tag), and group durations as group_duration{group:::NAME}")
		default:
			return Selector{}, "", fmt.Errorf("unknown tag %q (only name and scenario are kept)", key)
		}
	}
	return sel, s[end+1:], nil
}

// parseAggregate reads the aggregate at the start of s.
func parseAggregate(s string) (Aggregate, float64, string, error) {
	if strings.HasPrefix(s, "p(") {
		closing := strings.IndexByte(s, ')')
		if closing < 0 {
			return "", 0, "", errors.New("p( is not closed")
		}
		pct, err := strconv.ParseFloat(strings.TrimSpace(s[2:closing]), 64)
		if err != nil || math.IsNaN(pct) || pct <= 0 || pct > 100 {
			return "", 0, "", fmt.Errorf("percentile %q is not a number in (0, 100]", s[2:closing])
		}
		return AggPercentile, pct, s[closing+1:], nil
	}
	// Longest names first, so "dropped_iterations" is not read as something shorter.
	for _, a := range []Aggregate{AggDropped, AggRequests, AggErrors, AggFailed, AggRate, AggAvg, AggMed, AggMin, AggMax} {
		if rest, ok := strings.CutPrefix(s, string(a)); ok {
			return a, 0, rest, nil
		}
	}
	word := s
	if i := strings.IndexAny(s, "<>=! "); i >= 0 {
		word = s[:i]
	}
	return "", 0, "", fmt.Errorf("unknown aggregate %q", word)
}

// parseOp reads a comparison operator at the start of s.
func parseOp(s string) (string, string) {
	for _, op := range []string{"<=", ">=", "==", "!=", "<", ">"} {
		if rest, ok := strings.CutPrefix(s, op); ok {
			return op, rest
		}
	}
	return "", s
}

// latencyUnit is the size of a latency unit suffix in milliseconds.
func latencyUnit(unit string) (float64, bool) {
	switch unit {
	case "ns":
		return 1e-6, true
	case "us", "µs":
		return 1e-3, true
	case "ms":
		return 1, true
	case "s":
		return 1e3, true
	case "m":
		return 60e3, true
	case "h":
		return 3600e3, true
	}
	return 0, false
}

// parseThresholdValue reads the number and its unit, converted for agg.
func parseThresholdValue(agg Aggregate, s string) (float64, error) {
	if s == "" {
		return 0, errors.New("missing value after the comparison")
	}
	i := 0
	for i < len(s) && strings.IndexByte("0123456789.+-eE", s[i]) >= 0 {
		i++
	}
	num, unit := s[:i], strings.TrimSpace(s[i:])
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("value %q is not a number", s)
	}
	switch {
	case agg.latencyAgg():
		if unit == "" {
			return v, nil // k6's default for durations: milliseconds
		}
		f, ok := latencyUnit(unit)
		if !ok {
			return 0, fmt.Errorf("unknown unit %q", unit)
		}
		if math.IsInf(v*f, 0) {
			return 0, fmt.Errorf("value %q is too large", s)
		}
		return v * f, nil
	case (agg == AggErrors || agg == AggFailed) && unit == "%":
		return v / 100, nil
	case unit != "":
		return 0, fmt.Errorf("%s takes a plain number, not %q", agg, unit)
	}
	return v, nil
}

// valueFix says how the value of agg is written.
func valueFix(agg Aggregate) string {
	switch {
	case agg.latencyAgg():
		return "write a duration such as 200ms, 1.5s or 800us (a bare number means ms)"
	case agg == AggErrors || agg == AggFailed:
		return "write a fraction (0.01) or a percentage (1%)"
	}
	return "write a plain number, as in \"rate>190\""
}
