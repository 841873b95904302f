package record

import "time"

// Range and precision of every Histogram knee keeps.
const (
	LowestMicros  = 1
	HighestMicros = int64(time.Hour / time.Microsecond)
	SigFigs       = 3
)

// Histogram is a latency distribution in microseconds (HdrHistogram, 1 µs .. 1 h,
// 3 significant digits). The zero value is not usable: call NewHistogram.
type Histogram struct { /* wraps *hdrhistogram.Histogram */
}

// Latencies is the percentile summary of a Histogram in milliseconds, as
// exported in JSON (`latency_ms`). Percentiles come first on purpose.
type Latencies struct {
	Min  float64 `json:"min"`
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P95  float64 `json:"p95"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p99.9"`
	Max  float64 `json:"max"`
}

// Point is one point of a percentile distribution: the value at percentile Pct (0..100).
type Point struct {
	Pct   float64       `json:"pct"`
	Value time.Duration `json:"value_ns"`
	Count int64         `json:"count"`
}

// NewHistogram returns an empty Histogram.
func NewHistogram() *Histogram { panic("TODO") }

// Record adds one value. Values outside 1 µs .. 1 h are clamped and counted.
func (h *Histogram) Record(d time.Duration) { panic("TODO") }

// RecordN adds n copies of d.
func (h *Histogram) RecordN(d time.Duration, n int64) { panic("TODO") }

// RecordCorrected adds d and, as HdrHistogram's recordValueWithExpectedInterval
// does, the synthetic values d-I, d-2I, ... while they are >= I.
func (h *Histogram) RecordCorrected(d, expectedInterval time.Duration) { panic("TODO") }

// Corrected returns a new Histogram with every recorded value re-recorded
// through RecordCorrected (HdrHistogram's copyCorrectedForCoordinatedOmission).
func (h *Histogram) Corrected(expectedInterval time.Duration) *Histogram { panic("TODO") }

// Merge adds all of o's counts into h (HdrHistogram add semantics: each source
// bucket lands at its lowest equivalent value). It never averages.
func (h *Histogram) Merge(o *Histogram) { panic("TODO") }

// Clone returns a deep copy.
func (h *Histogram) Clone() *Histogram { panic("TODO") }

// Reset empties h.
func (h *Histogram) Reset() { panic("TODO") }

// Count is the number of recorded values.
func (h *Histogram) Count() int64 { panic("TODO") }

// Clamped is how many recorded values were outside 1 µs .. 1 h and clamped.
func (h *Histogram) Clamped() int64 { panic("TODO") }

// Percentile returns the value at pct in [0,100] (HdrHistogram semantics:
// the highest equivalent value of the bucket that holds it). 0 when empty.
func (h *Histogram) Percentile(pct float64) time.Duration { panic("TODO") }

// Min, Max and Mean of the recorded values; 0 when empty.
func (h *Histogram) Min() time.Duration  { panic("TODO") }
func (h *Histogram) Max() time.Duration  { panic("TODO") }
func (h *Histogram) Mean() time.Duration { panic("TODO") }

// CountAbove is the number of values strictly greater than d (to histogram precision).
func (h *Histogram) CountAbove(d time.Duration) int64 { panic("TODO") }

// Latencies summarises h in milliseconds.
func (h *Histogram) Latencies() Latencies { panic("TODO") }

// Distribution returns the percentile distribution on HdrHistogram's log "nines"
// steps (ticksPerHalfDistance per halving of the remaining tail), for plots.
func (h *Histogram) Distribution(ticksPerHalfDistance int) []Point { panic("TODO") }
