package record

import (
	"math"
	"math/bits"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Range and precision of every Histogram knee keeps.
const (
	LowestMicros  = 1
	HighestMicros = int64(time.Hour / time.Microsecond)
	SigFigs       = 3
)

// subBucketBits is log2 of the sub-bucket count HdrHistogram derives from
// SigFigs=3 and LowestMicros=1: 2048 sub-buckets, so values below 2048 µs are
// exact and each power of two above doubles the bucket width.
const subBucketBits = 11

// Histogram is a latency distribution in microseconds (HdrHistogram, 1 µs .. 1 h,
// 3 significant digits). The zero value is not usable: call NewHistogram.
//
// A histogram read from a log is kept packed (see packed.go) until it is
// changed: ~2 KB instead of ~190 KB, so a long run fits in memory.
type Histogram struct {
	h       *hdrhistogram.Histogram // nil while packed
	packed  *packed                 // set only while h is nil; shared by clones, never changed
	clamped int64
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
func NewHistogram() *Histogram {
	return &Histogram{h: newHdr()}
}

func newHdr() *hdrhistogram.Histogram { return hdrhistogram.New(LowestMicros, HighestMicros, SigFigs) }

// clampMicros converts raw microseconds into knee's range and reports
// whether the value had to be moved beyond the histogram's resolution. A
// value under 1 µs (a phase that took no time: the connect of a reused
// connection) counts as 1 µs, as any value counts as its bucket's: it is
// not clamped. A negative value or one above an hour is.
func clampMicros(us int64) (int64, bool) {
	switch {
	case us < 0:
		return LowestMicros, true
	case us < LowestMicros:
		return LowestMicros, false
	case us > HighestMicros:
		return HighestMicros, true
	}
	return us, false
}

// micros truncates d to whole microseconds, as HdrHistogram's integer
// values are, then clamps.
func micros(d time.Duration) (int64, bool) {
	return clampMicros(int64(d / time.Microsecond))
}

// recordMicros adds n copies of an in-range value. The only error
// hdrhistogram can return for an in-range value is a total count past
// MaxInt64, which no run reaches; such counts are counted as clamped rather
// than silently lost.
func (h *Histogram) recordMicros(us, n int64) {
	if n <= 0 {
		return
	}
	if err := h.own().RecordValues(us, n); err != nil {
		h.clamped += n
	}
}

// Record adds one value. Values under 1 µs count as 1 µs; negative values
// and values above 1 h are clamped and counted.
func (h *Histogram) Record(d time.Duration) { h.RecordN(d, 1) }

// RecordN adds n copies of d.
func (h *Histogram) RecordN(d time.Duration, n int64) {
	if n <= 0 {
		return
	}
	us, clamped := micros(d)
	if clamped {
		h.clamped += n
	}
	h.recordMicros(us, n)
}

// RecordCorrected adds d and, as HdrHistogram's recordValueWithExpectedInterval
// does, the synthetic values d-I, d-2I, ... while they are >= I.
func (h *Histogram) RecordCorrected(d, expectedInterval time.Duration) {
	us, clamped := micros(d)
	if clamped {
		h.clamped++
	}
	h.recordCorrectedMicros(us, 1, int64(expectedInterval/time.Microsecond))
}

// recordCorrectedMicros records n copies of v and of every synthetic value
// v-I, v-2I, ... >= I. The synthetic values are recorded a bucket at a
// time (all of the progression that falls in one bucket lands on the same
// counter), so a 1 h value with a 1 µs interval costs buckets, not 3.6e9
// loop turns.
func (h *Histogram) recordCorrectedMicros(v, n, interval int64) {
	h.recordMicros(v, n)
	if interval <= 0 || v <= interval {
		return
	}
	for m := v - interval; m >= interval; {
		lo := max(lowestEquivalent(m), interval)
		k := (m-lo)/interval + 1 // progression terms in [lo, m]
		h.recordMicros(m, k*n)
		m -= k * interval
	}
}

// lowestEquivalent is the lowest value sharing v's bucket in knee's geometry
// (1 µs unit, 2048 sub-buckets).
func lowestEquivalent(v int64) int64 {
	if v < 1<<subBucketBits {
		return v
	}
	shift := bits.Len64(uint64(v)) - subBucketBits
	return v >> shift << shift
}

// Corrected returns a new Histogram with every recorded value re-recorded
// through RecordCorrected (HdrHistogram's copyCorrectedForCoordinatedOmission).
// As in HdrHistogram, each bucket is re-recorded at its highest equivalent value.
func (h *Histogram) Corrected(expectedInterval time.Duration) *Histogram {
	out := NewHistogram()
	out.clamped = h.clamped
	interval := int64(expectedInterval / time.Microsecond)
	for _, b := range h.view().Distribution() {
		if b.Count == 0 {
			continue
		}
		// b.To stays in the top bucket even past HighestMicros, so it is recordable.
		out.recordCorrectedMicros(b.To, b.Count, interval)
	}
	return out
}

// Merge adds all of o's counts into h (HdrHistogram add semantics: each source
// bucket lands at its lowest equivalent value). It never averages.
func (h *Histogram) Merge(o *Histogram) {
	if o == nil {
		return
	}
	h.clamped += o.clamped
	if o.h == nil {
		o.packed.addTo(h) // no full copy of a packed source
		return
	}
	// Same geometry: every source bucket's lowest value is in range.
	if dropped := h.own().Merge(o.view()); dropped > 0 {
		h.clamped += dropped
	}
}

// mergeForeign folds a histogram of any geometry and unit into h: each
// source bucket's lowest equivalent value, times perMicro, lands in h
// (clamped and counted when outside knee's range), as Java's add() does
// across geometries.
func (h *Histogram) mergeForeign(src *hdrhistogram.Histogram, perMicro float64) {
	for _, b := range src.Distribution() {
		if b.Count == 0 {
			continue
		}
		scaled := float64(b.From) * perMicro
		var us int64
		if scaled >= float64(math.MaxInt64) {
			us = math.MaxInt64
		} else {
			us = int64(scaled)
		}
		us, clamped := clampMicros(us)
		if clamped {
			h.clamped += b.Count
		}
		h.recordMicros(us, b.Count)
	}
}

// Clone returns a deep copy (a packed histogram's copy shares its
// immutable packed form).
func (h *Histogram) Clone() *Histogram {
	if h.h == nil {
		return &Histogram{packed: h.packed, clamped: h.clamped}
	}
	return &Histogram{h: h.h.Clone(), clamped: h.clamped}
}

// Reset empties h.
func (h *Histogram) Reset() {
	if h.h == nil {
		h.h, h.packed = newHdr(), nil
	}
	h.h.Reset()
	h.clamped = 0
}

// Count is the number of recorded values.
func (h *Histogram) Count() int64 {
	if h.h == nil {
		return h.packed.count
	}
	return h.h.TotalCount()
}

// Clamped is how many recorded values were negative or above 1 h and clamped.
func (h *Histogram) Clamped() int64 { return h.clamped }

func usDuration(us int64) time.Duration { return time.Duration(us) * time.Microsecond }

// Percentile returns the value at pct in [0,100] by nearest rank, as
// HdrHistogram's Java getValueAtPercentile: the smallest recorded value
// that at least pct % of all values do not exceed, reported as the highest
// value equivalent to it (its bucket's upper edge; at pct 0 the lowest).
// 0 when empty.
func (h *Histogram) Percentile(pct float64) time.Duration {
	var out [1]time.Duration
	h.summarise([]float64{pct}, out[:], false)
	return out[0]
}

// nearestRank is the 1-based rank of the value at pct among n > 0 values,
// as Java's HdrHistogram 2.1.11 computes it: ceil(pct·n/100), with pct
// first lowered by one ulp so that a product a hair above an integer
// through binary rounding (99.9 % of 1,000) does not step a rank up, and
// kept in [1, n].
func nearestRank(pct float64, n int64) int64 {
	p := math.Min(math.Max(math.Nextafter(pct, math.Inf(-1)), 0), 100)
	c := math.Ceil(p * float64(n) / 100)
	switch {
	case !(c >= 1): // NaN too
		return 1
	case c >= float64(n):
		return n
	}
	return int64(c)
}

// summarise walks h's buckets once in value order. It sets out[i] to the
// value at pcts[i] (see Percentile) and, when whole, walks on to the end
// for the lowest value of the highest bucket and Java's mean numerator:
// the sum of median × count over the buckets (getMean divides it by the
// count once; hdrhistogram-go divides each term, which differs in the last
// bits). Without whole it stops once every pct is found.
func (h *Histogram) summarise(pcts []float64, out []time.Duration, whole bool) (top int64, sum float64) {
	clear(out)
	n := h.Count()
	if n == 0 {
		return 0, 0
	}
	ranks := make([]int64, len(pcts))
	for i, p := range pcts {
		ranks[i] = nearestRank(p, n)
	}
	left, seen := len(pcts), int64(0)
	h.walkBuckets(func(low, count int64) bool {
		seen += count
		for i, r := range ranks {
			if r > 0 && r <= seen {
				out[i] = usDuration(highestEquivalent(low))
				if pcts[i] == 0 { // Java tests the percentile as given
					out[i] = usDuration(low)
				}
				ranks[i], left = 0, left-1
			}
		}
		top = low
		// The conversion rounds the product, so no platform fuses it into the sum.
		sum += float64(float64(low+equivalentSize(low)>>1) * float64(count))
		return whole || left > 0
	})
	return top, sum
}

// equivalentSize is the width of the bucket whose lowest value is low, in
// knee's geometry: 1 below 2048 µs, doubling with each power of two above.
func equivalentSize(low int64) int64 {
	if low < 1<<subBucketBits {
		return 1
	}
	return 1 << (bits.Len64(uint64(low)) - subBucketBits)
}

// highestEquivalent is the highest value of the bucket whose lowest value is low.
func highestEquivalent(low int64) int64 { return low + equivalentSize(low) - 1 }

// Min is the lowest equivalent value of the lowest recorded value; 0 when empty.
func (h *Histogram) Min() time.Duration {
	var low int64
	h.walkBuckets(func(l, _ int64) bool { low = l; return false })
	return usDuration(low)
}

// Max is the highest equivalent value of the highest recorded value (Java's
// getMaxValue); 0 when empty.
func (h *Histogram) Max() time.Duration {
	if h.Count() == 0 {
		return 0
	}
	top, _ := h.summarise(nil, nil, true)
	return usDuration(highestEquivalent(top))
}

// Mean of the recorded values (each bucket at its median), rounded to the
// nanosecond; 0 when empty.
func (h *Histogram) Mean() time.Duration { return meanDuration(h.meanMicros()) }

func meanDuration(us float64) time.Duration {
	return time.Duration(math.Round(us * float64(time.Microsecond)))
}

// meanMicros is Java's getMean to the last bit.
func (h *Histogram) meanMicros() float64 {
	if h.Count() == 0 {
		return 0
	}
	_, sum := h.summarise(nil, nil, true)
	return sum / float64(h.Count())
}

// CountAbove is the number of values strictly greater than d (to histogram
// precision: values equivalent to d count as d, not above it).
func (h *Histogram) CountAbove(d time.Duration) int64 {
	us := int64(d / time.Microsecond)
	var above int64
	h.eachBucket(func(low, n int64) {
		if low > us {
			above += n
		}
	})
	return above
}

// CountsAtMost returns, for each of the ascending bounds, the number of
// values at most it, as CountAbove counts (a value by its bucket's lowest
// equivalent value), in one pass over the histogram.
func (h *Histogram) CountsAtMost(bounds []time.Duration) []int64 {
	out := make([]int64, len(bounds))
	i, seen := 0, int64(0)
	h.eachBucket(func(low, n int64) {
		for i < len(bounds) && low > int64(bounds[i]/time.Microsecond) {
			out[i] = seen
			i++
		}
		seen += n
	})
	for ; i < len(bounds); i++ {
		out[i] = seen
	}
	return out
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// Latencies summarises h in milliseconds, in one pass over its buckets
// (and a first step for Min).
func (h *Histogram) Latencies() Latencies {
	if h.Count() == 0 {
		return Latencies{}
	}
	var p [5]time.Duration
	top, sum := h.summarise([]float64{50, 90, 95, 99, 99.9}, p[:], true)
	return Latencies{
		Min:  ms(h.Min()),
		Mean: ms(meanDuration(sum / float64(h.Count()))),
		P50:  ms(p[0]),
		P90:  ms(p[1]),
		P95:  ms(p[2]),
		P99:  ms(p[3]),
		P999: ms(p[4]),
		Max:  ms(usDuration(highestEquivalent(top))),
	}
}

// Distribution returns the percentile distribution on HdrHistogram's log "nines"
// steps (ticksPerHalfDistance per halving of the remaining tail), for plots.
// It is nil when h is empty.
func (h *Histogram) Distribution(ticksPerHalfDistance int) []Point {
	if h.Count() == 0 {
		return nil
	}
	if ticksPerHalfDistance < 1 {
		ticksPerHalfDistance = 1
	}
	brackets := h.view().CumulativeDistributionWithTicks(int32(min(ticksPerHalfDistance, math.MaxInt32)))
	out := make([]Point, 0, len(brackets))
	for _, b := range brackets {
		out = append(out, Point{Pct: b.Quantile, Value: usDuration(b.ValueAt), Count: b.Count})
	}
	return out
}

// Series is a set of histograms by Key, e.g. one interval or a whole run.
type Series map[Key]*Histogram

// Add merges every histogram of o into s, cloning the ones s lacks so s
// never aliases o.
func (s Series) Add(o Series) {
	for k, h := range o {
		if have, ok := s[k]; ok {
			have.Merge(h)
		} else {
			s[k] = h.Clone()
		}
	}
}

// Merged returns the merge of every histogram whose key passes keep (all
// when keep is nil), packed when Sum can keep it so. It is empty, never
// nil, when nothing matches.
func (s Series) Merged(keep func(Key) bool) *Histogram {
	return Sum(s.Of(keep))
}

// Of is the histograms whose key passes keep (all when keep is nil).
func (s Series) Of(keep func(Key) bool) []*Histogram {
	var hs []*Histogram
	for k, h := range s {
		if keep == nil || keep(k) {
			hs = append(hs, h)
		}
	}
	return hs
}

// MergeInto merges into out every histogram whose key passes keep (all
// when keep is nil) and returns out: Merged without a new histogram, for
// a caller that reuses one.
func (s Series) MergeInto(out *Histogram, keep func(Key) bool) *Histogram {
	for k, h := range s {
		if keep == nil || keep(k) {
			out.Merge(h)
		}
	}
	return out
}
