package record

import (
	"testing"
	"time"
)

// Trend values from two shards merge into one series, touch no counter,
// and their tag survives a round trip.
func TestRecordTrend(t *testing.T) {
	t0 := time.Unix(1000, 0)
	r := NewRecorder(t0)
	s1, s2 := r.Shard(), r.Shard()
	for _, ms := range []int{10, 20, 30} {
		s1.RecordTrend("default", "login_time", time.Duration(ms)*time.Millisecond)
	}
	s2.RecordTrend("default", "login_time", 40*time.Millisecond)
	snap := r.Rotate(t0.Add(time.Second))
	k := Key{Metric: Trend, Scenario: "default", Name: "login_time"}
	h := snap.Histograms[k]
	if h == nil {
		t.Fatalf("no %v histogram in %v", k, snap.Histograms)
	}
	if h.Count() != 4 {
		t.Errorf("count %d, want 4", h.Count())
	}
	// 10, 20, 30, 40 ms: max 40 ms, mean 25 ms (3 significant digits).
	if got := h.Max(); got < 39900*time.Microsecond || got > 40100*time.Microsecond {
		t.Errorf("max %v, want 40ms", got)
	}
	if got := h.Mean(); got < 24900*time.Microsecond || got > 25100*time.Microsecond {
		t.Errorf("mean %v, want 25ms", got)
	}
	if len(snap.Counters) != 0 {
		t.Errorf("trend values counted as requests: %v", snap.Counters)
	}
	if got := ParseTag(k.Tag()); got != k {
		t.Errorf("ParseTag(%q) = %+v, want %+v", k.Tag(), got, k)
	}
}
