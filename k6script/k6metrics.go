package k6script

import (
	"cmp"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/knee-dev/knee/k6metric"
)

// k6Summed are the k6 built-in metrics knee sums, as k6 v1.8.1 defines
// them (lib/netext/httpext, js/modules/k6/http, metrics/builtin.go); their
// kinds are k6metric's. Every HTTP request and every redirect hop is one
// http_reqs; setup's and teardown's requests count too. http_req_duration
// is sending + waiting + receiving. The ws_* metrics are k6/ws's and
// k6/websockets' (mod_ws.go, mod_websockets.go, as k6's modules record
// them), the grpc_* ones k6/net/grpc's (mod_grpc.go, grpcstats.go,
// grpcstream.go); vus and vus_max are sampled each second (RecordVUs),
// dropped_iterations sent per drop (RecordDropped).
var k6Summed = []string{k6metric.HTTPReqs, k6metric.HTTPReqDuration, k6metric.HTTPReqBlocked,
	k6metric.HTTPReqConnecting, k6metric.HTTPReqTLSHandshaking, k6metric.HTTPReqSending,
	k6metric.HTTPReqWaiting, k6metric.HTTPReqReceiving, k6metric.HTTPReqFailed,
	k6metric.Iterations, k6metric.IterationDuration, k6metric.Checks, k6metric.GroupDuration,
	k6metric.WSConnecting, k6metric.WSMsgsReceived, k6metric.WSMsgsSent, k6metric.WSPing,
	k6metric.WSSessionDuration, k6metric.WSSessions, k6metric.DataSent, k6metric.DataReceived,
	k6metric.GRPCReqDuration, k6metric.GRPCStreams, k6metric.GRPCStreamsMsgsReceived, k6metric.GRPCStreamsMsgsSent,
	k6metric.VUs, k6metric.VUsMax, k6metric.DroppedIterations}

// k6Order is the order the built-ins are printed in, k6's summary's.
var k6Order = []string{k6metric.Checks, k6metric.DataReceived, k6metric.DataSent, k6metric.DroppedIterations, k6metric.GRPCReqDuration, k6metric.GRPCStreams, k6metric.GRPCStreamsMsgsReceived,
	k6metric.GRPCStreamsMsgsSent, k6metric.HTTPReqBlocked, k6metric.HTTPReqConnecting, k6metric.HTTPReqDuration, k6metric.HTTPReqFailed,
	k6metric.HTTPReqReceiving, k6metric.HTTPReqSending, k6metric.HTTPReqTLSHandshaking, k6metric.HTTPReqWaiting, k6metric.HTTPReqs,
	k6metric.IterationDuration, k6metric.Iterations, k6metric.VUs, k6metric.VUsMax, k6metric.WSConnecting, k6metric.WSMsgsReceived, k6metric.WSMsgsSent,
	k6metric.WSPing, k6metric.WSSessionDuration, k6metric.WSSessions}

// TrendKeep is how many values a k6 Trend series keeps. k6 keeps every
// value and takes its percentiles between the sorted values; knee keeps
// every value too, up to TrendKeep per series (8 MiB), which makes its
// percentiles k6's exactly. Beyond that, the series keeps a uniform sample
// of TrendKeep of its values (reservoir sampling), its percentiles are
// estimates and say so (K6Stat.Sampled); count, sum, min, max and avg stay
// exact.
const TrendKeep = 1 << 20

// k6Sink is one series: a metric, or a metric's submetric (its values
// with given tags), summed as k6's sinks are.
type k6Sink struct {
	kind     string
	count    int64
	sum      float64
	min, max float64
	last     float64
	trues    int64
	// A Trend's kept values: every value, or a uniform sample of keep, in
	// the order they came (sorted, once pct has sorted them). They start
	// sparse: the values that are not 0 in nonzero, each with its place
	// among the kept ones, the rest 0, so the series of a reused
	// connection's blocked, connecting and TLS times, all but a few 0,
	// keep a few values instead of one a request. Once they are not
	// mostly 0 (sparseMost), or at keep values, they are dense: in values.
	values  []float64
	nonzero []placed
	dense   bool
	sorted  bool
	rng     uint64
	keep    int
}

// placed is a kept value that is not 0 and its index among the kept.
type placed struct {
	at int64
	v  float64
}

// sparseMost is how many values that are not 0 a sparse Trend keeps as
// such while they are at most a quarter of its values.
const sparseMost = 64

func (s *k6Sink) add(v float64) {
	if s.count == 0 || v < s.min {
		s.min = v
	}
	if s.count == 0 || v > s.max {
		s.max = v
	}
	s.count++
	s.sum += v
	s.last = v
	if v != 0 {
		s.trues++
	}
	if s.kind != KindTrend {
		return
	}
	s.sorted = false
	if !s.dense && s.keep > 0 {
		if v != 0 || math.Signbit(v) { // -0 is kept as it came
			s.nonzero = append(s.nonzero, placed{s.count - 1, v})
		}
		if n := len(s.nonzero); n > sparseMost && 4*int64(n) > s.count || s.count == int64(s.keep) {
			s.densify()
		}
		return
	}
	s.dense = true
	if len(s.values) < s.keep {
		s.values = append(s.values, v)
		return
	}
	// Algorithm R: the count-th value replaces a random kept one with
	// probability keep/count, so every value is kept equally likely.
	if j := s.rand() % uint64(s.count); j < uint64(s.keep) {
		s.values[j] = v
	}
}

// gaugeMax is a Gauge's max as k6's GaugeSink keeps it: it starts at 0
// and only a greater value raises it, so a Gauge of negative values has
// max 0 (k6 v1.8.1 metrics/sink.go), where its min is the least value.
func (s *k6Sink) gaugeMax() float64 { return math.Max(s.max, 0) }

// densify makes sparse kept values dense, each in its place.
func (s *k6Sink) densify() {
	s.values = make([]float64, s.count, max(s.count, int64(min(s.keep, 2*int(s.count)))))
	for _, p := range s.nonzero {
		s.values[p.at] = p.v
	}
	s.nonzero, s.dense = nil, true
}

// kept is how many values a Trend keeps.
func (s *k6Sink) kept() int {
	if s.dense {
		return len(s.values)
	}
	return int(s.count)
}

// rand is splitmix64: fast, and the same run of values keeps the same sample.
func (s *k6Sink) rand() uint64 {
	s.rng += 0x9e3779b97f4a7c15
	z := s.rng
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// pct is k6's Trend percentile (metrics.TrendSink.P): sorted values,
// rank i = p*(n-1), linear interpolation between the values at floor(i)
// and ceil(i); 0 with no values. p is a fraction (0.95).
func (s *k6Sink) pct(p float64) float64 {
	n := s.kept()
	switch n {
	case 0:
		return 0
	case 1:
		return s.at(0)
	}
	if !s.sorted {
		s.sort()
		s.sorted = true
	}
	i := p * float64(n-1)
	lo, hi := s.at(int(math.Floor(i))), s.at(int(math.Ceil(i)))
	return lo + (hi-lo)*(i-math.Floor(i))
}

// sort sorts the kept values; sparse, the values below 0 come first,
// then the zeros, then the rest, each in its new place.
func (s *k6Sink) sort() {
	if s.dense {
		sort.Float64s(s.values)
		return
	}
	slices.SortFunc(s.nonzero, func(a, b placed) int { return cmp.Compare(a.v, b.v) })
	zeros := s.count - int64(len(s.nonzero))
	for i := range s.nonzero {
		s.nonzero[i].at = int64(i)
		if !(s.nonzero[i].v < 0) {
			s.nonzero[i].at += zeros
		}
	}
}

// at is the i-th kept value.
func (s *k6Sink) at(i int) float64 {
	if s.dense {
		return s.values[i]
	}
	if j, ok := slices.BinarySearchFunc(s.nonzero, int64(i), func(p placed, at int64) int { return cmp.Compare(p.at, at) }); ok {
		return s.nonzero[j].v
	}
	return 0
}

// k6Sub is a submetric: a metric's values whose tags include all of filter.
type k6Sub struct {
	filter map[string]string
	sink   *k6Sink
}

// K6Metrics holds k6's metrics of a script as k6 sums them: the built-ins,
// the script's custom metrics, and the submetrics its thresholds name
// (metric{tag:value,...}). It is safe for concurrent use.
type K6Metrics struct {
	mu    sync.Mutex
	keep  int
	kinds map[string]string            // metric -> kind
	timed map[string]bool              // custom Trends of durations (new Trend(name, true))
	subs  map[string]map[string]*k6Sub // metric -> submetric name -> submetric
	// entries are, by metric, its own sink and subs' submetrics fed by
	// matching tags (all but expected): what add needs of a value's
	// metric in one lookup, the submetrics in a slice to range over.
	entries map[string]*k6Entry
	// expected is subs' http_req_duration{expected_response:true}, which
	// k6 always sums (addHop).
	expected *k6Sub
	// groups are the group paths of the checks and group_durations, in
	// the order of their first value (k6's summary builds its group tree
	// from those samples, in that order).
	groups    []string
	groupSeen map[string]bool
	// hopEntries are entries' of hopPoints, each once it is made (addHop).
	hopEntries [len(hopPoints)]*k6Entry
	// out, when set, gets every sample summed here as k6 writes it, but
	// the HTTP requests' own (Output.request writes those, a hop's columns
	// and all).
	out *Output
}

func newK6Metrics() *K6Metrics {
	m := &K6Metrics{keep: TrendKeep, kinds: map[string]string{}, timed: map[string]bool{}, subs: map[string]map[string]*k6Sub{},
		entries:   map[string]*k6Entry{},
		groupSeen: map[string]bool{}}
	for _, n := range k6Summed {
		b, _ := k6metric.Lookup(n)
		m.kinds[n] = b.Type
	}
	// k6 always sums this submetric (v1.8.1 internal/metrics/engine
	// engine.go, with the default system tags), so it is in
	// handleSummary's data once a request was expected.
	// addHop feeds it, so a request builds no tag map for it.
	m.expected = m.wantLocked(k6metric.HTTPReqDuration, expectedResponse)
	e := m.entries[k6metric.HTTPReqDuration]
	e.fed = slices.DeleteFunc(e.fed, func(s *k6Sub) bool { return s == m.expected })
	return m
}

// expectedResponse is the filter of k6's http_req_duration{expected_response:true}.
var expectedResponse = map[string]string{"expected_response": "true"}

func (m *K6Metrics) newSink(kind string) *k6Sink {
	return &k6Sink{kind: kind, keep: m.keep}
}

// declare adds a custom metric's kind.
func (m *K6Metrics) declare(name, kind string, isTime bool) {
	m.mu.Lock()
	m.kinds[name] = kind
	if isTime {
		m.timed[name] = true
	}
	m.mu.Unlock()
}

// kind is a metric's kind, "" when k6 has no such metric here.
func (m *K6Metrics) kind(name string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.kinds[name]
}

// want makes the submetric of metric with the tags filter (named as the
// threshold key names it), so its values are summed from the start.
func (m *K6Metrics) want(metric string, filter map[string]string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.wantLocked(metric, filter)
}

func (m *K6Metrics) wantLocked(metric string, filter map[string]string) *k6Sub {
	name := SubmetricName(metric, filter)
	if m.subs[metric] == nil {
		m.subs[metric] = map[string]*k6Sub{}
	}
	if sub, ok := m.subs[metric][name]; ok {
		return sub
	}
	sub := &k6Sub{filter: filter, sink: m.newSink(m.kinds[metric])}
	m.subs[metric][name] = sub
	e := m.entry(metric)
	e.fed = append(e.fed, sub)
	return sub
}

// SubmetricName is metric{k:v,...} with the tags sorted by key.
func SubmetricName(metric string, filter map[string]string) string {
	if len(filter) == 0 {
		return metric
	}
	keys := make([]string, 0, len(filter))
	for k := range filter {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString(metric)
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(k + ":" + filter[k])
	}
	b.WriteByte('}')
	return b.String()
}

// k6Point is one value of one metric.
type k6Point struct {
	metric string
	value  float64
}

// add records points that share tags. tags is called only when a
// submetric needs them, so a script without tagged thresholds builds no
// tag map per request. A value whose group is set also goes to the
// metric's {group:...} submetric, made at its group's first value (so it
// misses none): k6's per-group series.
func (m *K6Metrics) add(group string, tags func() map[string]string, points ...k6Point) {
	m.mu.Lock()
	b := k6Batch{m: m, group: group}
	for _, p := range points {
		b.point(m.entries[p.metric], p, tags)
	}
	m.mu.Unlock()
	b.write(tags)
}

// hopPoints are the metrics of one HTTP request (a redirect hop), in the
// order addHop takes their values.
var hopPoints = [...]string{k6metric.HTTPReqs, k6metric.HTTPReqDuration, k6metric.HTTPReqBlocked,
	k6metric.HTTPReqConnecting, k6metric.HTTPReqTLSHandshaking, k6metric.HTTPReqSending,
	k6metric.HTTPReqWaiting, k6metric.HTTPReqReceiving, k6metric.HTTPReqFailed}

// addHop is add of one request's values, in hopPoints' order, and, when
// expected, its duration to http_req_duration{expected_response:true}
// (expected), under one lock. The metrics' entries are looked up once
// per run, not at every request.
func (m *K6Metrics) addHop(group string, tags func() map[string]string, vals *[len(hopPoints)]float64, expected bool) {
	m.mu.Lock()
	b := k6Batch{m: m, group: group}
	for i, metric := range hopPoints {
		if m.hopEntries[i] == nil {
			m.hopEntries[i] = m.entries[metric] // nil until the metric's first value
		}
		b.point(m.hopEntries[i], k6Point{metric, vals[i]}, tags)
	}
	if expected {
		m.expected.sink.add(vals[1])
	}
	m.mu.Unlock()
	b.write(tags)
}

// k6Batch is one add's points sharing tags: their tags, made once when
// a submetric or the output needs them (from the add's tags, which the
// batch does not keep, so that they can stay on the caller's stack), and
// the points for the output, written once the lock is released.
type k6Batch struct {
	m     *K6Metrics
	group string
	tm    map[string]string
	// to the output, with the kind and contents a custom metric's
	// declaration gives
	written []outPoint
}

type outPoint struct {
	k6Point
	kind, contains string
}

// point sums one value into its metric's entry e (nil: not made yet).
// m.mu held.
func (b *k6Batch) point(e *k6Entry, p k6Point, tags func() map[string]string) {
	m, group := b.m, b.group
	if math.IsNaN(p.value) {
		return
	}
	if e == nil || e.sink == nil {
		kind := m.kinds[p.metric]
		if kind == "" {
			return
		}
		e = m.entry(p.metric)
		e.sink = m.newSink(kind)
	}
	s := e.sink
	s.add(p.value)
	if m.out != nil && !slices.Contains(hopPoints[:], p.metric) { // Output.request writes a hop's, with its own columns
		contains := k6metric.Plain
		if m.timed[p.metric] {
			contains = k6metric.Time
		}
		b.written = append(b.written, outPoint{p, s.kind, contains})
	}
	if group != "" && (p.metric == k6metric.Checks || p.metric == k6metric.GroupDuration) && !m.groupSeen[group] {
		m.groupSeen[group] = true
		m.groups = append(m.groups, group)
	}
	if group != "" && (p.metric == k6metric.HTTPReqDuration || p.metric == k6metric.GroupDuration) {
		m.wantLocked(p.metric, map[string]string{"group": group})
	}
	for _, sub := range e.fed {
		if b.tm == nil {
			b.tm = tags()
		}
		if matches(sub.filter, b.tm) {
			sub.sink.add(p.value)
		}
	}
}

// write hands the batch's points to the output; m.mu released.
func (b *k6Batch) write(tags func() map[string]string) {
	if len(b.written) == 0 {
		return
	}
	if b.tm == nil {
		b.tm = tags()
	}
	now := time.Now()
	for _, p := range b.written {
		b.m.out.sample(p.metric, p.kind, p.contains, now, p.value, b.tm)
	}
}

// k6Entry is what add takes of one metric (K6Metrics.entries).
type k6Entry struct {
	sink *k6Sink  // the metric's own; nil until its first value
	fed  []*k6Sub // subs' that matching tags feed
}

// sinkOf is metric's own sink; nil before its first value.
func (m *K6Metrics) sinkOf(metric string) *k6Sink {
	if e := m.entries[metric]; e != nil {
		return e.sink
	}
	return nil
}

// entry is metric's entry, made empty when new.
func (m *K6Metrics) entry(metric string) *k6Entry {
	e := m.entries[metric]
	if e == nil {
		e = &k6Entry{}
		m.entries[metric] = e
	}
	return e
}

// matches is k6's TagSet.Contains: every tag of filter is in tags, with
// its value (an empty value too: a tag absent is not a tag "").
func matches(filter, tags map[string]string) bool {
	for k, v := range filter {
		if got, ok := tags[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// groupOrder are the group paths of the checks and group_durations, in
// the order of their first value.
func (m *K6Metrics) groupOrder() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.groups...)
}

// K6Stat is one series' aggregates as k6 computes them. Only the fields
// of its kind are set beside Count and Sum: a Trend's Min to P99, a
// Rate's Trues and Rate, a Gauge's Value, Min and Max.
type K6Stat struct {
	Name     string `json:"name"` // metric or metric{tag:value,...}
	Kind     string `json:"kind"`
	Contains string `json:"contains,omitempty"` // k6's: time, data or default
	// Values are k6's values of the series under k6's names, as its
	// handleSummary data has them (and k6's --summary-export): a Trend's
	// summaryTrendStats columns, a Counter's count and rate (per second of
	// the test run), a Rate's rate, passes and fails, a Gauge's value, min
	// and max. Set by Builtins.
	Values map[string]float64 `json:"values,omitempty"`
	Count  int64              `json:"samples"`       // samples added, whatever their values
	Sum    float64            `json:"sum,omitempty"` // their sum; a Counter's count (k6's) is this
	Trues  int64              `json:"trues,omitempty"`
	Rate   float64            `json:"rate,omitempty"` // a Rate's share of non-zero values
	Value  float64            `json:"value,omitempty"`
	Min    float64            `json:"min,omitempty"`
	Max    float64            `json:"max,omitempty"`
	Avg    float64            `json:"avg,omitempty"`
	Med    float64            `json:"med,omitempty"`
	P90    float64            `json:"p90,omitempty"`
	P95    float64            `json:"p95,omitempty"`
	P99    float64            `json:"p99,omitempty"`
	// Sampled is set when a Trend had more than TrendKeep values: its
	// percentiles are estimated from a uniform sample of TrendKeep.
	Sampled bool `json:"sampled,omitempty"`
}

// stat reads the series called name (a metric or a submetric); false when
// there is none.
func (m *K6Metrics) stat(name string) (K6Stat, *k6Sink, bool) {
	metric, _, _ := strings.Cut(name, "{")
	var s *k6Sink
	if metric == name {
		s = m.sinkOf(name)
	} else if sub, ok := m.subs[metric][name]; ok {
		s = sub.sink
	}
	kind := m.kinds[metric]
	if kind == "" {
		return K6Stat{}, nil, false
	}
	if s == nil {
		s = m.newSink(kind)
	}
	st := K6Stat{Name: name, Kind: kind, Count: s.count, Sum: s.sum}
	switch kind {
	case KindRate:
		st.Trues = s.trues
		if s.count > 0 {
			st.Rate = float64(s.trues) / float64(s.count)
		}
	case KindGauge:
		st.Value, st.Min, st.Max = s.last, s.min, s.gaugeMax()
	case KindTrend:
		if s.count > 0 {
			st.Min, st.Max, st.Avg = s.min, s.max, s.sum/float64(s.count)
		}
		st.Med, st.P90, st.P95, st.P99 = s.pct(0.5), s.pct(0.9), s.pct(0.95), s.pct(0.99)
		st.Sampled = s.count > int64(s.kept())
	}
	return st, s, true
}

// Stat is one series' aggregates as k6 computes them: a metric or a
// submetric a threshold named (Script.SplitThresholds makes those).
func (m *K6Metrics) Stat(name string) (K6Stat, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	st, _, ok := m.stat(name)
	return st, ok
}

// Builtins are the k6 built-in metrics that have values, in k6's
// summary's order, with k6's Values for the Trend columns stats over a
// test run of d. Each group's http_req_duration and group_duration are
// the script's metrics (Script.Metrics), with k6's aggregates too.
func (m *K6Metrics) Builtins(stats []string, d time.Duration) []K6Stat {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []K6Stat
	for _, n := range k6Order {
		b, _ := k6metric.Lookup(n)
		if st, ok := m.summaryStat(n, b.Contains, stats, d); ok {
			out = append(out, st)
		}
	}
	return out
}

// Custom are the script's own metrics (contains: each one's, by name)
// that have values, by name as k6's summary lists them, with k6's Values
// as Builtins gives them.
func (m *K6Metrics) Custom(contains map[string]string, stats []string, d time.Duration) []K6Stat {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []K6Stat
	for n, c := range contains {
		if _, builtin := k6metric.Lookup(n); builtin {
			continue
		}
		if st, ok := m.summaryStat(n, c, stats, d); ok {
			out = append(out, st)
		}
	}
	slices.SortFunc(out, func(a, b K6Stat) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// summaryStat is name's aggregates with k6's summary Values (a Trend's
// stats, a Counter's rate over d), its values being contains; false when
// it has none. mu held.
func (m *K6Metrics) summaryStat(name, contains string, stats []string, d time.Duration) (K6Stat, bool) {
	s := m.sinkOf(name)
	if s == nil || s.count == 0 {
		return K6Stat{}, false
	}
	st, _, _ := m.stat(name)
	st.Contains, st.Values = contains, k6Values(st.Kind, s, stats, d)
	return st, true
}

// percentile is a series' p-th percentile (p in 0..100) by k6's rule.
func (m *K6Metrics) percentile(name string, p float64) (float64, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, s, ok := m.stat(name)
	if !ok {
		return 0, false
	}
	return s.pct(p / 100), true
}
