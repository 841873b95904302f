package k6script

import (
	"context"
	"crypto/md5" //nolint:gosec // k6's group and check ids are MD5s of their paths, for correlation only
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/dop251/goja"

	"github.com/knee-dev/knee/analyze"
	"github.com/knee-dev/knee/k6metric"
)

// DefaultSummaryTrendStats are the Trend values k6 puts in its summary
// when options.summaryTrendStats is not set (k6 lib.DefaultSummaryTrendStats).
var DefaultSummaryTrendStats = []string{"avg", "min", "med", "max", "p(90)", "p(95)"}

// DefaultHandleSummaryTimeout is k6's default handleSummaryTimeout.
const DefaultHandleSummaryTimeout = 120 * time.Second

// SummaryInput is what k6's end-of-test summary data holds besides the
// script's metrics, which the Script has.
type SummaryInput struct {
	// Duration is k6's testRunDuration: from setup()'s start to
	// teardown()'s end. A Counter's rate is its count over it.
	Duration time.Duration
	// Thresholds are the script's, key -> expressions as written.
	Thresholds map[string][]string
	// Results are the thresholds judged on k6's metrics (EvaluateOwn's);
	// a threshold without a result gets no entry.
	Results []analyze.ThresholdResult
	// StdoutTTY, StderrTTY and NoColor are data.state's and data.options'.
	StdoutTTY, StderrTTY, NoColor bool
}

// HasHandleSummary reports whether the script exports handleSummary.
func (s *Script) HasHandleSummary() bool { return s.exports["handleSummary"] }

// SummaryData is the object k6 passes to handleSummary(data), in k6's
// (legacy) shape: metrics (name -> type, contains, values, thresholds),
// root_group (groups and checks), options, state and setup_data. Every
// value is k6's: the metrics as K6Metrics sums them, Trend percentiles
// interpolated between the values (k6's TrendSink.P).
func (s *Script) SummaryData(in SummaryInput) map[string]any {
	stats, unit := s.TrendStats(), s.TimeUnit()
	data := map[string]any{
		"metrics":    s.summaryMetrics(in, stats),
		"root_group": s.rootGroup(),
		"options":    map[string]any{"summaryTrendStats": stats, "summaryTimeUnit": unit, "noColor": in.NoColor},
		"state": map[string]any{"isStdOutTTY": in.StdoutTTY, "isStdErrTTY": in.StderrTTY,
			"testRunDurationMs": float64(in.Duration) / float64(time.Millisecond)},
	}
	if s.setupRaw != "" {
		data["setup_data"] = json.RawMessage(s.setupRaw)
	}
	return data
}

// summaryMetrics is data.metrics: every metric that has values, and every
// metric and submetric a threshold names (k6 marks those observed even
// without values), under the name k6 gives it.
func (s *Script) summaryMetrics(in SummaryInput, stats []string) map[string]any {
	out := map[string]any{}
	contains := s.metricContains()
	m := s.k6
	m.mu.Lock()
	for name, e := range m.entries {
		if e.sink != nil && e.sink.count > 0 {
			out[name] = metricEntry(m.kinds[name], contains[name], e.sink, stats, in.Duration)
		}
	}
	if m.expected.sink.count > 0 {
		out[SubmetricName(k6metric.HTTPReqDuration, m.expected.filter)] = metricEntry(KindTrend, k6metric.Time, m.expected.sink, stats, in.Duration)
	}
	m.mu.Unlock()
	ok := map[string]bool{}
	for _, r := range in.Results {
		ok[r.Expr] = r.Pass
	}
	for key, exprs := range in.Thresholds {
		metric, tags, err := analyze.ParseK6Key(key)
		if err != nil {
			continue
		}
		m.mu.Lock()
		kind := m.kinds[metric]
		var sink, parent *k6Sink
		if kind != "" {
			sink, parent = m.seriesLocked(SubmetricName(metric, tags)), m.seriesLocked(metric)
		}
		name := k6SeriesName(key)
		if _, seen := out[metric]; !seen && kind != "" {
			out[metric] = metricEntry(kind, contains[metric], parent, stats, in.Duration)
		}
		if _, seen := out[name]; !seen && kind != "" {
			out[name] = metricEntry(kind, contains[metric], sink, stats, in.Duration)
		}
		m.mu.Unlock()
		entry, _ := out[name].(map[string]any)
		if entry == nil {
			continue
		}
		th, _ := entry["thresholds"].(map[string]any)
		for _, e := range exprs {
			pass, judged := ok[strings.TrimSpace(key)+": "+strings.TrimSpace(e)]
			if !judged {
				continue
			}
			if th == nil {
				th = map[string]any{}
				entry["thresholds"] = th
			}
			th[e] = map[string]any{"ok": pass}
		}
	}
	return out
}

// seriesLocked is the sink of a metric or submetric, an empty one when
// it has no values yet; m.mu is held.
func (m *K6Metrics) seriesLocked(name string) *k6Sink {
	metric, _, _ := strings.Cut(name, "{")
	var s *k6Sink
	if metric == name {
		s = m.sinkOf(name)
	} else if sub, ok := m.subs[metric][name]; ok {
		s = sub.sink
	}
	if s == nil {
		s = m.newSink(m.kinds[metric])
	}
	return s
}

// k6SeriesName is the name k6 gives a threshold key's series: the metric,
// or metric{...} with the criteria trimmed as written (metrics.AddSubmetric).
func k6SeriesName(key string) string {
	metric, rest, ok := strings.Cut(key, "{")
	metric = strings.TrimSpace(metric)
	if !ok {
		return metric
	}
	return metric + "{" + strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "}")) + "}"
}

// metricEntry is one data.metrics entry; contains is what its values
// are (k6metric.Plain, Time or Data; "" is Plain).
func metricEntry(kind, contains string, sink *k6Sink, stats []string, d time.Duration) map[string]any {
	if contains == "" {
		contains = k6metric.Plain
	}
	return map[string]any{"type": kind, "contains": contains, "values": k6Values(kind, sink, stats, d)}
}

// k6Values are a series' values as k6's summary gives them
// (internal/js/summary.go metricValueGetter): a Counter's count and rate
// over a test run of d, a Gauge's value, min and max, a Rate's rate,
// passes and fails, a Trend's stats columns.
func k6Values(kind string, sink *k6Sink, stats []string, d time.Duration) map[string]float64 {
	switch kind {
	case KindCounter:
		return counterValues(sink.sum, d)
	case KindGauge:
		if sink.count == 0 {
			return map[string]float64{"value": 0, "min": 0, "max": 0}
		}
		return map[string]float64{"value": sink.last, "min": sink.min, "max": sink.gaugeMax()}
	case KindRate:
		rate := 0.0
		if sink.count > 0 {
			rate = float64(sink.trues) / float64(sink.count)
		}
		return map[string]float64{"rate": rate, "passes": float64(sink.trues), "fails": float64(sink.count - sink.trues)}
	case KindTrend:
		return trendValues(sink, stats)
	}
	return nil
}

// metricContains is what each metric's values are, k6's contains: the
// built-in metrics' own (durations, bytes for data_sent and
// data_received, k6 metrics/builtin.go), time for the custom metrics
// declared with isTime.
func (s *Script) metricContains() map[string]string {
	out := map[string]string{}
	for _, b := range k6metric.Builtins() {
		out[b.Name] = b.Contains
	}
	s.metrics.mu.Lock()
	defer s.metrics.mu.Unlock()
	for n, x := range s.metrics.byName {
		out[n] = k6metric.Plain
		if x.isTime {
			out[n] = k6metric.Time
		}
	}
	return out
}

// counterValues are a Counter's count and its rate per second over d (0
// when d is: k6's CounterSink.Rate).
func counterValues(count float64, d time.Duration) map[string]float64 {
	rate := 0.0
	if d > 0 {
		rate = count / d.Seconds()
	}
	return map[string]float64{"count": count, "rate": rate}
}

// trendValues are a Trend's values for the summaryTrendStats columns
// (validated by DecodeOptions): avg, min, med, max, count, p(N).
func trendValues(sink *k6Sink, stats []string) map[string]float64 {
	out := make(map[string]float64, len(stats))
	for _, st := range stats {
		var v float64
		switch st {
		case "avg":
			if sink.count > 0 {
				v = sink.sum / float64(sink.count)
			}
		case "min":
			v = sink.min
		case "max":
			v = sink.max
		case "med":
			v = sink.pct(0.5)
		case "count":
			v = float64(sink.count)
		default:
			p, _ := parseTrendStat(st)
			v = sink.pct(p / 100)
		}
		if sink.count == 0 {
			v = 0
		}
		out[st] = v
	}
	return out
}

// parseTrendStat reads p(N) as k6 does (metrics.parsePercentile); N in 0..100.
func parseTrendStat(st string) (float64, error) {
	switch st {
	case "avg", "min", "med", "max", "count":
		return 0, nil
	}
	if !strings.HasPrefix(st, "p(") || !strings.HasSuffix(st, ")") {
		return 0, fmt.Errorf("summaryTrendStats: %q is not avg, min, med, max, count or p(N)", st)
	}
	p, err := strconv.ParseFloat(st[2:len(st)-1], 64)
	if err != nil || p < 0 || p > 100 {
		return 0, fmt.Errorf("summaryTrendStats: %q: N of p(N) is a number from 0 to 100", st)
	}
	return p, nil
}

// SummaryGroup is a group of data.root_group, as k6 exports it.
type SummaryGroup struct {
	Name   string         `json:"name"`
	Path   string         `json:"path"` // ::a::b; "" for the root
	ID     string         `json:"id"`   // k6's: the MD5 of the path, in hex
	Groups []SummaryGroup `json:"groups"`
	Checks []SummaryCheck `json:"checks"`
}

// SummaryCheck is a check of a SummaryGroup.
type SummaryCheck struct {
	Name   string `json:"name"`
	Path   string `json:"path"` // the group's path, ::, the name
	ID     string `json:"id"`
	Passes int64  `json:"passes"`
	Fails  int64  `json:"fails"`
}

// rootGroup is data.root_group: the groups in the order their first
// check or group_duration came (k6 builds its tree from those samples),
// each with its checks in first-seen order and k6's ids (the MD5 of the
// path).
func (s *Script) rootGroup() SummaryGroup {
	type node struct {
		g    SummaryGroup
		kids []*node
	}
	root := &node{}
	byPath := map[string]*node{"": root}
	var find func(path string) *node
	find = func(path string) *node {
		if n, ok := byPath[path]; ok {
			return n
		}
		parent, name := root, path
		if i := strings.LastIndex(path, "::"); i >= 0 {
			parent, name = find(path[:i]), path[i+2:]
		}
		n := &node{g: SummaryGroup{Name: name, Path: path}}
		parent.kids = append(parent.kids, n)
		byPath[path] = n
		return n
	}
	for _, g := range s.k6.groupOrder() {
		find(g)
	}
	for _, c := range s.Checks.Results() {
		g := find(c.Group)
		path := c.Group + "::" + c.Name
		g.g.Checks = append(g.g.Checks, SummaryCheck{Name: c.Name, Path: path, ID: md5Hex(path), Passes: c.Passes, Fails: c.Fails})
	}
	var export func(n *node) SummaryGroup
	export = func(n *node) SummaryGroup {
		g := n.g
		g.ID, g.Groups = md5Hex(g.Path), make([]SummaryGroup, 0, len(n.kids))
		if g.Checks == nil {
			g.Checks = []SummaryCheck{}
		}
		for _, k := range n.kids {
			g.Groups = append(g.Groups, export(k))
		}
		return g
	}
	return export(root)
}

func md5Hex(s string) string {
	h := md5.Sum([]byte(s)) //nolint:gosec // k6's id, not a secret
	return hex.EncodeToString(h[:])
}

// SummaryOutput is one entry of handleSummary's result: "stdout",
// "stderr" or a file's path, and what to write there.
type SummaryOutput struct {
	Path string
	Data []byte
}

// SummaryResult is what handleSummary asked for.
type SummaryResult struct {
	// Outputs are its result's entries, in the object's key order.
	Outputs []SummaryOutput
	// Default is set when k6 prints its default summary to stdout instead:
	// handleSummary threw (Exception), or returned null or undefined.
	Default bool
	// Exception is what handleSummary threw (k6 logs it and goes on).
	Exception error
}

// HandleSummary calls the script's handleSummary(data) in a runtime of
// its own, within options.handleSummaryTimeout (k6's default 120 s; past
// it a *TimeoutError). An exception is no error: k6 logs it and prints
// its default summary (Default, Exception). A result that is not an
// object of strings and ArrayBuffers is an error, as in k6.
func (s *Script) HandleSummary(ctx context.Context, data map[string]any) (SummaryResult, error) {
	if !s.HasHandleSummary() {
		return SummaryResult{Default: true}, nil
	}
	odd := nonFinite(data)
	raw, err := json.Marshal(data)
	if err != nil {
		return SummaryResult{}, fmt.Errorf("handleSummary(): its data: %w", err)
	}
	v, err := s.newVU(ctx, 0)
	if err != nil {
		return SummaryResult{}, fmt.Errorf("handleSummary(): %w", err)
	}
	parse, _ := goja.AssertFunction(v.rt.Get("JSON").ToObject(v.rt).Get("parse"))
	arg, err := parse(goja.Undefined(), v.rt.ToValue(string(raw)))
	if err != nil {
		return SummaryResult{}, fmt.Errorf("handleSummary(): its data: %s", jsError(err))
	}
	metrics := arg.ToObject(v.rt).Get("metrics").ToObject(v.rt)
	for _, o := range odd {
		must(metrics.Get(o.metric).ToObject(v.rt).Get("values").ToObject(v.rt).Set(o.key, o.v))
	}
	timeout := s.Options.HandleSummaryTimeout
	if timeout == nil {
		d := Duration(DefaultHandleSummaryTimeout)
		timeout = &d
	}
	res, err := v.callTimed(ctx, "handleSummary", arg, timeout)
	if err != nil {
		var te *TimeoutError
		if errors.As(err, &te) || errors.Is(err, ErrInterrupted) {
			return SummaryResult{}, err
		}
		return SummaryResult{Default: true, Exception: fmt.Errorf("handleSummary(): %w", err)}, nil
	}
	return summaryOutputs(res)
}

// oddValue is a metric's value JSON cannot carry (Infinity, NaN).
type oddValue struct {
	metric, key string
	v           float64
}

// nonFinite takes the values JSON cannot carry out of data's metrics (a
// Trend of Infinity has avg Infinity), leaving null in their place, and
// returns them to be set as numbers once the rest is parsed: k6 hands
// handleSummary its data as JavaScript values, Infinity and NaN included.
func nonFinite(data map[string]any) []oddValue {
	metrics, _ := data["metrics"].(map[string]any)
	var odd []oddValue
	for name, e := range metrics {
		entry, _ := e.(map[string]any)
		values, _ := entry["values"].(map[string]float64)
		var kept map[string]any
		for k, v := range values {
			if !math.IsInf(v, 0) && !math.IsNaN(v) {
				continue
			}
			if kept == nil {
				kept = make(map[string]any, len(values))
				for k2, v2 := range values {
					kept[k2] = v2
				}
			}
			kept[k] = nil
			odd = append(odd, oddValue{name, k, v})
		}
		if kept != nil {
			entry["values"] = kept
		}
	}
	return odd
}

// summaryOutputs reads handleSummary's result as k6's getSummaryResult
// and its wrapper do: null or undefined is k6's default summary on stdout.
func summaryOutputs(res goja.Value) (SummaryResult, error) {
	if res == nil || goja.IsUndefined(res) || goja.IsNull(res) {
		return SummaryResult{Default: true}, nil
	}
	obj, ok := res.(*goja.Object)
	if _, isMap := res.Export().(map[string]any); !ok || !isMap {
		return SummaryResult{}, errors.New("handleSummary() should return a map with string keys")
	}
	var out SummaryResult
	for _, k := range obj.Keys() {
		var b []byte
		switch x := obj.Get(k).Export().(type) {
		case string:
			b = []byte(x)
		case []byte:
			b = x
		case goja.ArrayBuffer:
			b = x.Bytes()
		default:
			return SummaryResult{}, fmt.Errorf("handleSummary(): error handling summary object %s: invalid type %T, it needs to be a string or ArrayBuffer", k, x)
		}
		out.Outputs = append(out.Outputs, SummaryOutput{Path: k, Data: b})
	}
	return out, nil
}
