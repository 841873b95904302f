package record

import (
	"bytes"
	"io"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// The fast V2 encoder must write exactly what hdrhistogram-go's Encode
// writes, and find the same Max, for every shape of histogram: empty, one
// value at each end of the range, values on bucket edges, runs of one zero,
// counts that need the ninth LEB128 byte, and random spreads.
func TestV2EncoderMatchesLibrary(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	cases := []struct {
		name   string
		values map[int64]int64 // µs -> count
	}{
		{"empty", nil},
		{"lowest", map[int64]int64{1: 1}},
		{"highest", map[int64]int64{HighestMicros: 1}},
		{"both ends", map[int64]int64{1: 3, HighestMicros: 2}},
		{"bucket 0 top", map[int64]int64{2047: 1}},
		{"bucket 1 first", map[int64]int64{2048: 5}},
		{"bucket 1 top", map[int64]int64{4095: 1}},
		{"single zero gaps", map[int64]int64{10: 1, 12: 1, 14: 1}},
		{"huge count", map[int64]int64{500: 1 << 60, 501: 1 << 40}},
		{"count 63 and 64", map[int64]int64{7: 63, 9: 64}},
	}
	random := map[int64]int64{}
	for range 5000 {
		random[1+rng.Int64N(HighestMicros)] += 1 + rng.Int64N(1000)
	}
	cases = append(cases, struct {
		name   string
		values map[int64]int64
	}{"random", random})
	var enc v2Encoder
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHdr()
			for v, n := range c.values {
				if err := h.RecordValues(v, n); err != nil {
					t.Fatal(err)
				}
			}
			want, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
			if err != nil {
				t.Fatal(err)
			}
			prefix := []byte("kept,")
			got, maxValue, err := enc.appendEncoded(append([]byte(nil), prefix...), h)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got[:len(prefix)], prefix) || !bytes.Equal(got[len(prefix):], want) {
				t.Errorf("payload\n got %s\nwant %s%s", got, prefix, want)
			}
			if maxValue != h.Max() {
				t.Errorf("max %d, want %d", maxValue, h.Max())
			}
			// The packed form, encoded from its buckets, writes the same.
			got, maxValue, err = enc.appendHistogram(nil, &Histogram{packed: packHdr(h)})
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("packed payload\n got %s\nwant %s", got, want)
			}
			if maxValue != h.Max() {
				t.Errorf("packed max %d, want %d", maxValue, h.Max())
			}
		})
	}
}

// highestEquivalentAt agrees with the library's bucket geometry at every
// bucket edge: the top of index i is one below the bottom of index i+1.
func TestHighestEquivalentAt(t *testing.T) {
	for _, tc := range []struct {
		i    int
		want int64
	}{
		{0, 0}, {1, 1}, {2047, 2047}, // bucket 0: 1 µs wide
		{2048, 2049}, {3071, 4095}, // bucket 1: 2 µs wide, 2048..4095
		{3072, 4099}, {4095, 8191}, // bucket 2: 4 µs wide
	} {
		if got := highestEquivalentAt(tc.i); got != tc.want {
			t.Errorf("highestEquivalentAt(%d) = %d, want %d", tc.i, got, tc.want)
		}
	}
}

func BenchmarkLogWriterInterval(b *testing.B) {
	h := NewHistogram()
	rng := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		h.Record(time.Duration(1+rng.Int64N(200)) * time.Millisecond)
	}
	lw, err := NewLogWriter(io.Discard, time.Unix(0, 0), "")
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if err := lw.WriteInterval("latency|s|n", 0, time.Second, h); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLibraryEncode is what LogWriter did before v2Encoder, for comparison.
func BenchmarkLibraryEncode(b *testing.B) {
	h := NewHistogram()
	rng := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		h.Record(time.Duration(1+rng.Int64N(200)) * time.Millisecond)
	}
	for b.Loop() {
		if _, err := h.view().Encode(hdrhistogram.V2CompressedEncodingCookieBase); err != nil {
			b.Fatal(err)
		}
		_ = h.view().Max()
	}
}
