package merge_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/knee-dev/knee/merge"
	"github.com/knee-dev/knee/record"
	"github.com/knee-dev/knee/rundir"
)

// writePart writes the run directory of one runner of a two-runner test:
// one 1 s interval holding the latencies given.
func writePart(dir, segment string, t0 time.Time, latencies ...time.Duration) error {
	meta := rundir.Meta{ID: segment, Source: "knee", Started: t0, Model: "open", Finished: true,
		Part: &rundir.Part{TestID: "checkout", Segment: segment, Sequence: "0,1/2,1", Interval: time.Second, T0: t0, ClockSynced: true}}
	w, err := rundir.Create(dir, meta)
	if err != nil {
		return err
	}
	h := record.NewHistogram()
	for _, l := range latencies {
		h.Record(l)
	}
	n := int64(len(latencies))
	snap := record.IntervalSnapshot{Start: 0, End: time.Second,
		Histograms: map[record.Key]*record.Histogram{{Metric: record.Latency, Scenario: "s", Name: "GET /"}: h},
		Counters:   map[string]record.Counters{"s": {Requests: n, ByStatus: map[string]int64{"2xx": n}}}}
	if err := w.WriteInterval(snap, nil); err != nil {
		return err
	}
	return w.Close(meta)
}

// Two runners of one test: one saw 100 fast requests (1 ms), the other 98
// fast and 2 slow (1 s), so its p99 (rank 99 of 100) is slow. The merge
// holds all 200; its p99 (rank 198) is fast, where the runners' p99s
// averaged, (1 ms + 1,000.447 ms) / 2, would say half a second.
func ExampleMergeDirs() {
	tmp, err := os.MkdirTemp("", "knee-merge-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(tmp)
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	a, b := filepath.Join(tmp, "a"), filepath.Join(tmp, "b")
	fast := make([]time.Duration, 99)
	for i := range fast {
		fast[i] = time.Millisecond
	}
	if err := writePart(a, "0:1/2", t0, slices.Concat(fast, []time.Duration{time.Millisecond})...); err != nil {
		panic(err)
	}
	if err := writePart(b, "1/2:1", t0, slices.Concat(fast[:98], []time.Duration{time.Second, time.Second})...); err != nil {
		panic(err)
	}
	res, err := merge.MergeDirs([]string{a, b}, filepath.Join(tmp, "merged"), merge.Options{})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Run.Meta.Summary.Requests, "requests, p99", res.TrueP99, "(runners' p99s averaged:", res.MeanP99.String()+")")
	// Output: 200 requests, p99 1ms (runners' p99s averaged: 500.7235ms)
}
