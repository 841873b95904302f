package record

import "time"

// Metric names what a histogram measures.
type Metric string

// The metrics knee records. Latency of the open model counts from the
// intended start; of the closed model, from the actual send.
const (
	Latency  Metric = "latency"  // end - intended start (open) or end - send (closed)
	Service  Metric = "service"  // end - actual send
	SendLag  Metric = "sendlag"  // actual send - intended start (open model only)
	Interval Metric = "interval" // closed model: one VU's iteration period (response + think)
)

// Key identifies one histogram series: a metric of one request name in one
// scenario. Steps of a stepped test are told apart by time, not by tag.
type Key struct {
	Metric   Metric
	Scenario string
	Name     string
}

// Tag encodes k as an hlog tag ("latency|scenario|name", with characters that
// hlog readers split on — space, comma, '|' and '%' — percent-escaped).
func (k Key) Tag() string { panic("TODO") }

// ParseTag decodes a Tag. An empty or foreign tag becomes {Latency, "", tag}.
func ParseTag(tag string) Key { panic("TODO") }

// Sample is one finished request as the recorder sees it.
type Sample struct {
	Key      Key           // Metric is ignored: Latency, Service, SendLag, Interval are all taken from here
	Latency  time.Duration // always set
	Service  time.Duration // always set
	SendLag  time.Duration // open model; 0 and not recorded for closed
	Interval time.Duration // closed model; 0 and not recorded for open
	Status   int           // HTTP status, 0 when the request failed
	ErrClass string        // "" or one of the ErrorClasses
	BytesIn  int64
	BytesOut int64
}

// ErrorClasses are the error classes knee counts, in report order.
var ErrorClasses = []string{"timeout", "refused", "reset", "dns", "tls", "other"}

// Counters are what a run counts besides latencies. JSON names are the ones
// run.json and --summary-export use.
type Counters struct {
	Requests          int64            `json:"requests"`
	Errors            int64            `json:"errors"`          // transport errors plus 5xx responses
	ByStatus          map[string]int64 `json:"by_status"`       // "1xx".."5xx"
	ErrorsByClass     map[string]int64 `json:"errors_by_class"` // ErrorClasses
	DroppedIterations int64            `json:"dropped_iterations"`
	BytesIn           int64            `json:"bytes_in"`
	BytesOut          int64            `json:"bytes_out"`
	Clamped           int64            `json:"clamped,omitempty"`
}

// Add adds o into c.
func (c *Counters) Add(o Counters) { panic("TODO") }

// IntervalSnapshot is what one Rotate hands out: every series' histogram for
// [Start, End) and the counters of that interval, per scenario.
type IntervalSnapshot struct {
	Start, End time.Duration // since the recorder's t0
	Histograms map[Key]*Histogram
	Counters   map[string]Counters // by scenario
}

// Recorder is a sharded recorder. Safe for concurrent use (see package doc).
type Recorder struct{}

// NewRecorder returns a Recorder whose first interval starts at t0.
func NewRecorder(t0 time.Time) *Recorder { panic("TODO") }

// Shard returns a new shard; give one to each recording goroutine.
func (r *Recorder) Shard() *Shard { panic("TODO") }

// Dropped counts n dropped iterations of a scenario in the current interval.
func (r *Recorder) Dropped(scenario string, n int64) { panic("TODO") }

// Rotate closes the current interval at now and returns it; the next one starts at now.
func (r *Recorder) Rotate(now time.Time) IntervalSnapshot { panic("TODO") }

// Shard records for one goroutine. Its methods may be called concurrently
// with Recorder.Rotate but not with each other.
type Shard struct{}

// Record records one sample.
func (s *Shard) Record(smp Sample) { panic("TODO") }
