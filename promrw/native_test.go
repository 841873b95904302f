package promrw

import (
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
