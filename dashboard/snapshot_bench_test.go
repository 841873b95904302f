package dashboard

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/knee-dev/knee/record"
	"github.com/knee-dev/knee/rundir"
)

// BenchmarkRefreshHourLongRun is what one refresh costs (read the run
// directory, build the snapshot) late in a one-hour run with 1 s
// intervals: the dashboard's load on the generator's machine.
func BenchmarkRefreshHourLongRun(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "run")
	w, err := rundir.Create(dir, rundir.Meta{ID: "bench", Model: "open", Started: time.Unix(0, 0)})
	if err != nil {
		b.Fatal(err)
	}
	key := record.Key{Metric: record.Latency, Scenario: "s", Name: "GET /"}
	for i := range 3600 {
		h := record.NewHistogram()
		for j := range 200 {
			h.Record(time.Duration(1000+j*37) * time.Microsecond)
		}
		snap := record.IntervalSnapshot{Start: time.Duration(i) * time.Second, End: time.Duration(i+1) * time.Second,
			Histograms: map[record.Key]*record.Histogram{key: h}, Counters: map[string]record.Counters{"s": {Requests: 200}}}
		if err := w.WriteInterval(snap, nil); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(rundir.Meta{ID: "bench", Model: "open", Started: time.Unix(0, 0)}); err != nil {
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
