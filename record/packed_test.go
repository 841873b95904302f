package record

import (
	"bytes"
	"math/rand/v2"
	"testing"
	"time"
)

// TestPackRoundTrip packs histograms and checks that every reading of the
// packed form equals the full one's (HdrHistogram's own Equals compares
// every bucket), and that a packed histogram stays small.
func TestPackRoundTrip(t *testing.T) {
	us := time.Microsecond
	tests := []struct {
		name     string
		values   []time.Duration
		n        int64 // copies of each value
		maxBytes int   // packed size bound
	}{
		{"empty", nil, 1, 0},
		{"one value", []time.Duration{1500 * us}, 1, 4},
		{"range ends", []time.Duration{us, time.Hour}, 3, 12},
		{"exact region and above", []time.Duration{1 * us, 2047 * us, 2048 * us, 4099 * us, 10 * time.Second}, 1_000_000, 40},
		{"1,000 spread values", spread(1000), 2, 4 * 1000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			full := NewHistogram()
			for _, v := range tt.values {
				full.RecordN(v, tt.n)
			}
			p := full.Clone()
			p.pack()
			if p.h != nil || p.packed == nil {
				t.Fatal("pack left the full histogram in place")
			}
			if n := len(p.packed.buckets); n > tt.maxBytes {
				t.Errorf("packed into %d bytes, want <= %d", n, tt.maxBytes)
			}
			if !p.view().Equals(full.h) {
				t.Error("unpacked histogram differs from the original")
			}
			if p.Count() != full.Count() || p.Min() != full.Min() || p.Max() != full.Max() || p.Mean() != full.Mean() {
				t.Errorf("count/min/max/mean %d/%v/%v/%v, want %d/%v/%v/%v",
					p.Count(), p.Min(), p.Max(), p.Mean(), full.Count(), full.Min(), full.Max(), full.Mean())
			}
			for _, pct := range []float64{0, 50, 99, 99.9, 100} {
				if got, want := p.Percentile(pct), full.Percentile(pct); got != want {
					t.Errorf("p%v = %v, want %v", pct, got, want)
				}
			}
			if got, want := p.CountAbove(time.Millisecond), full.CountAbove(time.Millisecond); got != want {
				t.Errorf("CountAbove(1ms) = %d, want %d", got, want)
			}
			if p.h != nil {
				t.Error("reading unpacked the histogram for good")
			}
		})
	}
}

// TestPackedChanges checks that changing a packed histogram (Record, Merge
// into it, Reset) works on its own counts and leaves its clones alone.
func TestPackedChanges(t *testing.T) {
	ms := time.Millisecond
	base := NewHistogram()
	base.RecordN(3*ms, 5)
	base.pack()
	clone := base.Clone()

	base.Record(7 * ms)
	other := NewHistogram()
	other.Record(9 * ms)
	other.pack()
	base.Merge(other) // a packed source merges without changing

	if got := base.Count(); got != 7 {
		t.Errorf("count after Record and Merge = %d, want 5+1+1", got)
	}
	// 9,000 µs lies in the 8 µs-wide buckets of 8,192..16,383 µs: highest equivalent 9,007 µs.
	if got := base.Max(); got != 9007*time.Microsecond {
		t.Errorf("max = %v, want 9.007ms", got)
	}
	if clone.Count() != 5 || other.Count() != 1 {
		t.Errorf("clone count %d, source count %d; want 5 and 1 (unchanged)", clone.Count(), other.Count())
	}
	clone.Reset()
	if clone.Count() != 0 || clone.Percentile(99) != 0 {
		t.Errorf("reset packed histogram: count %d, p99 %v; want 0, 0", clone.Count(), clone.Percentile(99))
	}
	clone.Record(ms)
	if clone.Count() != 1 {
		t.Errorf("count after reset and Record = %d, want 1", clone.Count())
	}
}

// spread returns n values 1 µs .. ~1 h apart on a log scale.
func spread(n int) []time.Duration {
	out := make([]time.Duration, n)
	v := float64(time.Microsecond)
	step := 1.0219 // 1.0219^1000 ≈ 2.5e9
	for i := range out {
		out[i] = time.Duration(v)
		v *= step
	}
	return out
}

// TestValueAtIndex checks knee's index arithmetic against HdrHistogram's
// own: the lowest value of every bucket of the 1 µs .. 1 h geometry.
func TestValueAtIndex(t *testing.T) {
	h := NewHistogram()
	h.h.RecordValue(HighestMicros) // Distribution lists every bucket up to the highest recorded
	for i, b := range h.h.Distribution() {
		if got := valueAtIndex(i); got != b.From {
			t.Fatalf("valueAtIndex(%d) = %d, HdrHistogram's bucket starts at %d", i, got, b.From)
		}
		// Every value of the bucket, its first, last and middle, is at i.
		for _, v := range []int64{b.From, b.To, (b.From + b.To) / 2} {
			if v < LowestMicros || v > HighestMicros {
				continue
			}
			if got := indexAt(v); got != i {
				t.Fatalf("indexAt(%d) = %d, HdrHistogram counts it in bucket %d (%d..%d)", v, got, i, b.From, b.To)
			}
		}
	}
}

// FuzzLogReaderPacked reads µs logs, whose knee-geometry intervals take the
// packed path without conversion, and reads every histogram back: nothing
// may panic, and packed and unpacked readings must agree.
func FuzzLogReaderPacked(f *testing.F) {
	var log bytes.Buffer
	lw, err := NewLogWriter(&log, time.Unix(1441812279, 0), "seed")
	if err != nil {
		f.Fatal(err)
	}
	h := NewHistogram()
	for _, v := range spread(300) {
		h.Record(v)
	}
	if err := lw.WriteInterval(Key{Latency, "s", "n"}.Tag(), 0, time.Second, h); err != nil {
		f.Fatal(err)
	}
	f.Add(log.Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		lr := NewLogReader(bytes.NewReader(data), "fuzz.hlog", 1000)
		for range 100 {
			iv, err := lr.Next()
			if err != nil {
				return
			}
			p := iv.Histogram
			full := p.Clone()
			full.own()
			if p.Count() != full.Count() || p.Percentile(99) != full.Percentile(99) || p.Max() != full.Max() {
				t.Fatalf("packed count/p99/max %d/%v/%v, unpacked %d/%v/%v",
					p.Count(), p.Percentile(99), p.Max(), full.Count(), full.Percentile(99), full.Max())
			}
			sum := NewHistogram()
			sum.Merge(p)
			if sum.Count() != p.Count() {
				t.Fatalf("merged count %d, want %d", sum.Count(), p.Count())
			}
		}
	})
}

// Packed is a packed copy with the same counts; the source stays as it was
// and can still record.
func TestPackedCopy(t *testing.T) {
	h := NewHistogram()
	for i := range 1000 {
		h.Record(time.Duration(100+i*53) * time.Microsecond)
	}
	p := h.Packed()
	if p.h != nil || p.packed == nil {
		t.Fatal("Packed did not pack")
	}
	if h.h == nil {
		t.Fatal("Packed packed its source")
	}
	if p.Latencies() != h.Latencies() || p.Count() != 1000 {
		t.Errorf("packed %+v (%d), source %+v", p.Latencies(), p.Count(), h.Latencies())
	}
	h.Record(time.Second)
	if p.Count() != 1000 || h.Count() != 1001 {
		t.Errorf("after recording into the source: packed %d, source %d; want 1000, 1001", p.Count(), h.Count())
	}
	if pp := p.Packed(); pp.Count() != 1000 || pp.Max() != p.Max() {
		t.Errorf("Packed of a packed histogram: %d values, max %v", pp.Count(), pp.Max())
	}
}

// HistogramOf packs what recording the values into a new Histogram and
// packing it gives: the same buckets, count and clamped count, for values
// in and out of range, repeated and on bucket edges.
func TestHistogramOf(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	random := make([]time.Duration, 200)
	for i := range random {
		random[i] = time.Duration(rng.Int64N(int64(2 * time.Hour)))
	}
	for _, tc := range []struct {
		name string
		vals []time.Duration
	}{
		{"none", nil},
		{"one", []time.Duration{3 * time.Millisecond}},
		{"repeated", []time.Duration{5 * time.Microsecond, 5 * time.Microsecond, 5*time.Microsecond + 999}},
		{"bucket edges", []time.Duration{2047 * time.Microsecond, 2048 * time.Microsecond, 2049 * time.Microsecond, 4095 * time.Microsecond}},
		{"under 1 µs", []time.Duration{0, 999}},
		{"clamped", []time.Duration{-time.Second, 2 * time.Hour, time.Hour}},
		{"random", random},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := NewHistogram()
			for _, v := range tc.vals {
				want.Record(v)
			}
			wp := want.Packed()
			got := HistogramOf(tc.vals)
			if !bytes.Equal(got.packed.buckets, wp.packed.buckets) || got.Count() != wp.Count() || got.Clamped() != wp.Clamped() {
				t.Errorf("HistogramOf: %d values, %d clamped, buckets %x; recorded and packed: %d, %d, %x",
					got.Count(), got.Clamped(), got.packed.buckets, wp.Count(), wp.Clamped(), wp.packed.buckets)
			}
		})
	}
}

// SumPacked merges packed histograms into the buckets, count and clamped
// count that merging them into a new full Histogram gives, and declines
// (Sum then merging into a full one) when a source is full or the sources
// are too large.
func TestSumPacked(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	spread := func(n int, upTo time.Duration) *Histogram {
		vals := make([]time.Duration, n)
		for i := range vals {
			vals[i] = time.Duration(rng.Int64N(int64(upTo)))
		}
		return HistogramOf(vals)
	}
	full := NewHistogram()
	full.Record(3 * time.Millisecond)
	clamped := HistogramOf([]time.Duration{-time.Second, 2 * time.Hour, 5 * time.Microsecond})
	big := make([]*Histogram, 40)
	for i := range big {
		big[i] = spread(2000, time.Hour) // ~2,000 distinct buckets each: past maxPackedSum together
	}
	for _, tc := range []struct {
		name   string
		hs     []*Histogram
		packed bool
	}{
		{"none", nil, true},
		{"one", []*Histogram{spread(10, time.Second)}, true},
		{"overlapping", []*Histogram{spread(60, 10*time.Millisecond), spread(60, 10*time.Millisecond), spread(5, time.Minute)}, true},
		{"clamped", []*Histogram{clamped, clamped}, true},
		{"a full source", []*Histogram{spread(10, time.Second), full}, false},
		{"too large", big, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := NewHistogram()
			for _, h := range tc.hs {
				want.Merge(h)
			}
			wp := want.Packed()
			got, ok := SumPacked(tc.hs)
			if ok != tc.packed {
				t.Fatalf("SumPacked made a packed merge: %v, want %v", ok, tc.packed)
			}
			sum := Sum(tc.hs)
			for _, g := range []*Histogram{got, sum} {
				if g == nil {
					continue
				}
				gp := g.Packed()
				if !bytes.Equal(gp.packed.buckets, wp.packed.buckets) || g.Count() != want.Count() || g.Clamped() != want.Clamped() {
					t.Errorf("merge: %d values, %d clamped, %d bucket bytes; merged into a full one: %d, %d, %d",
						g.Count(), g.Clamped(), len(gp.packed.buckets), want.Count(), want.Clamped(), len(wp.packed.buckets))
				}
			}
		})
	}
}
