package record

import (
	"testing"
	"time"
)

// TestShardSeriesCache checks that the shard's cached series never sends a
// sample to the wrong key or interval: keys alternate, share a scenario or
// a name, and rotations swap the intervals under the cache.
func TestShardSeriesCache(t *testing.T) {
	t0 := time.Unix(1000, 0)
	r := NewRecorder(t0)
	sh := r.Shard()
	a := Key{Scenario: "s1", Name: "a"}
	b := Key{Scenario: "s1", Name: "b"}
	c := Key{Scenario: "s2", Name: "a"} // a's name in another scenario
	ms := time.Millisecond
	type want struct {
		key      Key
		latency  int64 // samples in its latency histogram
		sendLag  int64
		interval int64
	}
	intervals := []struct {
		samples []Sample
		want    []want
		reqs    map[string]int64 // by scenario
	}{
		{ // a, b, a, c, a: the cache hits, misses and comes back
			samples: []Sample{
				{Key: a, Latency: ms, Service: ms, SendLag: ms},
				{Key: b, Latency: ms, Service: ms},
				{Key: a, Latency: ms, Service: ms, SendLag: ms},
				{Key: c, Latency: ms, Service: ms, Interval: ms},
				{Key: a, Latency: ms, Service: ms},
			},
			want: []want{{a, 3, 2, 0}, {b, 1, 0, 0}, {c, 1, 0, 1}},
			reqs: map[string]int64{"s1": 4, "s2": 1},
		},
		{ // the cached series (a) belongs to the interval rotated out
			samples: []Sample{{Key: a, Latency: ms, Service: ms}},
			want:    []want{{a, 1, 0, 0}},
			reqs:    map[string]int64{"s1": 1},
		},
		{ // back on the first interval's maps, reset
			samples: []Sample{{Key: c, Latency: ms, Service: ms}, {Key: c, Latency: ms, Service: ms, Interval: ms}},
			want:    []want{{c, 2, 0, 1}},
			reqs:    map[string]int64{"s2": 2},
		},
	}
	for n, iv := range intervals {
		for _, s := range iv.samples {
			sh.Record(s)
		}
		snap := r.Rotate(t0.Add(time.Duration(n+1) * time.Second))
		count := func(k Key, m Metric) int64 {
			k.Metric = m
			if h := snap.Histograms[k]; h != nil {
				return h.Count()
			}
			return 0
		}
		var total int64
		for _, w := range iv.want {
			got := want{w.key, count(w.key, Latency), count(w.key, SendLag), count(w.key, Interval)}
			if got != w {
				t.Errorf("interval %d: %+v, want %+v", n, got, w)
			}
			if s := count(w.key, Service); s != w.latency {
				t.Errorf("interval %d: %v service count %d, want %d", n, w.key, s, w.latency)
			}
			total += w.latency
		}
		var inSnap int64
		for k, h := range snap.Histograms {
			if k.Metric == Latency {
				inSnap += h.Count()
			}
		}
		if inSnap != total {
			t.Errorf("interval %d: %d latencies in the snapshot, want %d", n, inSnap, total)
		}
		for sc, want := range iv.reqs {
			if got := snap.Counters[sc].Requests; got != want {
				t.Errorf("interval %d: scenario %s requests %d, want %d", n, sc, got, want)
			}
		}
		for sc, c := range snap.Counters {
			if _, ok := iv.reqs[sc]; !ok && c.Requests != 0 {
				t.Errorf("interval %d: scenario %s has %d requests, want none", n, sc, c.Requests)
			}
		}
	}
}
