package record

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// The fast decoder gives exactly the buckets hdrhistogram-go's own decoder
// gives (the reference), for payloads hdrhistogram-go itself encoded: empty,
// one value, values across the whole range, large counts; and it declines
// another geometry, for the general path.
func TestDecodeOwnPackedMatchesTheLibrary(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		name   string
		record func(h *hdrhistogram.Histogram)
	}{
		{"empty", func(*hdrhistogram.Histogram) {}},
		{"one value", func(h *hdrhistogram.Histogram) { h.RecordValue(1234) }},
		{"the range's ends", func(h *hdrhistogram.Histogram) {
			h.RecordValue(1)
			h.RecordValue(HighestMicros)
		}},
		{"spread", func(h *hdrhistogram.Histogram) {
			for range 5000 {
				h.RecordValue(1 + rng.Int64N(HighestMicros))
			}
		}},
		{"large counts", func(h *hdrhistogram.Histogram) {
			h.RecordValues(70000, 1<<40)
			h.RecordValues(3, 5)
		}},
	} {
		h := hdrhistogram.New(LowestMicros, HighestMicros, SigFigs)
		tc.record(h)
		enc, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
		if err != nil {
			t.Fatal(err)
		}
		ref, err := hdrhistogram.Decode(enc)
		if err != nil {
			t.Fatal(err)
		}
		want := packHdr(ref)
		got, ok := decodeOwnPacked(string(enc))
		if !ok {
			t.Fatalf("%s: declined knee's own geometry", tc.name)
		}
		if got.count != h.TotalCount() || !slices.Equal(got.buckets, want.buckets) {
			t.Errorf("%s: %d values in %d bucket bytes; want %d in %d", tc.name, got.count, len(got.buckets), h.TotalCount(), len(want.buckets))
		}
	}
	other := hdrhistogram.New(1, 1000, 2)
	other.RecordValue(5)
	enc, err := other.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := decodeOwnPacked(string(enc)); ok {
		t.Error("took another geometry as knee's")
	}
	if n := len(NewHistogram().h.Export().Counts); ownCountsLen() != n {
		t.Errorf("ownCountsLen %d; HdrHistogram's counts array has %d", ownCountsLen(), n)
	}
}
