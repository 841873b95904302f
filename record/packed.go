package record

import (
	"cmp"
	"encoding/binary"
	"math/bits"
	"slices"
	"time"

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
	h.packed = packHdr(h.h)
	h.h = nil
}

// packHdr packs a histogram of knee's own geometry (see ownGeometry).
func packHdr(src *hdrhistogram.Histogram) *packed {
	var buf []byte
	var prev int64
	for i, n := range countsOf(src) {
		if n == 0 {
			continue
		}
		v := valueAtIndex(i)
		buf = binary.AppendUvarint(buf, uint64(v-prev))
		buf = binary.AppendUvarint(buf, uint64(n))
		prev = v
	}
	return &packed{buckets: slices.Clip(buf), count: src.TotalCount()}
}

// HistogramOf is the Histogram of vals, packed: what recording them into a
// new Histogram and packing it gives, without the ~190 KB full one between
// (a series' few values each interval, see fewValues; a probe's few
// hundred timings).
func HistogramOf(vals []time.Duration) *Histogram {
	out := &Histogram{}
	all := make([]lowCount, len(vals))
	for i, d := range vals {
		us, clamped := micros(d)
		if clamped {
			out.clamped++
		}
		all[i] = lowCount{valueAtIndex(indexAt(us)), 1}
	}
	out.packed = &packed{buckets: packBuckets(all), count: int64(len(vals))}
	return out
}

// lowCount is a bucket: its lowest value and its count.
type lowCount struct{ low, n int64 }

// packBuckets sorts buckets by their lowest value and encodes them as
// packed's buckets, the counts of equal lows summed.
func packBuckets(all []lowCount) []byte {
	slices.SortFunc(all, func(a, b lowCount) int { return cmp.Compare(a.low, b.low) })
	var buf []byte
	var prev int64
	for i := 0; i < len(all); {
		low, n := all[i].low, all[i].n
		for i++; i < len(all) && all[i].low == low; i++ {
			n += all[i].n
		}
		buf = binary.AppendUvarint(buf, uint64(low-prev))
		buf = binary.AppendUvarint(buf, uint64(n))
		prev = low
	}
	return slices.Clip(buf)
}

// maxPackedSum is the most bytes of packed buckets, over all its sources,
// that a merge keeps packed (SumPacked): ~4,000 buckets, whose sort costs
// less than a full Histogram's ~190 KB to allocate, clear and walk.
const maxPackedSum = 16 << 10

// SumPacked returns the merge of hs, packed, when every one of them is
// packed and they are small (maxPackedSum); false otherwise, when merging
// into a full Histogram is the way. It reads as that merge would: the same
// buckets, counts and clamped count.
func SumPacked(hs []*Histogram) (*Histogram, bool) {
	size := 0
	for _, h := range hs {
		if h.h != nil {
			return nil, false
		}
		size += len(h.packed.buckets)
	}
	if size > maxPackedSum {
		return nil, false
	}
	all := make([]lowCount, 0, size/2)
	out := &Histogram{}
	var count int64
	for _, h := range hs {
		out.clamped += h.clamped
		count += h.packed.count
		h.packed.each(func(low, n int64) { all = append(all, lowCount{low, n}) })
	}
	out.packed = &packed{buckets: packBuckets(all), count: count}
	return out, true
}

// Sum returns the merge of hs: packed when SumPacked can make it, else
// merged into a new Histogram.
func Sum(hs []*Histogram) *Histogram {
	if out, ok := SumPacked(hs); ok {
		return out
	}
	out := NewHistogram()
	for _, h := range hs {
		out.Merge(h)
	}
	return out
}

// ownGeometry reports whether h has knee's range and precision, so its
// counts array is indexed as knee's.
func ownGeometry(h *hdrhistogram.Histogram) bool {
	return h.LowestTrackableValue() == LowestMicros && h.HighestTrackableValue() == HighestMicros &&
		h.SignificantFigures() == SigFigs
}

// valueAtIndex is the lowest value of counts index i in knee's geometry
// (HdrHistogram's layout with a 1 µs unit and 2048 sub-buckets): indexes
// below 2048 are the values themselves; above, each further 1024 indexes
// cover the next power of two in buckets twice as wide.
func valueAtIndex(i int) int64 {
	const half = 1 << (subBucketBits - 1)
	bucket := i>>(subBucketBits-1) - 1
	sub := int64(i&(half-1)) + half
	if bucket < 0 {
		return int64(i)
	}
	return sub << bucket
}

// indexAt is the counts index of value v (1 .. HighestMicros) in knee's
// geometry: valueAtIndex's inverse for a bucket's lowest value.
func indexAt(v int64) int {
	if v < 1<<subBucketBits {
		return int(v)
	}
	const half = 1 << (subBucketBits - 1)
	bucket := bits.Len64(uint64(v)) - subBucketBits
	return (bucket+1)*half + int(v>>bucket) - half
}

// unpack returns a full Histogram with p's counts.
func (p *packed) unpack() *Histogram {
	out := NewHistogram()
	p.addTo(out)
	return out
}

// addTo adds p's counts to h. Every value is a bucket's lowest equivalent
// in knee's own geometry, so each lands in the bucket it came from (and
// none can be out of range): HdrHistogram's merge, without a full copy.
func (p *packed) addTo(h *Histogram) { p.each(h.recordMicros) }

// each calls fn with every non-empty bucket's lowest value (µs) and count,
// in value order.
func (p *packed) each(fn func(low, n int64)) {
	p.walk(func(low, n int64) bool { fn(low, n); return true })
}

// walk is each until fn returns false.
func (p *packed) walk(fn func(low, n int64) bool) {
	var v int64
	for b := p.buckets; len(b) > 0; {
		d, n1 := binary.Uvarint(b)
		if n1 <= 0 {
			return // only pack writes these bytes: cannot happen
		}
		c, n2 := binary.Uvarint(b[n1:])
		if n2 <= 0 {
			return
		}
		b = b[n1+n2:]
		v += int64(d)
		if !fn(v, int64(c)) {
			return
		}
	}
}

// eachBucket calls fn with every non-empty bucket of h, its lowest value
// (µs) and its count, in value order, without unpacking or allocating a
// bucket list.
func (h *Histogram) eachBucket(fn func(low, n int64)) {
	h.walkBuckets(func(low, n int64) bool { fn(low, n); return true })
}

// walkBuckets is eachBucket until fn returns false.
func (h *Histogram) walkBuckets(fn func(low, n int64) bool) {
	switch {
	case h.h == nil:
		h.packed.walk(fn)
	case ownGeometry(h.h):
		for i, n := range countsOf(h.h) {
			if n != 0 && !fn(valueAtIndex(i), n) {
				return
			}
		}
	default:
		for _, b := range h.h.Distribution() {
			if b.Count != 0 && !fn(b.From, b.Count) {
				return
			}
		}
	}
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

// Packed returns h's packed copy (h itself is untouched): what a long-lived
// keeper of many intervals, such as the live dashboard, holds.
func (h *Histogram) Packed() *Histogram {
	if h.h == nil {
		return h.Clone()
	}
	return &Histogram{packed: packHdr(h.h), clamped: h.clamped}
}
