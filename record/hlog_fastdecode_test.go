package record

import (
	"bytes"
	"encoding/base64"
	"errors"
	"io"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// The fast decoder gives exactly the buckets hdrhistogram-go's own decoder
// gives (the reference), for payloads hdrhistogram-go itself encoded: empty,
// one value, values across the whole range, large counts; and it declines
// another geometry, for the general path. One inflater decodes them all,
// as a log's reader does, with a corrupt payload between each two, which it
// declines and then goes on.
func TestDecodeOwnPackedMatchesTheLibrary(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var f inflater
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
		got, ok := decodeOwnPacked(string(enc), &f)
		if !ok {
			t.Fatalf("%s: declined knee's own geometry", tc.name)
		}
		raw, err := base64.StdEncoding.DecodeString(string(enc))
		if err != nil {
			t.Fatal(err)
		}
		raw[len(raw)-1] ^= 0xff // the zlib checksum's last byte
		if _, ok := decodeOwnPacked(base64.StdEncoding.EncodeToString(raw), &f); ok {
			t.Errorf("%s: a payload with a wrong checksum was decoded", tc.name)
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
	if _, ok := decodeOwnPacked(string(enc), &f); ok {
		t.Error("took another geometry as knee's")
	}
	if n := len(NewHistogram().h.Export().Counts); ownCountsLen() != n {
		t.Errorf("ownCountsLen %d; HdrHistogram's counts array has %d", ownCountsLen(), n)
	}
}

// BenchmarkReadLog reads a log of 600 intervals of a few hundred buckets
// each (10 minutes at 1 s): what reading a run back costs per interval.
func BenchmarkReadLog(b *testing.B) {
	rng := rand.New(rand.NewPCG(9, 10))
	var log bytes.Buffer
	lw, err := NewLogWriter(&log, time.Unix(1700000000, 0), "bench")
	if err != nil {
		b.Fatal(err)
	}
	for i := range 600 {
		h := NewHistogram()
		for range 300 {
			h.Record(time.Duration(rng.Int64N(int64(50 * time.Millisecond))))
		}
		if err := lw.WriteInterval("latency", time.Duration(i)*time.Second, time.Second, h); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		lr := NewLogReader(bytes.NewReader(log.Bytes()), "bench.hlog", 1000)
		n := 0
		for {
			if _, err := lr.Next(); err != nil {
				if errors.Is(err, io.EOF) {
					break
				}
				b.Fatal(err)
			}
			n++
		}
		if n != 600 {
			b.Fatalf("read %d intervals, wrote 600", n)
		}
	}
}
