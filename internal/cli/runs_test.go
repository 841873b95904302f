package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"time"

	"testing"

	"github.com/knee-dev/knee/record"
	"github.com/knee-dev/knee/rundir"
)

// testRun describes a run directory written for a test: 10 s of one
// scenario at 100 requests a second, every latency the same.
type testRun struct {
	id       string
	model    string        // open or closed
	scenario string        // default "s"
	target   string        // the URL template of its one request
	latency  time.Duration // below 2048 µs a histogram holds it exactly
}

// writeRun writes r under dir and returns its path.
func writeRun(t *testing.T, dir string, r testRun) string {
	t.Helper()
	if r.scenario == "" {
		r.scenario = "s"
	}
	if r.target == "" {
		r.target = "http://127.0.0.1:1/books"
	}
	executor, cfg := "constant-arrival-rate", map[string]any{"rate": 100, "duration": "10s"}
	if r.model == "closed" {
		executor, cfg = "constant-vus", map[string]any{"vus": 1, "duration": "10s"}
	}
	raw, _ := json.Marshal(cfg)
	start := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	meta := rundir.Meta{
		ID: r.id, Source: "knee", Model: r.model, Started: start, Ended: start.Add(10 * time.Second),
		Scenarios: []rundir.Scenario{{Name: r.scenario, Executor: executor, Model: r.model, Config: raw,
			Requests: []string{r.target}, Think: 0}},
		Env: rundir.Environment{Host: "h", CPUs: 2, CPUModel: "x", KneeVersion: "v"},
	}
	path := filepath.Join(dir, r.id)
	w, err := rundir.Create(path, meta)
	if err != nil {
		t.Fatal(err)
	}
	key := record.Key{Metric: record.Latency, Scenario: r.scenario, Name: r.target}
	for i := range 10 {
		h := record.NewHistogram()
		h.RecordN(r.latency, 100)
		snap := record.IntervalSnapshot{
			Start: time.Duration(i) * time.Second, End: time.Duration(i+1) * time.Second,
			Histograms: map[record.Key]*record.Histogram{key: h},
			Counters:   map[string]record.Counters{r.scenario: {Requests: 100, ByStatus: map[string]int64{"2xx": 100}}},
		}
		if err := w.WriteInterval(snap, nil); err != nil {
			t.Fatal(err)
		}
	}
	meta.Finished = true
	if err := w.Close(meta); err != nil {
		t.Fatal(err)
	}
	return path
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
