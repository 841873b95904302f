package dashboard

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/knee-dev/knee/record"
	"github.com/knee-dev/knee/rundir"
)

// hourLong is one interval of a one-hour run with 1 s intervals: 200
// requests between 1 ms and 8.4 ms.
func hourLong(i int) record.IntervalSnapshot {
	key := record.Key{Metric: record.Latency, Scenario: "s", Name: "GET /"}
	h := record.NewHistogram()
	for j := range 200 {
		h.Record(time.Duration(1000+j*37) * time.Microsecond)
	}
	return record.IntervalSnapshot{Start: time.Duration(i) * time.Second, End: time.Duration(i+1) * time.Second,
		Histograms: map[record.Key]*record.Histogram{key: h}, Counters: map[string]record.Counters{"s": {Requests: 200}}}
}

var benchMeta = rundir.Meta{ID: "bench", Model: "open", Started: time.Unix(0, 0)}

// BenchmarkRefreshHourLongRun is what one new interval costs the dashboard
// late in a one-hour run with 1 s intervals, fed as the runner records it
// (Server.Add, then the snapshot the page is sent): its load on the
// generator's machine, paid once per interval.
func BenchmarkRefreshHourLongRun(b *testing.B) {
	s := &Server{opt: Options{Dir: "run", Interval: time.Second}, changed: make(chan struct{}), news: make(chan struct{}, 1)}
	for i := range 3599 {
		s.Add(benchMeta, rundir.NewInterval(hourLong(i), nil))
	}
	s.refresh(nil) // the snapshot of the interval before
	last := rundir.NewInterval(hourLong(3599), nil)
	b.ResetTimer()
	for b.Loop() {
		s.mu.Lock()
		s.run.Intervals, s.intervals = s.run.Intervals[:3599], 3599
		s.mu.Unlock()
		s.Add(benchMeta, last)
		s.refresh(nil)
	}
	if s.intervals != 3600 {
		b.Fatalf("published %d intervals, want 3600", s.intervals)
	}
}

// BenchmarkRereadHourLongRun is the same late refresh when the dashboard is
// not fed and reads the run directory back (a run of another process).
func BenchmarkRereadHourLongRun(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "run")
	w, err := rundir.Create(dir, benchMeta)
	if err != nil {
		b.Fatal(err)
	}
	for i := range 3600 {
		if err := w.WriteInterval(hourLong(i), nil); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(benchMeta); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		r, err := rundir.Open(dir)
		if err != nil {
			b.Fatal(err)
		}
		Build(r, dir, time.Second)
	}
}
