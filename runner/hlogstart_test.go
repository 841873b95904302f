package runner_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/knee-dev/knee/load"
	"github.com/knee-dev/knee/record"
	"github.com/knee-dev/knee/rundir"
	"github.com/knee-dev/knee/runner"
)

// latency.hlog's StartTime and BaseTime are the load's t0, which its
// interval timestamps count from, so that HdrHistogram's own tools place
// each interval where it was: not when the run was made, which precedes
// t0 by the environment note and, here, a wait for --start-at.
func TestLogStartsAtTheLoadsStart(t *testing.T) {
	var (
		mu    sync.Mutex
		first time.Time
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		if first.IsZero() {
			first = time.Now()
		}
		mu.Unlock()
		w.Write([]byte("ok"))
	}))
	defer srv.Close()
	// A whole millisecond, so the header's three decimals cannot round t0
	// below it.
	at := time.Now().Add(700 * time.Millisecond).Truncate(time.Millisecond)
	cfg := config(srv.URL, load.ConstantArrivalRate{Rate: 20, TimeUnit: time.Second, Duration: 500 * time.Millisecond, PreAllocatedVUs: 2, MaxVUs: 10})
	o := opts(t)
	o.Split = runner.Split{StartAt: at}
	if _, err := runner.Execute(context.Background(), cfg, o); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(o.Dir, rundir.LatencyFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lr := record.NewLogReader(f, rundir.LatencyFile, 1000)
	if _, err := lr.Next(); err != nil {
		t.Fatalf("first interval: %v", err)
	}
	h := lr.Header()
	dir, err := rundir.Open(o.Dir)
	if err != nil {
		t.Fatal(err)
	}
	p := dir.Meta.Part
	if p == nil {
		t.Fatal("run.json has no part: --start-at was not taken")
	}
	switch {
	case !h.StartTime.Equal(h.BaseTime):
		t.Errorf("StartTime %v, BaseTime %v: the timestamps are relative, the two must be one instant", h.StartTime, h.BaseTime)
	case h.StartTime.Before(at):
		t.Errorf("StartTime %v is before --start-at %v: the log starts when the run was made (%v), not at t0", h.StartTime, at, dir.Meta.Started)
	case h.StartTime.Sub(p.T0).Abs() >= time.Millisecond: // the header keeps milliseconds
		t.Errorf("StartTime %v, run.json's t0 %v: the log's intervals count from t0", h.StartTime, p.T0)
	}
	mu.Lock()
	defer mu.Unlock()
	// The first request is due at t0 and reaches the server after it; the
	// header's StartTime is t0 to the millisecond.
	if first.Before(h.StartTime.Add(-time.Millisecond)) {
		t.Errorf("the server saw the first request at %v, before the log's start %v", first, h.StartTime)
	}
}
