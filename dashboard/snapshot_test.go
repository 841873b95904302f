package dashboard

import (
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/knee-dev/knee/record"
	"github.com/knee-dev/knee/rundir"
	"github.com/knee-dev/knee/runner"
	"github.com/knee-dev/knee/scenario"
)

// TestBuildMergesNeverAverages: the newest interval's percentiles come from
// the merge of its histograms. Endpoint x saw 98 requests of 1 ms, y 2 of
// 1 s: of the 100, the 99th is 1 s (p99 = 1000 ms), while the average of
// the two endpoints' p99 would be about 500 ms.
func TestBuildMergesNeverAverages(t *testing.T) {
	hx, hy := record.NewHistogram(), record.NewHistogram()
	hx.RecordN(time.Millisecond, 98)
	hy.RecordN(time.Second, 2)
	r := &rundir.Dir{Meta: rundir.Meta{Model: "open"}, Intervals: []rundir.Interval{{
		Start: 0, End: time.Second,
		Histograms: map[record.Key]*record.Histogram{
			{Metric: record.Latency, Scenario: "s", Name: "x"}: hx,
			{Metric: record.Latency, Scenario: "s", Name: "y"}: hy,
		},
		Counters: map[string]rundir.IntervalCounters{"s": {Scenario: "s", TargetRate: 120, BusyVUs: 7, VUs: 50,
			Counters: record.Counters{Requests: 100, Errors: 3, ErrorsByClass: map[string]int64{"timeout": 3}, DroppedIterations: 20}}},
	}}}
	st := Build(r, "runs/x", time.Second).Status
	if st.P99MS == nil || math.Abs(*st.P99MS-1000) > 1 {
		t.Errorf("p99 %v ms, want the merged 1000 ms (within HdrHistogram's 0.1 %%)", st.P99MS)
	}
	if st.P50MS == nil || math.Abs(*st.P50MS-1) > 0.01 {
		t.Errorf("p50 %v ms, want 1 ms", st.P50MS)
	}
	if st.Rate != 100 || st.Target != 120 || st.BusyVUs != 7 || st.VUs != 50 {
		t.Errorf("rate %v target %v busy %d vus %d, want 100 120 7 50", st.Rate, st.Target, st.BusyVUs, st.VUs)
	}
	if st.Errors != 3 || st.ErrorsByClass["timeout"] != 3 || st.Dropped != 20 {
		t.Errorf("errors %d %v dropped %d, want 3 {timeout 3} 20", st.Errors, st.ErrorsByClass, st.Dropped)
	}
}

// TestBuildCurveGrowsStepByStep: a real stepped run (50, 100, 150 req/s,
// a 1 s jump and a 2 s hold each) read back interval by interval, as the
// dashboard sees it while it runs: the curve gains one step per step run.
func TestBuildCurveGrowsStepByStep(t *testing.T) {
	if testing.Short() {
		t.Skip("a 9 s stepped run; skipped in -short")
	}
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok")) }))
	defer target.Close()
	cfg, err := scenario.FromFlags(scenario.Flags{Executor: scenario.RampingArrivalRate, StartRate: 50,
		Stages: "1s:50,2s:50,1s:100,2s:100,1s:150,2s:150", URL: target.URL + "/"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := runner.Execute(t.Context(), cfg, runner.Options{Dir: filepath.Join(t.TempDir(), "run"), Interval: 500 * time.Millisecond, SkipEnvironment: true})
	if err != nil {
		t.Fatal(err)
	}
	var steps []int
	var offered []float64
	for k := 1; k <= len(res.Run.Intervals); k++ {
		part := *res.Run
		part.Intervals = res.Run.Intervals[:k]
		snap := Build(&part, res.Dir, 500*time.Millisecond)
		if n := snap.Status.Steps; len(steps) == 0 || n != steps[len(steps)-1] {
			steps = append(steps, n)
		}
		var charts struct {
			Curve *struct{ Offered []float64 } `json:"curve"`
		}
		if err := json.Unmarshal(snap.Charts, &charts); err != nil {
			t.Fatal(err)
		}
		if charts.Curve != nil {
			offered = charts.Curve.Offered
		}
	}
	t.Logf("steps measured as the intervals came: %v", steps)
	if len(steps) < 3 || steps[len(steps)-1] != 3 {
		t.Errorf("steps seen %v, want them to grow to 3 one by one", steps)
	}
	for i := 1; i < len(steps); i++ {
		if steps[i] != steps[i-1]+1 {
			t.Errorf("steps seen %v: not one at a time", steps)
		}
	}
	if len(offered) != 3 || offered[0] != 50 || offered[1] != 100 || offered[2] != 150 {
		t.Errorf("curve offered rates %v, want [50 100 150]", offered)
	}
}

// TestFedEqualsReadBack: a dashboard fed every interval by the runner
// (Server.Add) publishes, interval by interval, the very snapshot Build
// makes from the run directory read back, without reading it.
func TestFedEqualsReadBack(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	meta := rundir.Meta{ID: "fed", Model: "open", Started: time.Unix(0, 0),
		Scenarios: []rundir.Scenario{{Name: "s", Model: "open", TargetRate: 200}}}
	w, err := rundir.Create(dir, meta)
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{opt: Options{Dir: dir, Interval: time.Second}, changed: make(chan struct{}), news: make(chan struct{}, 1)}
	for i := range 25 {
		snap := hourLong(i)
		if i == 12 { // a slow second: the CO and window figures must follow it
			snap.Histograms[record.Key{Metric: record.Latency, Scenario: "s", Name: "GET /"}].RecordN(2*time.Second, 50)
		}
		extra := map[string]rundir.IntervalCounters{"s": {TargetRate: 200, BusyVUs: i % 7, VUs: 10}}
		if err := w.WriteInterval(snap, extra); err != nil {
			t.Fatal(err)
		}
		s.Add(meta, rundir.NewInterval(snap, extra))
		s.refresh(nil)
		r, err := rundir.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(Build(r, dir, time.Second))
		if err != nil {
			t.Fatal(err)
		}
		s.mu.Lock()
		got := s.last
		s.mu.Unlock()
		if string(got) != string(want) {
			t.Fatalf("interval %d: fed snapshot differs from the directory's:\n got %s\nwant %s", i, got, want)
		}
	}
	var snap Snapshot
	if err := json.Unmarshal(s.last, &snap); err != nil {
		t.Fatal(err)
	}
	if snap.Status.Intervals != 25 || snap.Status.Requests != 25*200 || snap.Status.BusyVUs != 24%7 || snap.Status.Target != 200 {
		t.Errorf("status %+v; want 25 intervals, 5000 requests, 3 busy VUs, target 200/s", snap.Status)
	}
}
