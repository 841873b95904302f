package record

import (
	"fmt"
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

// Iterations are kept under their own name per scenario even when a
// script's Trend names filled the cap, and count each iteration once.
func TestRecordIterationBypassesCap(t *testing.T) {
	t0 := time.Unix(1000, 0)
	r := NewRecorder(t0)
	s := r.Shard()
	for i := range DefaultMaxSeries + 1 { // the last one folds: the cap is full
		s.RecordTrend("a", fmt.Sprintf("t%d", i), time.Millisecond)
	}
	for _, ms := range []int{100, 200, 300} {
		s.RecordIteration("a", time.Duration(ms)*time.Millisecond)
	}
	r.Shard().RecordIteration("b", time.Second)
	snap := r.Rotate(t0.Add(time.Second))
	if snap.Histograms[Key{Metric: Trend, Scenario: "a", Name: OtherName}] == nil {
		t.Fatal("the cap was not full: the test proves nothing")
	}
	for _, tc := range []struct {
		scenario string
		count    int64
		max      time.Duration
	}{{"a", 3, 300 * time.Millisecond}, {"b", 1, time.Second}} {
		h := snap.Histograms[Key{Metric: Trend, Scenario: tc.scenario, Name: IterationDuration}]
		if h == nil {
			t.Fatalf("scenario %s: no iteration series in %v", tc.scenario, snap.Histograms)
		}
		// 3 significant digits: within 0.1 %.
		if got := h.Max(); h.Count() != tc.count || got < tc.max*999/1000 || got > tc.max*1001/1000 {
			t.Errorf("scenario %s: %d iterations, max %v; want %d, %v", tc.scenario, h.Count(), got, tc.count, tc.max)
		}
	}
}

// Phases land in their scenario's series of PhaseNames, interval by
// interval: the histograms cached for one interval are not another's.
func TestRecordPhases(t *testing.T) {
	t0 := time.Unix(1000, 0)
	r := NewRecorder(t0)
	s := r.Shard()
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	type want struct {
		n   int64
		max [6]time.Duration
	}
	for i, tc := range []struct {
		record map[string][]Phases // by scenario
		want   map[string]want
	}{
		{map[string][]Phases{
			"a": {{ms(1), ms(2), ms(3), ms(4), ms(5), ms(6)}},
			"b": {{ms(1), ms(2), ms(3), ms(4), ms(5), ms(6)}, {ms(2), ms(4), ms(6), ms(8), ms(10), ms(12)}},
		}, map[string]want{
			"a": {1, [6]time.Duration{ms(1), ms(2), ms(3), ms(4), ms(5), ms(6)}},
			"b": {2, [6]time.Duration{ms(2), ms(4), ms(6), ms(8), ms(10), ms(12)}},
		}},
		// The next interval: a's values alone, b has no series.
		{map[string][]Phases{"a": {{ms(3), ms(6), ms(9), ms(12), ms(15), ms(18)}}},
			map[string]want{"a": {1, [6]time.Duration{ms(3), ms(6), ms(9), ms(12), ms(15), ms(18)}}}},
	} {
		for sc, ps := range tc.record {
			for _, p := range ps {
				s.RecordPhases(sc, p)
			}
		}
		t0 = t0.Add(time.Second)
		snap := r.Rotate(t0)
		for j, name := range PhaseNames() {
			for _, sc := range []string{"a", "b"} {
				w, ok := tc.want[sc]
				h := snap.Histograms[Key{Metric: Trend, Scenario: sc, Name: name}]
				if !ok {
					if h != nil && h.Count() > 0 {
						t.Errorf("interval %d: %s %s has %d values, want none", i, sc, name, h.Count())
					}
					continue
				}
				if h == nil {
					t.Fatalf("interval %d: %s %s: no series", i, sc, name)
				}
				// 3 significant digits: within 0.1 %.
				if got := h.Max(); h.Count() != w.n || got < w.max[j]*999/1000 || got > w.max[j]*1001/1000 {
					t.Errorf("interval %d: %s %s: %d values, max %v; want %d, %v", i, sc, name, h.Count(), got, w.n, w.max[j])
				}
			}
		}
		if len(snap.Counters) != 0 {
			t.Errorf("phases counted as requests: %v", snap.Counters)
		}
	}
}

// BenchmarkRecordPhases is the cost a k6 script's request pays for its
// phases over time, beside BenchmarkShardRecord's for the request itself.
func BenchmarkRecordPhases(b *testing.B) {
	r := NewRecorder(time.Now())
	s := r.Shard()
	p := Phases{5 * time.Microsecond, 0, 0, 40 * time.Microsecond, time.Millisecond, 300 * time.Microsecond}
	s.RecordPhases("s", p)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		p[4] = time.Duration(i%100000) * time.Microsecond
		s.RecordPhases("s", p)
	}
}
