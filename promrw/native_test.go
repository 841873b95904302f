package promrw

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/knee-dev/knee/record"
)

func TestBucketIndexByHand(t *testing.T) {
	tests := []struct {
		v      float64
		schema int32
		want   int32
	}{
		{1, 0, 0},    // (0.5, 1]
		{1.5, 0, 1},  // (1, 2]
		{2, 0, 1},    // upper bounds belong to their bucket
		{0.5, 0, -1}, // (0.25, 0.5]
		{1, 3, 0},
		{2, 3, 8},
		{0.01, 3, -53}, // log2(0.01)·8 = -53.15, rounded up
		{1.0905, 3, 1}, // just above 2^(1/8) = 1.09051: still bucket 1
	}
	for _, tt := range tests {
		if got := bucketIndex(tt.v, tt.schema); got != tt.want {
			t.Errorf("bucketIndex(%v, %d) = %d, want %d", tt.v, tt.schema, got, tt.want)
		}
	}
}

func TestFromHdr(t *testing.T) {
	h := record.NewHistogram()
	h.RecordN(10*time.Millisecond, 100) // bucket -53: (0.009253, 0.010090]
	h.RecordN(20*time.Millisecond, 3)   // bucket -45: (0.018506, 0.020180]
	n := FromHdr(h, 3)
	if n.Count != 103 || len(n.Buckets) != 2 || n.Buckets[-53] != 100 || n.Buckets[-45] != 3 {
		t.Errorf("native %+v, want 100 in -53 and 3 in -45", n)
	}
	if n.Sum < 1.059 || n.Sum > 1.061 { // 100·0.01 + 3·0.02 = 1.06 s
		t.Errorf("sum %v, want 1.06", n.Sum)
	}
}

// FromHdr gives, bucket by bucket, what the definition gives: values at
// most a bucket's upper bound (CountAbove) minus those at most the one
// below, for histograms spread over six decades.
func TestFromHdrAgreesWithCountAbove(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 8 {
		h := record.NewHistogram()
		for range 1 + rng.IntN(2000) {
			h.RecordN(time.Duration(math.Exp(rng.Float64()*14))*time.Microsecond, 1+rng.Int64N(5))
		}
		ref := h.Packed() // the definition, read from the packed copy: fast enough under -race
		if trial%2 == 1 {
			h = ref // half the trials convert a packed histogram
		}
		for _, schema := range []int32{0, 3, 8} {
			got := FromHdr(h, schema)
			lo, hi := bucketIndex(h.Min().Seconds(), schema)-1, bucketIndex(h.Max().Seconds(), schema)+1
			want := map[int32]uint64{}
			prev := int64(0)
			for i := lo; i <= hi; i++ {
				atMost := ref.Count() - ref.CountAbove(time.Duration(math.Floor(upperBound(i, schema)*float64(time.Second))))
				if i == hi {
					atMost = h.Count()
				}
				if c := atMost - prev; c > 0 {
					want[i] = uint64(c)
				}
				prev = atMost
			}
			if !reflect.DeepEqual(got.Buckets, want) || got.Count != uint64(h.Count()) {
				t.Fatalf("trial %d schema %d: buckets %v (count %d), want %v (count %d)", trial, schema, got.Buckets, got.Count, want, h.Count())
			}
		}
	}
}

func BenchmarkFromHdr(b *testing.B) {
	h := record.NewHistogram()
	rng := rand.New(rand.NewPCG(1, 2))
	for range 5000 {
		h.Record(time.Duration(math.Exp(rng.Float64()*14)) * time.Microsecond)
	}
	for b.Loop() {
		FromHdr(h, DefaultSchema)
	}
}
