package record

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"io"
	"math"
	"math/bits"
	"strings"
)

// inflater inflates V2 payloads one after another with one zlib reader and
// one buffer: a new reader is ~120 KB of decompressor and window to
// allocate, per interval of a log. The zero value is ready; not safe for
// concurrent use.
type inflater struct {
	src bytes.Reader
	zr  io.ReadCloser // a zlib reader, reset for each payload (zlib.Resetter); nil before the first
	out bytes.Buffer
}

// inflate returns the inflated raw, valid until the next call; false when
// raw is not a zlib stream or inflates to more than maxInflated bytes.
func (f *inflater) inflate(raw []byte) ([]byte, bool) {
	f.src.Reset(raw)
	if f.zr == nil {
		zr, err := zlib.NewReader(&f.src)
		if err != nil {
			return nil, false
		}
		f.zr = zr
	} else if err := f.zr.(zlib.Resetter).Reset(&f.src, nil); err != nil {
		return nil, false
	}
	f.out.Reset()
	_, err := f.out.ReadFrom(io.LimitReader(f.zr, maxInflated+1))
	if cerr := f.zr.Close(); err == nil {
		err = cerr
	}
	if err != nil || f.out.Len() > maxInflated {
		return nil, false
	}
	return f.out.Bytes(), true
}

// decodeOwnPacked decodes a V2 compressed payload of knee's own geometry
// straight into its packed form, never building the ~190 KB full
// HdrHistogram that decodePayload and packHdr would each allocate or copy:
// reading a long log costs what its non-empty buckets do. ok is false for
// anything else (another geometry, another encoding, a count of 2^56 or
// more, a malformed payload): the caller then takes the general path,
// which also says what is wrong. f inflates it (nil: a new inflater).
func decodeOwnPacked(s string, f *inflater) (p *packed, ok bool) {
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(s))
	if err != nil || len(raw) < 8 || cookieBase(binary.BigEndian.Uint32(raw)) != cookieV2Compressed {
		return nil, false
	}
	n := int64(binary.BigEndian.Uint32(raw[4:8]))
	if n > int64(len(raw)-8) {
		return nil, false
	}
	if f == nil {
		f = &inflater{}
	}
	inner, ok := f.inflate(raw[8 : 8+n])
	if !ok || len(inner) < 40 {
		return nil, false
	}
	// The V2 header: cookie, payload length, normalizing index offset,
	// significant figures, lowest and highest trackable values, ratio.
	if cookieBase(binary.BigEndian.Uint32(inner)) != cookieBase(uint32(v2EncodingCookie)) ||
		binary.BigEndian.Uint32(inner[8:]) != 0 ||
		int64(binary.BigEndian.Uint32(inner[12:])) != SigFigs ||
		int64(binary.BigEndian.Uint64(inner[16:])) != LowestMicros ||
		int64(binary.BigEndian.Uint64(inner[24:])) != HighestMicros ||
		math.Float64frombits(binary.BigEndian.Uint64(inner[32:])) != 1 {
		return nil, false
	}
	length := int(binary.BigEndian.Uint32(inner[4:]))
	if length > len(inner)-40 {
		return nil, false
	}
	counts := inner[40 : 40+length]
	limit := ownCountsLen()
	var buf []byte
	var prev, total int64
	for i := 0; len(counts) > 0; {
		u, k := binary.Uvarint(counts)
		if k <= 0 || k > 8 {
			return nil, false // a 9-byte LEB128-64b9B count: the general path reads it
		}
		counts = counts[k:]
		v := int64(u>>1) ^ -int64(u&1)
		switch {
		case v < 0:
			i += int(-v) // a run of empty buckets
		case v == 0:
			i++
		default:
			if i >= limit {
				return nil, false
			}
			low := valueAtIndex(i)
			buf = binary.AppendUvarint(buf, uint64(low-prev))
			buf = binary.AppendUvarint(buf, uint64(v))
			prev, total = low, total+v
			i++
		}
		if i > limit || total < 0 {
			return nil, false
		}
	}
	return &packed{buckets: buf, count: total}, true
}

// ownCountsLen is the length of the counts array of knee's geometry: to
// the end of the bucket that holds HighestMicros (see valueAtIndex).
func ownCountsLen() int {
	bucket := bits.Len64(uint64(HighestMicros)) - subBucketBits // HighestMicros >> bucket is in [1024, 2048)
	return (bucket + 2) << (subBucketBits - 1)
}
