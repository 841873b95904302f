package record

import (
	"encoding/binary"
	"slices"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// A full Histogram costs ~190 KB (every bucket of 1 µs .. 1 h), yet one
// interval of a run fills a few hundred buckets. Histograms read from a log
// are therefore kept packed: a run of 10 minutes holds 1,800 of them, 340 MB
// full but a few MB packed. Reading a packed histogram unpacks a temporary
// copy; changing it unpacks it for good.

// packed is a histogram's non-empty buckets in value order, each as two
// uvarints: its lowest equivalent value (µs) minus the previous bucket's, and
// its count. It is never changed once built, so clones share it.
type packed struct {
	buckets []byte
	count   int64
}

// pack replaces h's full HdrHistogram by its packed form.
func (h *Histogram) pack() {
	if h.h == nil {
		return
	}
	var buf []byte
	var prev int64
	for _, b := range h.h.Distribution() {
		if b.Count == 0 {
			continue
		}
		buf = binary.AppendUvarint(buf, uint64(b.From-prev))
		buf = binary.AppendUvarint(buf, uint64(b.Count))
		prev = b.From
	}
	h.packed = &packed{buckets: slices.Clip(buf), count: h.h.TotalCount()}
	h.h = nil
}

// unpack returns a full Histogram with p's counts. Every value is a bucket's
// lowest equivalent in knee's own geometry, so each lands in the bucket it
// came from (and none can be out of range).
func (p *packed) unpack() *Histogram {
	out := NewHistogram()
	var v int64
	for b := p.buckets; len(b) > 0; {
		d, n1 := binary.Uvarint(b)
		if n1 <= 0 {
			break // only pack writes these bytes: cannot happen
		}
		c, n2 := binary.Uvarint(b[n1:])
		if n2 <= 0 {
			break
		}
		b = b[n1+n2:]
		v += int64(d)
		out.recordMicros(v, int64(c))
	}
	return out
}

// view is h's HdrHistogram to read from: its own, or a temporary unpacked
// copy, so reading a packed histogram changes nothing and stays safe for
// concurrent readers.
func (h *Histogram) view() *hdrhistogram.Histogram {
	if h.h != nil {
		return h.h
	}
	return h.packed.unpack().h
}

// own is h's HdrHistogram to change, unpacked for good if h was packed.
func (h *Histogram) own() *hdrhistogram.Histogram {
	if h.h == nil {
		full := h.packed.unpack()
		h.h, h.packed = full.h, nil
		h.clamped += full.clamped
	}
	return h.h
}
