package record

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

func within(t *testing.T, what string, got, want time.Duration, rel float64) {
	t.Helper()
	if math.Abs(float64(got-want)) > rel*float64(want) {
		t.Errorf("%s = %v, want %v ±%.2f%%", what, got, want, rel*100)
	}
}

// 1..100 ms, one value each. Buckets worked by hand: at 3 significant
// digits a value v >= 2048 µs sits in a bucket of width 2^(bitlen(v)-11).
func TestHistogramHandWorked(t *testing.T) {
	h := NewHistogram()
	for i := 1; i <= 100; i++ {
		h.Record(time.Duration(i) * time.Millisecond)
	}
	tests := []struct {
		name string
		got  time.Duration
		want time.Duration // exact, by hand
		near time.Duration // the true value, within 0.1 %
	}{
		{"min", h.Min(), 1000 * time.Microsecond, time.Millisecond},                    // 1000 < 2048: exact
		{"p50", h.Percentile(50), 50015 * time.Microsecond, 50 * time.Millisecond},     // rank 50; 50000 in [49984,50015] (width 32)
		{"p99", h.Percentile(99), 99007 * time.Microsecond, 99 * time.Millisecond},     // rank 99; 99000 in [98944,99007] (width 64)
		{"p100", h.Percentile(100), 100031 * time.Microsecond, 100 * time.Millisecond}, // 100000 in [99968,100031]
		{"max", h.Max(), 100031 * time.Microsecond, 100 * time.Millisecond},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s = %v, want %v", tt.name, tt.got, tt.want)
		}
		within(t, tt.name, tt.got, tt.near, 0.001)
	}
	within(t, "mean", h.Mean(), 50500*time.Microsecond, 0.001)
	if h.Count() != 100 || h.Clamped() != 0 {
		t.Errorf("count %d clamped %d, want 100, 0", h.Count(), h.Clamped())
	}
	if n := h.CountAbove(90 * time.Millisecond); n != 10 {
		t.Errorf("CountAbove(90ms) = %d, want 10", n)
	}
	l := h.Latencies()
	if l.Min != 1 || l.P50 != 50.015 || l.Max != 100.031 {
		t.Errorf("Latencies = %+v", l)
	}
}

func TestHistogramEmpty(t *testing.T) {
	h := NewHistogram()
	if h.Percentile(99) != 0 || h.Min() != 0 || h.Max() != 0 || h.Mean() != 0 || h.Distribution(5) != nil {
		t.Errorf("empty histogram reports non-zero values")
	}
}

func TestHistogramClamping(t *testing.T) {
	h := NewHistogram()
	h.Record(0)
	h.Record(500 * time.Nanosecond)
	h.Record(-time.Second)
	h.Record(2 * time.Hour)
	h.Record(time.Millisecond)
	// 0 and 500 ns are within the histogram's 1 µs resolution, counted as
	// 1 µs; -1 s and 2 h are clamped.
	if h.Count() != 5 || h.Clamped() != 2 {
		t.Fatalf("count %d clamped %d, want 5, 2", h.Count(), h.Clamped())
	}
	if h.Min() != time.Microsecond {
		t.Errorf("min = %v, want 1µs", h.Min())
	}
	within(t, "max", h.Max(), time.Hour, 0.001)
	o := h.Clone()
	o.Merge(h)
	if o.Count() != 10 || o.Clamped() != 4 {
		t.Errorf("merged count %d clamped %d, want 10, 4", o.Count(), o.Clamped())
	}
	h.Reset()
	if h.Count() != 0 || h.Clamped() != 0 || o.Count() != 10 {
		t.Errorf("Reset: count %d clamped %d, clone %d", h.Count(), h.Clamped(), o.Count())
	}
}

// HdrHistogram's HistogramDataAccessTest: 10,000 × 1 ms plus one 100 s
// value, expected interval 10 ms, recorded corrected and corrected after.
func TestCorrectedReference(t *testing.T) {
	raw, rec := NewHistogram(), NewHistogram()
	for range 10000 {
		rec.RecordCorrected(time.Millisecond, 10*time.Millisecond)
		raw.Record(time.Millisecond)
	}
	rec.RecordCorrected(100*time.Second, 10*time.Millisecond)
	raw.Record(100 * time.Second)
	post := raw.Corrected(10 * time.Millisecond)

	if raw.Count() != 10001 || rec.Count() != 20000 || post.Count() != 20000 {
		t.Fatalf("counts raw %d rec %d post %d, want 10001, 20000, 20000", raw.Count(), rec.Count(), post.Count())
	}
	rawWant := []struct {
		pct  float64
		want time.Duration
	}{{30, time.Millisecond}, {99, time.Millisecond}, {99.99, time.Millisecond}, {99.999, 100 * time.Second}, {100, 100 * time.Second}}
	for _, c := range rawWant {
		within(t, "raw percentile", raw.Percentile(c.pct), c.want, 0.001)
	}
	corrWant := []struct {
		pct  float64
		want time.Duration
	}{{30, time.Millisecond}, {50, time.Millisecond}, {75, 50 * time.Second}, {90, 80 * time.Second}, {99, 98 * time.Second}, {99.999, 100 * time.Second}, {100, 100 * time.Second}}
	for _, h := range []*Histogram{rec, post} {
		for _, c := range corrWant {
			within(t, "corrected percentile", h.Percentile(c.pct), c.want, 0.001)
		}
	}
	rawMean := time.Duration(math.Round((10000.0*1000 + 100000000) / 10001 * 1000))
	within(t, "raw mean", raw.Mean(), rawMean, 0.001)
	within(t, "corrected mean", rec.Mean(), time.Duration((1000.0+50000000)/2*1000), 0.001)
}

// The bucket-batched correction must equal HdrHistogram's own one-by-one
// recordValueWithExpectedInterval.
func TestRecordCorrectedMatchesHdr(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		v := rng.Int64N(HighestMicros/100) + 1
		iv := rng.Int64N(v/3+1) + 1
		if v/iv > 2_000_000 {
			continue
		}
		ref := hdrhistogram.New(LowestMicros, HighestMicros, SigFigs)
		if err := ref.RecordCorrectedValue(v, iv); err != nil {
			t.Fatal(err)
		}
		h := NewHistogram()
		h.RecordCorrected(time.Duration(v)*time.Microsecond, time.Duration(iv)*time.Microsecond)
		if !h.h.Equals(ref) {
			t.Fatalf("RecordCorrected(%d, %d) differs from hdrhistogram's", v, iv)
		}
	}
}

// Java's add() folds a foreign geometry at each source bucket's lowest
// value: 1.5 ms in a ns histogram sits in [1499136, 1500159] ns (width
// 1024), so it lands at 1499 µs.
func TestMergeForeignGeometry(t *testing.T) {
	src := hdrhistogram.New(1, 3_600_000_000_000, 3)
	if err := src.RecordValues(1_500_000, 3); err != nil {
		t.Fatal(err)
	}
	if err := src.RecordValues(300, 2); err != nil { // 0.3 µs: 1 µs, the resolution, not clamped
		t.Fatal(err)
	}
	h := NewHistogram()
	h.mergeForeign(src, 0.001)
	if h.Count() != 5 || h.Clamped() != 0 {
		t.Fatalf("count %d clamped %d, want 5, 0", h.Count(), h.Clamped())
	}
	if got := h.Percentile(100); got != 1499*time.Microsecond {
		t.Errorf("max = %v, want 1.499ms", got)
	}
	if got := h.Min(); got != time.Microsecond {
		t.Errorf("min = %v, want 1µs", got)
	}
}

func TestDistributionAndSeries(t *testing.T) {
	h := NewHistogram()
	for i := 1; i <= 1000; i++ {
		h.Record(time.Duration(i) * time.Microsecond)
	}
	d := h.Distribution(1)
	if len(d) < 3 || d[0].Pct != 0 || d[len(d)-1].Pct != 100 || d[len(d)-1].Value != time.Millisecond || d[len(d)-1].Count != 1000 {
		t.Errorf("distribution ends wrong: %+v ... %+v", d[0], d[len(d)-1])
	}
	for i := 1; i < len(d); i++ {
		if d[i].Pct < d[i-1].Pct || d[i].Value < d[i-1].Value {
			t.Fatalf("distribution not monotonic at %d: %+v %+v", i, d[i-1], d[i])
		}
	}
	a := Series{{Metric: Latency, Name: "a"}: h.Clone()}
	b := Series{{Metric: Latency, Name: "a"}: h, {Metric: Service, Name: "a"}: h}
	a.Add(b)
	if a[Key{Metric: Latency, Name: "a"}].Count() != 2000 || h.Count() != 1000 {
		t.Errorf("Series.Add merged wrong or aliased its source")
	}
	if got := a.Merged(func(k Key) bool { return k.Metric == Service }).Count(); got != 1000 {
		t.Errorf("Merged(service) = %d, want 1000", got)
	}
}

// Nearest rank, worked by hand: the value at p is the ceil(p·N/100)-th
// smallest. Values below 2048 µs sit in buckets of width 1, so the value is
// the recorded one; above, the bucket's upper edge.
func TestPercentileNearestRank(t *testing.T) {
	upTo := func(n int) *Histogram { // 1, 2, ..., n µs
		h := NewHistogram()
		for v := 1; v <= n; v++ {
			h.Record(time.Duration(v) * time.Microsecond)
		}
		return h
	}
	tests := []struct {
		name string
		h    *Histogram
		pct  float64
		want time.Duration // µs
	}{
		// The 1,694 requests. 95 % of 1694 = 1609.3: rank 1610
		// (int(q·N+0.5) gave 1609, one rank low).
		{"1694 p50", upTo(1694), 50, 847},      // 847 exactly
		{"1694 p90", upTo(1694), 90, 1525},     // 1524.6
		{"1694 p95", upTo(1694), 95, 1610},     // 1609.3
		{"1694 p99", upTo(1694), 99, 1678},     // 1677.06
		{"1694 p99.9", upTo(1694), 99.9, 1693}, // 1692.306
		{"1694 p100", upTo(1694), 100, 1694},
		{"1694 p0", upTo(1694), 0, 1},
		// 99.9 % of 1,000 is 999 exactly, though 99.9·1000/100 computes
		// to 999.0000000000001: rank 999, not 1,000.
		{"1000 p99.9", upTo(1000), 99.9, 999},
		{"1000 p99.99", upTo(1000), 99.99, 1000}, // 999.9
		{"1000 p0.1", upTo(1000), 0.1, 1},        // 1 exactly
		{"1000 p0.15", upTo(1000), 0.15, 2},      // 1.5
		{"1 p50", upTo(1), 50, 1},
		// 10 values of 1..10 ms (buckets of width 8 from 8192 µs): p95 is
		// rank 10 (9.5), 10 ms in [10000, 10007]; p90 rank 9, in [9000, 9007].
		{"10ms p95", tenMS(), 95, 10007},
		{"10ms p90", tenMS(), 90, 9007},
		{"10ms p50", tenMS(), 50, 5003}, // rank 5, [5000, 5003]
		{"10ms p0", tenMS(), 0, 1000},   // lowest of the first bucket
		// README's example: 10 11 12 13 14 15 16 18 25 60 ms. p50 rank 5,
		// 14 ms in [14000, 14007]; p90 rank 9, 25 ms in [24992, 25007]
		// (width 16); p95 rank 10, 60 ms in [60000, 60031] (width 32).
		{"readme p50", readmeExample(), 50, 14007},
		{"readme p90", readmeExample(), 90, 25007},
		{"readme p95", readmeExample(), 95, 60031},
	}
	for _, tt := range tests {
		if got := tt.h.Percentile(tt.pct); got != tt.want*time.Microsecond {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want*time.Microsecond)
		}
	}
	l := upTo(1694).Latencies()
	if want := (Latencies{Min: 0.001, Mean: 0.8475, P50: 0.847, P90: 1.525, P95: 1.61, P99: 1.678, P999: 1.693, Max: 1.694}); l != want {
		t.Errorf("Latencies of 1..1694 µs = %+v, want %+v", l, want)
	}
}

func tenMS() *Histogram {
	h := NewHistogram()
	for v := 1; v <= 10; v++ {
		h.Record(time.Duration(v) * time.Millisecond)
	}
	return h
}

func readmeExample() *Histogram {
	h := NewHistogram()
	for _, v := range []int{10, 11, 12, 13, 14, 15, 16, 18, 25, 60} {
		h.Record(time.Duration(v) * time.Millisecond)
	}
	return h
}
