package promrw

import (
	"math"
	"time"

	"github.com/knee-dev/knee/record"
)

// Native is a Prometheus native histogram: sparse exponential buckets of
// schema Schema, bucket i holding the values in (base^(i-1), base^i] seconds,
// base = 2^(2^-Schema). Buckets with a zero count are left out.
type Native struct {
	Schema  int32
	Count   uint64
	Sum     float64          // seconds
	Buckets map[int32]uint64 // by index
}

// bucketIndex is the index of the bucket holding v seconds (v > 0).
func bucketIndex(v float64, schema int32) int32 {
	frac, exp := math.Frexp(v) // v = frac·2^exp, frac in [0.5, 1)
	// log2(v)·2^schema, rounded up; exact powers of two land on their bound.
	x := (math.Log2(frac) + float64(exp)) * math.Ldexp(1, int(schema))
	i := math.Ceil(x - 1e-9)
	return int32(i)
}

// upperBound is bucket i's upper bound in seconds.
func upperBound(i, schema int32) float64 {
	return math.Exp2(float64(i) / math.Ldexp(1, int(schema)))
}

// FromHdr converts an HdrHistogram to native buckets: the count in bucket
// i is the number of values at most its upper bound minus those at most the
// previous one, to the HdrHistogram's precision (0.1 %), far finer than a
// native bucket (9 % at schema 3). The count is exact.
func FromHdr(h *record.Histogram, schema int32) Native {
	n := Native{Schema: schema, Count: uint64(h.Count()), Buckets: map[int32]uint64{}}
	if h.Count() == 0 {
		return n
	}
	n.Sum = h.Mean().Seconds() * float64(h.Count())
	lo := bucketIndex(h.Min().Seconds(), schema) - 1
	hi := bucketIndex(h.Max().Seconds(), schema) + 1
	bounds := make([]time.Duration, 0, hi-lo+1)
	for i := lo; i <= hi; i++ {
		bounds = append(bounds, time.Duration(math.Floor(upperBound(i, schema)*float64(time.Second))))
	}
	atMost := h.CountsAtMost(bounds) // one pass: per bound it was a pass each
	atMost[len(atMost)-1] = h.Count()
	prev := int64(0) // values at most the previous bound
	for j, a := range atMost {
		if c := a - prev; c > 0 {
			n.Buckets[lo+int32(j)] = uint64(c)
		}
		prev = a
	}
	return n
}
