package probe

import (
	"maps"
	"math"
	"slices"

	dto "github.com/prometheus/client_model/go"
)

// A native (sparse) histogram has exponential buckets: at schema s the
// bucket with index i holds (2^((i-1)·2^-s), 2^(i·2^-s)], plus a zero
// bucket [-zero_threshold, zero_threshold] and mirrored negative buckets.
// Only the protobuf exposition format carries them.

// isNative reports whether the series are native histograms: any of them
// carries a schema or a zero bucket and no classic finite bucket.
func isNative(ms []*dto.Metric) bool {
	for _, m := range ms {
		h := m.GetHistogram()
		if h == nil {
			continue
		}
		if h.Schema == nil && h.ZeroThreshold == nil && len(h.GetPositiveSpan()) == 0 && len(h.GetNegativeSpan()) == 0 {
			return false
		}
		for _, b := range h.GetBucket() {
			if !math.IsInf(b.GetUpperBound(), 1) {
				return false // classic buckets are there too: the histogram is read as before
			}
		}
		return true
	}
	return false
}

// nativeCounts is a native histogram's counts at one schema.
type nativeCounts struct {
	schema   int32
	zero     float64 // the zero bucket's count
	zeroTh   float64
	pos, neg map[int]float64 // by bucket index
}

// sumNative adds up the native histograms of ms at the lowest schema among them.
func sumNative(ms []*dto.Metric, schema int32) nativeCounts {
	out := nativeCounts{schema: schema, pos: map[int]float64{}, neg: map[int]float64{}}
	for _, m := range ms {
		h := m.GetHistogram()
		if h == nil {
			continue
		}
		out.zero += float64(h.GetZeroCount()) + h.GetZeroCountFloat()
		out.zeroTh = max(out.zeroTh, h.GetZeroThreshold())
		shift := h.GetSchema() - schema
		add := func(dst map[int]float64, spans []*dto.BucketSpan, deltas []int64, counts []float64) {
			idx, n, abs := int32(0), 0, int64(0)
			for _, sp := range spans {
				idx += sp.GetOffset()
				// A span longer than its counts (a malformed histogram) stops at them.
				for j := uint32(0); j < sp.GetLength() && n < max(len(deltas), len(counts)); j++ {
					var c float64
					if len(counts) > 0 {
						if n < len(counts) {
							c = counts[n]
						}
					} else if n < len(deltas) {
						abs += deltas[n]
						c = float64(abs)
					}
					dst[reindex(idx, shift)] += c
					idx++
					n++
				}
			}
		}
		add(out.pos, h.GetPositiveSpan(), h.GetPositiveDelta(), h.GetPositiveCount())
		add(out.neg, h.GetNegativeSpan(), h.GetNegativeDelta(), h.GetNegativeCount())
	}
	return out
}

// reindex maps bucket index i of a schema shift levels finer to the
// coarser schema: each coarse bucket merges 2^shift fine ones, so the
// index is ceil(i / 2^shift).
func reindex(i, shift int32) int {
	if shift <= 0 {
		return int(i)
	}
	return int(math.Ceil(float64(i) / float64(int64(1)<<shift)))
}

func minSchema(sets ...[]*dto.Metric) int32 {
	s := int32(math.MaxInt32)
	for _, ms := range sets {
		for _, m := range ms {
			if h := m.GetHistogram(); h != nil && h.Schema != nil {
				s = min(s, h.GetSchema())
			}
		}
	}
	if s == math.MaxInt32 {
		return 0
	}
	return s
}

// nativeQuantileDelta is the q-quantile of what native histograms observed
// between two scrapes, estimated as Prometheus's histogram_quantile does
// for native histograms: the rank's bucket is found in ascending order
// (negative buckets, the zero bucket, positive buckets) and the value is
// interpolated inside it exponentially, lower·(upper/lower)^f for the
// fraction f of the bucket's count below the rank, which is exact when
// the observations spread evenly on a log scale; linearly in the zero bucket.
func nativeQuantileDelta(now, before []*dto.Metric, q float64) (float64, string) {
	schema := minSchema(now, before)
	cur, old := sumNative(now, schema), sumNative(before, schema)
	type bucket struct{ lo, hi, n float64 }
	base := math.Pow(2, math.Pow(2, -float64(schema)))
	var bs []bucket
	negIdx := slices.Sorted(maps.Keys(cur.neg))
	slices.Reverse(negIdx) // the largest index is the most negative value
	for _, i := range negIdx {
		bs = append(bs, bucket{-math.Pow(base, float64(i)), -math.Pow(base, float64(i-1)), cur.neg[i] - old.neg[i]})
	}
	bs = append(bs, bucket{-cur.zeroTh, cur.zeroTh, cur.zero - old.zero})
	if len(cur.neg) == 0 {
		bs[len(bs)-1].lo = 0 // no negative observation: the zero bucket is [0, threshold]
	}
	for _, i := range slices.Sorted(maps.Keys(cur.pos)) {
		bs = append(bs, bucket{math.Pow(base, float64(i-1)), math.Pow(base, float64(i)), cur.pos[i] - old.pos[i]})
	}
	total := 0.0
	for _, b := range bs {
		if b.n < 0 {
			return 0, "histogram went backwards (target restarted?)"
		}
		total += b.n
	}
	if total == 0 {
		return 0, "no observations since the previous scrape"
	}
	rank, below := q*total, 0.0
	for _, b := range bs {
		if b.n == 0 || below+b.n < rank {
			below += b.n
			continue
		}
		f := (rank - below) / b.n
		if b.lo > 0 {
			return b.lo * math.Pow(b.hi/b.lo, f), ""
		}
		if b.hi < 0 {
			return -(-b.hi * math.Pow(b.lo/b.hi, 1-f)), ""
		}
		return b.lo + (b.hi-b.lo)*f, ""
	}
	return bs[len(bs)-1].hi, ""
}
