package k6script

import (
	"fmt"
	"math"
	"sort"
	"sync"
	"time"

	"github.com/knee-dev/knee/record"
)

// Kinds of k6/metrics custom metrics.
const (
	KindTrend   = "trend"
	KindCounter = "counter"
	KindRate    = "rate"
	KindGauge   = "gauge"
)

// metric is one custom metric, shared by every VU. A Trend's values go
// into an HdrHistogram (values in the metric's unit, recorded as
// milliseconds: 0.001 resolution), so its percentiles merge as every
// latency does.
type metric struct {
	name, kind string
	isTime     bool
	mu         sync.Mutex
	hist       *record.Histogram
	count      int64
	sum        float64
	nonZero    int64
	last       float64
	min, max   float64
}

// Metrics are a script's custom metrics.
type Metrics struct {
	mu     sync.Mutex
	byName map[string]*metric
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
	if builtinMetric[name] {
		return nil, fmt.Errorf("metric %q is one of k6's own; give the custom metric another name", name)
	}
	x := &metric{name: name, kind: kind, isTime: isTime, min: math.Inf(1), max: math.Inf(-1)}
	if kind == KindTrend {
		x.hist = record.NewHistogram()
	}
	m.byName[name] = x
	return x, nil
}

var builtinMetric = map[string]bool{"http_req_duration": true, "http_req_failed": true, "http_reqs": true, "iterations": true,
	"dropped_iterations": true, "checks": true, "vus": true, "vus_max": true, "data_sent": true, "data_received": true,
	"iteration_duration": true, "http_req_waiting": true, "http_req_sending": true, "http_req_receiving": true,
	"http_req_blocked": true, "http_req_connecting": true, "http_req_tls_handshaking": true, "group_duration": true}

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
	if x.hist != nil {
		x.hist.Record(time.Duration(math.Max(v, 0) * float64(time.Millisecond)))
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
	Med   float64 `json:"med,omitempty"`
	P90   float64 `json:"p90,omitempty"`
	P95   float64 `json:"p95,omitempty"`
	P99   float64 `json:"p99,omitempty"`
	hist  *record.Histogram
}

// Results are every custom metric's totals, by name.
func (m *Metrics) Results() []MetricResult {
	m.mu.Lock()
	names := make([]string, 0, len(m.byName))
	for n := range m.byName {
		names = append(names, n)
	}
	m.mu.Unlock()
	sort.Strings(names)
	out := make([]MetricResult, 0, len(names))
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
		if x.hist != nil {
			r.hist = x.hist.Clone()
			r.Med, r.P90, r.P95, r.P99 = pctMS(r.hist, 50), pctMS(r.hist, 90), pctMS(r.hist, 95), pctMS(r.hist, 99)
		}
		x.mu.Unlock()
		out = append(out, r)
	}
	return out
}

func pctMS(h *record.Histogram, p float64) float64 {
	return float64(h.Percentile(p)) / float64(time.Millisecond)
}

// Percentile is a Trend's p-th percentile in its unit; NaN for other kinds.
func (r MetricResult) Percentile(p float64) float64 {
	if r.hist == nil || r.Count == 0 {
		return math.NaN()
	}
	return pctMS(r.hist, p)
}
