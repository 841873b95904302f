package importer

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/knee-dev/knee/record"
	"github.com/knee-dev/knee/rundir"
)

// TestImportRunDirectory imports the hand-made CSV into a real run directory
// and reads it back with rundir.Open, then imports that run's own latency.hlog.
func TestImportRunDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "r1")
	res, err := Import(context.Background(), "testdata/k6-unix_nano.csv", dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := rundir.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if r.Meta.Source != "k6-csv" || r.Meta.Model != "unknown" || !r.Meta.Finished || r.Meta.ID != "r1" || res.Meta.ID != "r1" {
		t.Errorf("meta source %q model %q finished %v id %q", r.Meta.Source, r.Meta.Model, r.Meta.Finished, r.Meta.ID)
	}
	if len(r.Intervals) != 3 || r.Duration() != 3*time.Second {
		t.Errorf("%d intervals, %v; want 3, 3s", len(r.Intervals), r.Duration())
	}
	c := r.Counters(0, 0)
	if c.Requests != 14 || c.Errors != 2 || c.DroppedIterations != 2 {
		t.Errorf("counters %+v", c)
	}
	h := r.Merged(func(k record.Key) bool { return k.Metric == record.Latency }, 0, 0)
	if !near(h.Percentile(50), ms(5)) || !near(h.Percentile(90), ms(10)) {
		t.Errorf("p50 %v p90 %v, want 5ms 10ms", h.Percentile(50), h.Percentile(90))
	}
	if got := r.Meta.Summary.LatencyMS.P50; got < 5 || got > 5.005 {
		t.Errorf("summary p50 %v ms, want 5", got)
	}

	// knee's own log: µs detected from its comment, tags and times kept.
	dir2 := filepath.Join(t.TempDir(), "r2")
	res2, err := Import(context.Background(), filepath.Join(dir, rundir.LatencyFile), dir2, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res2.Format != FormatHlog || res2.Meta.Counters.Requests != 14 || !res2.Meta.Started.Equal(r.Meta.Started) {
		t.Errorf("re-import: format %q requests %d started %v", res2.Format, res2.Meta.Counters.Requests, res2.Meta.Started)
	}
	r2, err := rundir.Open(dir2)
	if err != nil {
		t.Fatal(err)
	}
	h2 := r2.Merged(func(k record.Key) bool { return k.Name == "GET /a" }, 0, 0)
	if h2.Count() != 10 || !near(h2.Percentile(90), ms(9)) {
		t.Errorf("re-import GET /a: n %d p90 %v, want 10 9ms", h2.Count(), h2.Percentile(90))
	}
}

func TestImportOutDir(t *testing.T) {
	full := t.TempDir()
	if err := os.WriteFile(filepath.Join(full, "x"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Import(context.Background(), "testdata/k6-unix.csv", full, Options{}); !errors.Is(err, ErrOutDir) {
		t.Errorf("non-empty dir: err %v, want ErrOutDir", err)
	}
	// A failing import leaves nothing behind, even after intervals were written.
	bad := filepath.Join(t.TempDir(), "bad.csv")
	content := k6Header
	for i := range 20 {
		content += "http_req_duration," + strconv.Itoa(1700000000+i) + ",1,200,a\n"
	}
	if err := os.WriteFile(bad, []byte(content+"http_req_duration,1700000030,x,200,a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	if _, err := Import(context.Background(), bad, out, Options{}); !errors.Is(err, ErrBadRow) {
		t.Fatalf("err %v, want ErrBadRow", err)
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("failed import left %s: %v", out, err)
	}
	if _, err := Import(context.Background(), "testdata/missing.csv", out, Options{}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: err %v", err)
	}
}

func TestImportCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	f := filepath.Join(t.TempDir(), "long.txt")
	content := make([]byte, 0, 40000)
	for range 10000 {
		content = append(content, "1.5\n"...)
	}
	if err := os.WriteFile(f, content, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Import(ctx, f, filepath.Join(t.TempDir(), "o"), Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("err %v, want context.Canceled", err)
	}
}
