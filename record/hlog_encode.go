package record

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// The V2 cookies, as HdrHistogram defines them (word size 8 in the low bits).
const (
	v2EncodingCookie           = hdrhistogram.V2EncodingCookieBase | 0x10
	v2CompressedEncodingCookie = hdrhistogram.V2CompressedEncodingCookieBase | 0x10
)

// v2Encoder writes HdrHistogram's V2 compressed encoding byte for byte as
// hdrhistogram-go's Encode does, but finds the highest bucket by scanning
// the counts from the top (Encode walks every bucket twice through its
// iterator) and keeps its buffers and zlib writer from one interval to the
// next: a run writes one histogram per interval and series.
type v2Encoder struct {
	raw  []byte // header and zig-zag counts, before compression
	comp bytes.Buffer
	zw   *zlib.Writer
	out  []byte // cookie, length and compressed bytes, before base64
}

// appendHistogram appends h's base64 V2 payload to dst, as appendEncoded
// does; a packed h is encoded from its buckets, never unpacked (a full copy
// is ~190 KB to allocate and clear, for a few buckets).
func (e *v2Encoder) appendHistogram(dst []byte, h *Histogram) ([]byte, int64, error) {
	if h.h == nil {
		return e.appendPacked(dst, h.packed)
	}
	return e.appendEncoded(dst, h.h)
}

// appendEncoded appends h's base64 V2 payload to dst and returns it with
// the highest recorded value (HdrHistogram's Max: the top of the highest
// non-empty bucket; 0 when empty).
func (e *v2Encoder) appendEncoded(dst []byte, h *hdrhistogram.Histogram) ([]byte, int64, error) {
	if !ownGeometry(h) {
		// Not knee's geometry (cannot happen for a Histogram): let the library do it.
		payload, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
		return append(dst, payload...), h.Max(), err
	}
	all := countsOf(h)
	top := len(all) - 1
	for top >= 0 && all[top] == 0 {
		top--
	}
	maxValue, limit := int64(0), 1 // an empty histogram encodes one zero count, as Encode does
	if top >= 0 {
		maxValue, limit = highestEquivalentAt(top), top+1
	}
	raw := e.header(conversionRatioOf(h))
	counts := all[:limit]
	for i := 0; i < len(counts); {
		if counts[i] != 0 {
			raw = appendZigZag(raw, counts[i])
			i++
			continue
		}
		zeros := 1
		for i+zeros < len(counts) && counts[i+zeros] == 0 {
			zeros++
		}
		raw = appendZeros(raw, zeros)
		i += zeros
	}
	dst, err := e.compress(dst, raw)
	return dst, maxValue, err
}

// appendPacked is appendEncoded for a packed histogram: the same counts,
// the same bytes (its conversion ratio is a new histogram's, 1).
func (e *v2Encoder) appendPacked(dst []byte, p *packed) ([]byte, int64, error) {
	raw := e.header(0)
	next, top := 0, -1 // the counts index after the last bucket written; that bucket's
	p.each(func(low, n int64) {
		i := indexAt(low)
		raw = appendZeros(raw, i-next)
		raw = appendZigZag(raw, n)
		next, top = i+1, i
	})
	maxValue := int64(0)
	if top < 0 {
		raw = appendZigZag(raw, 0) // an empty histogram encodes one zero count, as Encode does
	} else {
		maxValue = highestEquivalentAt(top)
	}
	dst, err := e.compress(dst, raw)
	return dst, maxValue, err
}

// header starts e.raw with the V2 header for knee's geometry; ratio 0 is
// written as 1, as Encode does.
func (e *v2Encoder) header(ratio float64) []byte {
	if ratio == 0 {
		ratio = 1
	}
	raw := e.raw[:0]
	raw = binary.BigEndian.AppendUint32(raw, uint32(v2EncodingCookie))
	raw = binary.BigEndian.AppendUint32(raw, 0) // counts length, filled in by compress
	raw = binary.BigEndian.AppendUint32(raw, 0) // normalizing index offset
	raw = binary.BigEndian.AppendUint32(raw, uint32(SigFigs))
	raw = binary.BigEndian.AppendUint64(raw, uint64(LowestMicros))
	raw = binary.BigEndian.AppendUint64(raw, uint64(HighestMicros))
	raw = binary.BigEndian.AppendUint64(raw, math.Float64bits(ratio))
	return raw
}

// v2Header is the length of header's bytes.
const v2Header = 40

// appendZeros appends a run of zeros empty counts: nothing, one zero
// count, or a run length (negative), as Encode writes them.
func appendZeros(raw []byte, zeros int) []byte {
	switch {
	case zeros == 1:
		return appendZigZag(raw, 0)
	case zeros > 1:
		return appendZigZag(raw, -int64(zeros))
	}
	return raw
}

// compress fills in raw's counts length, compresses it and appends the
// base64 of cookie, length and compressed bytes to dst.
func (e *v2Encoder) compress(dst, raw []byte) ([]byte, error) {
	binary.BigEndian.PutUint32(raw[4:], uint32(len(raw)-v2Header))
	e.raw = raw

	e.comp.Reset()
	if e.zw == nil {
		zw, err := zlib.NewWriterLevel(&e.comp, zlib.BestCompression)
		if err != nil {
			return dst, fmt.Errorf("zlib: %w", err)
		}
		e.zw = zw
	} else {
		e.zw.Reset(&e.comp)
	}
	if _, err := e.zw.Write(raw); err != nil {
		return dst, fmt.Errorf("zlib: %w", err)
	}
	if err := e.zw.Close(); err != nil {
		return dst, fmt.Errorf("zlib: %w", err)
	}
	out := binary.BigEndian.AppendUint32(e.out[:0], uint32(v2CompressedEncodingCookie))
	out = binary.BigEndian.AppendUint32(out, uint32(e.comp.Len()))
	out = append(out, e.comp.Bytes()...)
	e.out = out
	return base64.StdEncoding.AppendEncode(dst, out), nil
}

// highestEquivalentAt is the highest value counted at counts index i in
// knee's geometry: 2048 sub-buckets in bucket 0, then buckets of 1024
// sub-buckets each twice as wide as the one before.
func highestEquivalentAt(i int) int64 {
	if i < 1<<subBucketBits {
		return int64(i)
	}
	const half = 1 << (subBucketBits - 1)
	bucket := i/half - 1
	sub := int64(i%half + half)
	return sub<<bucket + 1<<bucket - 1
}

// appendZigZag appends v as HdrHistogram's ZigZag LEB128-64b9B: seven bits
// a byte for the first eight bytes, then a ninth byte of eight bits.
func appendZigZag(b []byte, v int64) []byte {
	u := uint64(v<<1) ^ uint64(v>>63)
	for range 8 {
		if u < 0x80 {
			return append(b, byte(u))
		}
		b = append(b, byte(u)|0x80)
		u >>= 7
	}
	return append(b, byte(u))
}
