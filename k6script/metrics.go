package k6script

import (
	"fmt"
	"math"
	"sort"
	"sync"
	"time"

	"github.com/knee-dev/knee/k6metric"
	"github.com/knee-dev/knee/record"
)

// Kinds of k6/metrics custom metrics.
const (
	KindTrend   = k6metric.Trend
	KindCounter = k6metric.Counter
	KindRate    = k6metric.Rate
	KindGauge   = k6metric.Gauge
)

// metric is one custom metric, shared by every VU. Counters, rates and
// gauges are summed here; a Trend's values go to knee's recorder (see
// trendSink), so they land in latency.hlog and merge as every latency does.
type metric struct {
	name, kind string
	isTime     bool
	mu         sync.Mutex
	count      int64
	sum        float64
	nonZero    int64
	last       float64
	min, max   float64
}

// Metrics are a script's custom metrics, and the two series k6 tags with
// a group: group_duration of each group that ran, and the
// http_req_duration of the requests sent in it.
type Metrics struct {
	mu        sync.Mutex
	byName    map[string]*metric
	groups    map[string]bool // group paths ("::a::b") whose duration was recorded
	reqGroups map[string]bool // group paths whose requests were recorded
	// kept are the group paths kept apart: the first maxGroups; later
	// ones are recorded (and their checks counted) as the group
	// record.OtherName, as request names fold, so a script naming a group
	// per iteration stays bounded.
	kept map[string]struct{}
}

// maxGroups: each group path is up to two Trend series (group_duration and
// http_req_duration), and Trend names fold past record.DefaultMaxSeries, so
// the kept paths and record.OtherName fill that cap and no more: every
// group, (other) too, keeps series of its own.
const maxGroups = record.DefaultMaxSeries/2 - 1

// groupName is path, or record.OtherName when path is new and the cap of
// group paths is reached.
func (m *Metrics) groupName(path string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.kept[path]; ok || path == record.OtherName {
		return path
	}
	if len(m.kept) >= maxGroups {
		return record.OtherName
	}
	if m.kept == nil {
		m.kept = map[string]struct{}{}
	}
	m.kept[path] = struct{}{}
	return path
}

// groupName is the name path is recorded under (Metrics.groupName), asked
// of the script once per VU and path while the VU's cache is below the cap.
func (v *vu) groupName(path string) string {
	if n, ok := v.groupNames[path]; ok {
		return n
	}
	n := v.s.metrics.groupName(path)
	if len(v.groupNames) < maxGroups {
		if v.groupNames == nil {
			v.groupNames = map[string]string{}
		}
		v.groupNames[path] = n
	}
	return n
}

// GroupDurationName is the Trend series of a group's durations:
// k6's group_duration metric with the group's tag, as k6 writes it.
func GroupDurationName(group string) string { return k6metric.GroupDuration + "{group:" + group + "}" }

// GroupRequestsName is the Trend series of the requests sent in a group
// (directly, not in a group nested in it): k6's http_req_duration with
// the group's tag. Its summary and thresholds are k6's (K6Metrics); the
// series knee also records into latency.hlog holds knee's latency (in the
// open model, from the intended start).
func GroupRequestsName(group string) string {
	return k6metric.HTTPReqDuration + "{group:" + group + "}"
}

// groupDuration records one run of the group at path, as a time Trend
// (k6's group_duration), when in an iteration.
func (v *vu) groupDuration(path string, d time.Duration) {
	v.s.k6.add(path, v.k6Tags, k6Point{k6metric.GroupDuration, ms(d)})
	if v.shard == nil {
		return
	}
	path = v.groupName(path)
	v.noteGroup(path, &v.seenGroups, func(m *Metrics) *map[string]bool { return &m.groups })
	v.addTrend(GroupDurationName(path), ms(d))
}

// groupRequest records the latency of one request sent in the group at path.
func (v *vu) groupRequest(path string, latency time.Duration) {
	if v.shard == nil {
		return
	}
	path = v.groupName(path)
	v.noteGroup(path, &v.seenReqGroups, func(m *Metrics) *map[string]bool { return &m.reqGroups })
	v.addTrend(GroupRequestsName(path), ms(latency))
}

// noteGroup adds path to the script's set (of) the first time this VU
// sees it, so the shared lock is taken once per VU and group, not per call.
func (v *vu) noteGroup(path string, seen *map[string]bool, of func(*Metrics) *map[string]bool) {
	if (*seen)[path] {
		return
	}
	if *seen == nil {
		*seen = map[string]bool{}
	}
	(*seen)[path] = true
	m := v.s.metrics
	m.mu.Lock()
	set := of(m)
	if *set == nil {
		*set = map[string]bool{}
	}
	(*set)[path] = true
	m.mu.Unlock()
}

func newMetrics() *Metrics { return &Metrics{byName: map[string]*metric{}} }

// declare returns the metric name, made on first declaration; declaring a
// name again with another kind is an error, as in k6.
func (m *Metrics) declare(name, kind string, isTime bool) (*metric, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if x, ok := m.byName[name]; ok {
		if x.kind != kind {
			return nil, fmt.Errorf("metric %q is already a %s; give the %s another name", name, x.kind, kind)
		}
		return x, nil
	}
	if _, builtin := k6metric.Lookup(name); builtin {
		return nil, fmt.Errorf("metric %q is one of k6's own; give the custom metric another name", name)
	}
	x := &metric{name: name, kind: kind, isTime: isTime, min: math.Inf(1), max: math.Inf(-1)}
	m.byName[name] = x
	return x, nil
}

func (x *metric) add(v float64) {
	if math.IsNaN(v) {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	x.count++
	x.sum += v
	x.last = v
	x.min, x.max = math.Min(x.min, v), math.Max(x.max, v)
	if v != 0 {
		x.nonZero++
	}
}

// trendSink is what a VU's shard offers for Trend values: runner's shard
// passes them to record.Shard.RecordTrend.
type trendSink interface {
	RecordTrend(scenario, name string, d time.Duration)
}

// checkSink is what a VU's shard offers for check() outcomes: runner's
// shard counts them per interval (record.Shard.RecordCheck), so checks can
// be drawn over time.
type checkSink interface {
	RecordCheck(scenario string, pass bool)
}

// iterationSink is what a VU's shard offers for finished iterations:
// runner's shard records their durations per interval
// (record.Shard.RecordIteration), so iterations can be drawn over time.
type iterationSink interface {
	RecordIteration(scenario string, d time.Duration)
}

// phaseSink is what a VU's shard offers for the phases of each request:
// runner's shard records them per interval (record.Shard.RecordPhases), so
// k6's http_req_blocked .. http_req_receiving can be drawn over time.
type phaseSink interface {
	RecordPhases(scenario string, p record.Phases)
}

// recordIteration records one finished iteration's duration in the VU's
// shard (none in setup or teardown: they are not iterations).
func (v *vu) recordIteration(d time.Duration) {
	if is, ok := v.shard.(iterationSink); ok && v.shard != nil {
		is.RecordIteration(v.st.Scenario, d)
	}
}

// recordCheck counts one check outcome in the VU's shard; checks in setup
// or teardown have no shard and only reach the totals (Script.Checks).
func (v *vu) recordCheck(pass bool) {
	if cs, ok := v.shard.(checkSink); ok && v.shard != nil {
		cs.RecordCheck(v.st.Scenario, pass)
	}
}

// TrendDuration is how a Trend value is recorded: as if it were
// milliseconds (time trends are; other trends keep their unit at the same
// scale), negative values as 0. The histogram keeps 0.001 .. 3,600,000.
func TrendDuration(v float64) time.Duration {
	return time.Duration(math.Max(v, 0) * float64(time.Millisecond))
}

// addTrend records one Trend value into the VU's shard. Values added in
// setup or teardown have no shard: they are not part of the test's numbers.
func (v *vu) addTrend(name string, val float64) {
	if math.IsNaN(val) || v.shard == nil {
		return
	}
	if ts, ok := v.shard.(trendSink); ok {
		ts.RecordTrend(v.st.Scenario, name, TrendDuration(val))
	}
}

// MetricResult is one custom metric's totals.
type MetricResult struct {
	Name  string  `json:"name"`
	Kind  string  `json:"kind"`
	Time  bool    `json:"time,omitempty"`
	Count int64   `json:"count"`
	Sum   float64 `json:"sum,omitempty"`
	Rate  float64 `json:"rate,omitempty"` // Rate: the fraction of non-zero values
	Value float64 `json:"value,omitempty"`
	Min   float64 `json:"min,omitempty"`
	Max   float64 `json:"max,omitempty"`
	Avg   float64 `json:"avg,omitempty"`
	Med   float64 `json:"med,omitempty"` // a Trend's p50
	P90   float64 `json:"p90,omitempty"`
	P95   float64 `json:"p95,omitempty"`
	P99   float64 `json:"p99,omitempty"`
	// Clamped counts a Trend's values outside the histogram's 0.001 .. 3,600,000.
	Clamped int64 `json:"clamped,omitempty"`
	// Sampled: more than TrendKeep values, the percentiles are estimates.
	Sampled bool `json:"sampled,omitempty"`
	hist    *record.Histogram
}

// Results are every custom metric's totals, by name. trend gives a
// Trend's histogram over the run (its values as milliseconds), nil when
// it has none.
func (m *Metrics) Results(trend func(name string) *record.Histogram) []MetricResult {
	m.mu.Lock()
	names := make([]string, 0, len(m.byName))
	for n := range m.byName {
		names = append(names, n)
	}
	groups := make([]string, 0, len(m.groups)+len(m.reqGroups))
	for g := range m.groups {
		groups = append(groups, GroupDurationName(g))
	}
	for g := range m.reqGroups {
		groups = append(groups, GroupRequestsName(g))
	}
	m.mu.Unlock()
	sort.Strings(names)
	sort.Strings(groups)
	out := make([]MetricResult, 0, len(names)+len(groups))
	for _, n := range names {
		m.mu.Lock()
		x := m.byName[n]
		m.mu.Unlock()
		x.mu.Lock()
		r := MetricResult{Name: x.name, Kind: x.kind, Time: x.isTime, Count: x.count, Sum: x.sum, Value: x.last}
		if x.count > 0 {
			r.Min, r.Max, r.Avg = x.min, x.max, x.sum/float64(x.count)
			r.Rate = float64(x.nonZero) / float64(x.count)
		}
		x.mu.Unlock()
		if x.kind == KindTrend {
			r = trendResult(r, trend)
		}
		out = append(out, r)
	}
	for _, g := range groups {
		out = append(out, trendResult(MetricResult{Name: g, Kind: KindTrend, Time: true}, trend))
	}
	return out
}

// trendResult fills a Trend's stats from its histogram over the run.
func trendResult(r MetricResult, trend func(name string) *record.Histogram) MetricResult {
	var h *record.Histogram
	if trend != nil {
		h = trend(r.Name)
	}
	if h == nil || h.Count() == 0 {
		return r
	}
	r.hist = h
	r.Count = h.Count()
	r.Avg, r.Min, r.Max = sig3(msOf(h.Mean())), sig3(msOf(h.Min())), sig3(msOf(h.Max()))
	r.Med, r.P90, r.P95, r.P99 = pctMS(h, 50), pctMS(h, 90), pctMS(h, 95), pctMS(h, 99)
	r.Clamped = h.Clamped()
	return r
}

func msOf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// pctMS is h's p-th percentile in milliseconds, to the histogram's three
// significant digits: a value of exactly 100 reads 100, not its bucket's
// upper edge 100.031. It is record's nearest rank, not k6's interpolation
// between samples (knee keeps no samples; the README shows the difference).
func pctMS(h *record.Histogram, p float64) float64 {
	return sig3(msOf(h.Percentile(p)))
}

// sig3 rounds x to three significant digits.
func sig3(x float64) float64 {
	if x == 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	scale := math.Pow(10, 2-math.Floor(math.Log10(math.Abs(x))))
	return math.Round(x*scale) / scale
}

// Percentile is a Trend's p-th percentile in its unit; NaN for other kinds.
func (r MetricResult) Percentile(p float64) float64 {
	if r.hist == nil || r.Count == 0 {
		return math.NaN()
	}
	return pctMS(r.hist, p)
}
