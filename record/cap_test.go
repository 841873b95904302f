package record

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestRecorderFoldsPastMaxSeries: 250 names recorded once each keep the
// first 200 apart and fold the other 50 into OtherName, requests and Trends
// alike; the note names the first folded name and the name tag; a name
// already kept stays itself after the cap is full.
func TestRecorderFoldsPastMaxSeries(t *testing.T) {
	t0 := time.Unix(1000, 0)
	r := NewRecorder(t0)
	shards := []*Shard{r.Shard(), r.Shard(), r.Shard()}
	for i := range 250 {
		s := shards[i%len(shards)]
		s.Record(Sample{Key: Key{Scenario: "s", Name: fmt.Sprintf("/item/%d", i)}, Latency: time.Millisecond, Service: time.Millisecond, Status: 200})
	}
	shards[0].Record(Sample{Key: Key{Scenario: "s", Name: "/item/7"}, Latency: 2 * time.Millisecond, Service: time.Millisecond, Status: 200})
	shards[1].RecordTrend("s", "group::a", time.Millisecond) // a name past the cap: folded too
	snap := r.Rotate(t0.Add(time.Second))
	var names int
	for k := range snap.Histograms {
		if k.Metric == Latency {
			names++
		}
	}
	other := snap.Histograms[Key{Latency, "s", OtherName}]
	if names != 201 || other == nil || other.Count() != 50 {
		t.Fatalf("%d latency names, (other) %v; want 201 and 50 values in (other)", names, other)
	}
	if h := snap.Histograms[Key{Latency, "s", "/item/7"}]; h == nil || h.Count() != 2 {
		t.Errorf("/item/7: %v, want its 2 values (kept before the cap was full)", h)
	}
	if h := snap.Histograms[Key{Trend, "s", OtherName}]; h == nil || h.Count() != 1 {
		t.Errorf("Trend (other): %v, want the folded Trend value", h)
	}
	if c := snap.Counters["s"]; c.Requests != 251 {
		t.Errorf("%d requests counted, want 251: folding renames, it loses nothing", c.Requests)
	}
	note := r.FoldNote()
	for _, w := range []string{"more than 200", "51 values", `"/item/200"`, `"(other)"`, "tags: {name:"} {
		if !strings.Contains(note, w) {
			t.Errorf("note %q lacks %q", note, w)
		}
	}
}

// TestFewValuesSnapshot: a series with fewer values than fewValues has no
// histogram of its own in the stripe, and its snapshot histogram holds
// exactly its values (hand-computed: 3 values 1, 2 and 3 ms; above 2,048 µs
// buckets are 2 µs wide, so 3 ms reads as the bucket top, 3.001 ms).
func TestFewValuesSnapshot(t *testing.T) {
	t0 := time.Unix(1000, 0)
	r := NewRecorder(t0)
	s := r.Shard()
	for _, ms := range []int{1, 2, 3} {
		s.Record(Sample{Key: Key{Scenario: "s", Name: "a"}, Latency: time.Duration(ms) * time.Millisecond, Service: time.Millisecond, Status: 200})
	}
	if n := len(s.st.cur.hists); n != 0 {
		t.Errorf("%d histograms in the stripe for 3 values, want none (kept as few values)", n)
	}
	h := r.Rotate(t0.Add(time.Second)).Histograms[Key{Latency, "s", "a"}]
	if h == nil || h.Count() != 3 || h.Min() != time.Millisecond || h.Max() != 3001*time.Microsecond || h.Percentile(50) != 2*time.Millisecond {
		t.Errorf("snapshot count %d min %v max %v p50 %v, want 3, 1 ms, 3.001 ms, 2 ms", h.Count(), h.Min(), h.Max(), h.Percentile(50))
	}
}
