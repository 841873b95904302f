package record

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Cookies of HdrHistogram's binary encodings (the low nibble of the second
// byte carries the word size in V0/V1). hdrhistogram-go decodes only V2;
// jHiccup 2.0.1 and 2.0.6 logs hold V0 and V1, decoded here.
const (
	cookieV0           = 0x1c849308
	cookieV0Compressed = 0x1c849309
	cookieV1           = 0x1c849301
	cookieV1Compressed = 0x1c849302
	cookieV2Compressed = 0x1c849304

	headerSizeV0 = 32 // cookie, sigfigs, lowest, highest, total count
	headerSizeV1 = 40 // cookie, payload length, index offset, sigfigs, lowest, highest, ratio

	// maxInflated bounds a decompressed histogram: 5 significant digits up
	// to 2^62 at 8 bytes a count is well under it.
	maxInflated = 64 << 20
)

var errPayload = errors.New("corrupt histogram payload")

func cookieBase(c uint32) uint32 { return c &^ 0xf0 }

// decodePayload decodes one base64 compressed histogram of any encoding
// version. It never panics: a panic inside the decoder on crafted input is
// turned into an error.
func decodePayload(s string) (h *hdrhistogram.Histogram, err error) {
	defer func() {
		if r := recover(); r != nil {
			h, err = nil, fmt.Errorf("%w: decoder failed: %v", errPayload, r)
		}
	}()
	s = strings.TrimSpace(s)
	raw, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, err
	}
	if len(raw) < 8 {
		return nil, fmt.Errorf("%w: %d bytes, need at least 8", errPayload, len(raw))
	}
	switch cookie := binary.BigEndian.Uint32(raw); cookieBase(cookie) {
	case cookieV2Compressed:
		return hdrhistogram.Decode([]byte(s))
	case cookieV0Compressed, cookieV1Compressed:
		return decodeLegacy(raw)
	default:
		return nil, fmt.Errorf("%w: unknown cookie %#x", errPayload, cookie)
	}
}

// decodeLegacy decodes a compressed V0 or V1 histogram: fixed-width
// big-endian counts in HdrHistogram's usual index order.
func decodeLegacy(raw []byte) (*hdrhistogram.Histogram, error) {
	n := int64(int32(binary.BigEndian.Uint32(raw[4:8])))
	if n < 0 || n > int64(len(raw)-8) {
		return nil, fmt.Errorf("%w: compressed length %d, have %d bytes", errPayload, n, len(raw)-8)
	}
	zr, err := zlib.NewReader(bytes.NewReader(raw[8 : 8+n]))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errPayload, err)
	}
	defer zr.Close()
	inner, err := io.ReadAll(io.LimitReader(zr, maxInflated+1))
	if err != nil {
		return nil, fmt.Errorf("%w: inflate: %w", errPayload, err)
	}
	if len(inner) > maxInflated {
		return nil, fmt.Errorf("%w: inflates past %d bytes", errPayload, maxInflated)
	}
	if len(inner) < headerSizeV0 {
		return nil, fmt.Errorf("%w: header is %d bytes", errPayload, len(inner))
	}
	cookie := binary.BigEndian.Uint32(inner)
	word := int((cookie&0xf0)>>4) & 0xe
	snap := &hdrhistogram.Snapshot{}
	var counts []byte
	switch cookieBase(cookie) {
	case cookieV0:
		snap.SignificantFigures = int64(int32(binary.BigEndian.Uint32(inner[4:])))
		snap.LowestTrackableValue = int64(binary.BigEndian.Uint64(inner[8:]))
		snap.HighestTrackableValue = int64(binary.BigEndian.Uint64(inner[16:]))
		counts = inner[headerSizeV0:]
	case cookieV1:
		if len(inner) < headerSizeV1 {
			return nil, fmt.Errorf("%w: V1 header is %d bytes", errPayload, len(inner))
		}
		payload := int64(int32(binary.BigEndian.Uint32(inner[4:])))
		if offset := int32(binary.BigEndian.Uint32(inner[8:])); offset != 0 {
			return nil, fmt.Errorf("%w: V1 normalizing index offset %d is not supported", errPayload, offset)
		}
		snap.SignificantFigures = int64(int32(binary.BigEndian.Uint32(inner[12:])))
		snap.LowestTrackableValue = int64(binary.BigEndian.Uint64(inner[16:]))
		snap.HighestTrackableValue = int64(binary.BigEndian.Uint64(inner[24:]))
		if payload < 0 || payload > int64(len(inner)-headerSizeV1) {
			return nil, fmt.Errorf("%w: V1 payload length %d, have %d bytes", errPayload, payload, len(inner)-headerSizeV1)
		}
		counts = inner[headerSizeV1 : headerSizeV1+payload]
	default:
		return nil, fmt.Errorf("%w: unknown inner cookie %#x", errPayload, cookie)
	}
	if word != 2 && word != 4 && word != 8 {
		return nil, fmt.Errorf("%w: word size %d", errPayload, word)
	}
	if snap.HighestTrackableValue < 2*max(snap.LowestTrackableValue, 1) {
		return nil, fmt.Errorf("%w: range %d..%d", errPayload, snap.LowestTrackableValue, snap.HighestTrackableValue)
	}
	snap.Counts = make([]int64, len(counts)/word)
	for i := range snap.Counts {
		b := counts[i*word:]
		switch word {
		case 2:
			snap.Counts[i] = int64(int16(binary.BigEndian.Uint16(b)))
		case 4:
			snap.Counts[i] = int64(int32(binary.BigEndian.Uint32(b)))
		case 8:
			snap.Counts[i] = int64(binary.BigEndian.Uint64(b))
		}
	}
	if err := snap.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", errPayload, err)
	}
	return hdrhistogram.Import(snap), nil
}
