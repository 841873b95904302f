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
	ratio := conversionRatioOf(h)
	if ratio == 0 {
		ratio = 1
	}

	raw := e.raw[:0]
	raw = binary.BigEndian.AppendUint32(raw, uint32(v2EncodingCookie))
	raw = binary.BigEndian.AppendUint32(raw, 0) // counts length, filled in below
	raw = binary.BigEndian.AppendUint32(raw, 0) // normalizing index offset
	raw = binary.BigEndian.AppendUint32(raw, uint32(SigFigs))
	raw = binary.BigEndian.AppendUint64(raw, uint64(LowestMicros))
	raw = binary.BigEndian.AppendUint64(raw, uint64(HighestMicros))
	raw = binary.BigEndian.AppendUint64(raw, math.Float64bits(ratio))
	const header = 40
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
		if zeros == 1 {
			raw = appendZigZag(raw, 0)
		} else {
			raw = appendZigZag(raw, -int64(zeros))
		}
		i += zeros
	}
	binary.BigEndian.PutUint32(raw[4:], uint32(len(raw)-header))
	e.raw = raw

	e.comp.Reset()
	if e.zw == nil {
		zw, err := zlib.NewWriterLevel(&e.comp, zlib.BestCompression)
		if err != nil {
			return dst, 0, fmt.Errorf("zlib: %w", err)
		}
		e.zw = zw
	} else {
		e.zw.Reset(&e.comp)
	}
	if _, err := e.zw.Write(raw); err != nil {
		return dst, 0, fmt.Errorf("zlib: %w", err)
	}
	if err := e.zw.Close(); err != nil {
		return dst, 0, fmt.Errorf("zlib: %w", err)
	}
	out := binary.BigEndian.AppendUint32(e.out[:0], uint32(v2CompressedEncodingCookie))
	out = binary.BigEndian.AppendUint32(out, uint32(e.comp.Len()))
	out = append(out, e.comp.Bytes()...)
	e.out = out
	return base64.StdEncoding.AppendEncode(dst, out), maxValue, nil
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
