package runner_test

import (
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/knee-dev/knee/analyze"
	"github.com/knee-dev/knee/load"
	"github.com/knee-dev/knee/record"
	"github.com/knee-dev/knee/request"
	"github.com/knee-dev/knee/rundir"
	"github.com/knee-dev/knee/runner"
	"github.com/knee-dev/knee/scenario"
)

func config(url string, ex load.Executor) *scenario.Config {
	return &scenario.Config{
		Scenarios: []scenario.Scenario{{Name: "s", Executor: ex, GracefulStop: 5 * time.Second,
			Requests: []request.Spec{{Name: "GET /x/{v}", URL: url + "/x/{v}"}}}},
		Vars: map[string][]string{"v": {"a", "b"}},
	}
}

func opts(t *testing.T) runner.Options {
	return runner.Options{Dir: filepath.Join(t.TempDir(), "run"), SkipEnvironment: true, Interval: 200 * time.Millisecond}
}

// A finished open-model run: every scheduled iteration is a request, the
// run directory reads back with the same counts and percentiles, and the
// summary says what was asked.
func TestRunRoundTrip(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Write([]byte("ok"))
	}))
	defer srv.Close()
	// 50/s for 2 s: iterations at 0, 20 ms, ..., 1980 ms: exactly 100.
	cfg := config(srv.URL, load.ConstantArrivalRate{Rate: 50, TimeUnit: time.Second, Duration: 2 * time.Second, PreAllocatedVUs: 5, MaxVUs: 100})
	o := opts(t)
	res, err := runner.Execute(context.Background(), cfg, o)
	if err != nil {
		t.Fatal(err)
	}
	s := res.Summary
	if s.Requests != 100 || hits.Load() != 100 || s.DroppedIterations != 0 || s.Errors != 0 {
		t.Fatalf("requests %d (server saw %d), dropped %d, errors %d; want 100, 100, 0, 0", s.Requests, hits.Load(), s.DroppedIterations, s.Errors)
	}
	if s.Model != "open" || s.Executor != "constant-arrival-rate" || s.Interrupted {
		t.Errorf("model %q executor %q interrupted %v", s.Model, s.Executor, s.Interrupted)
	}
	if s.TargetRate != 50 {
		t.Errorf("target rate %g, want 50", s.TargetRate)
	}
	r, err := rundir.Open(o.Dir)
	if err != nil {
		t.Fatal(err)
	}
	lat := r.Merged(func(k record.Key) bool { return k.Metric == record.Latency }, 0, 0)
	if lat.Count() != 100 || lat.Latencies() != s.LatencyMS {
		t.Errorf("read back: %d values %+v; summary %+v", lat.Count(), lat.Latencies(), s.LatencyMS)
	}
	if !r.Meta.Finished || r.Meta.Summary.Requests != 100 {
		t.Errorf("run.json: finished %v, summary requests %d", r.Meta.Finished, r.Meta.Summary.Requests)
	}
	if c := r.Counters(0, 0); c.ByStatus["2xx"] != 100 {
		t.Errorf("counters by status %v, want 2xx=100", c.ByStatus)
	}
}

// Cancelling the context mid-run stops new iterations, lets in-flight ones
// finish, and keeps everything measured, marked interrupted.
func TestRunInterruptedKeepsData(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	cfg := config(srv.URL, load.ConstantVUs{VUs: 2, Duration: time.Minute, Think: 10 * time.Millisecond})
	o := opts(t)
	ctx, cancel := context.WithCancel(context.Background())
	// 700 ms into the load, not into Execute: on a busy machine the run's
	// making can take that long, and a stop before t0 is another case.
	o.OnLoad = func(func() []load.Stats) { time.AfterFunc(700*time.Millisecond, cancel) }
	res, err := runner.Execute(ctx, cfg, o)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Summary.Interrupted || res.Summary.Requests == 0 {
		t.Fatalf("interrupted %v with %d requests; want an interrupted run with data", res.Summary.Interrupted, res.Summary.Requests)
	}
	r, err := rundir.Open(o.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Meta.Interrupted || r.Meta.Finished {
		t.Errorf("run.json interrupted %v finished %v", r.Meta.Interrupted, r.Meta.Finished)
	}
	if got := r.Merged(nil, 0, 0); got.Count() == 0 {
		t.Error("the interrupted run directory holds no latency")
	}
	if got := r.Counters(0, 0).Requests; got != res.Summary.Requests {
		t.Errorf("counters say %d requests, summary %d", got, res.Summary.Requests)
	}
	// The stop is noted, inside the intervals (which run on through the
	// drain), and the rate is over the time up to it, not the planned minute.
	measured := r.Intervals[len(r.Intervals)-1].End - r.Intervals[0].Start
	if stop := r.Meta.StoppedAt; stop <= 0 || stop > measured {
		t.Fatalf("stopped at %v; want a moment within the %v measured", stop, measured)
	}
	s := res.Summary
	if want := r.Meta.StoppedAt.Seconds(); s.DurationS != want || s.Rate != float64(s.Requests)/want {
		t.Errorf("%d in %v s = %v/s; want over the %v s up to the stop", s.Requests, s.DurationS, s.Rate, want)
	}
}

// Against a server that stalls for a second, the closed model records about
// one slow request per VU while the open model records about rate × stall.
func TestClosedHidesStallOpenDoesNot(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: real-time stall test")
	}
	stall := func() *httptest.Server {
		t0 := time.Now()
		return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			// Stall everything that arrives in [0.5 s, 1.5 s) until 1.5 s.
			if d := time.Since(t0); d >= 500*time.Millisecond && d < 1500*time.Millisecond {
				time.Sleep(1500*time.Millisecond - d)
			}
		}))
	}
	slow := func(res *runner.Result) int64 {
		return res.Run.Merged(func(k record.Key) bool { return k.Metric == record.Latency }, 0, 0).CountAbove(400 * time.Millisecond)
	}

	srv := stall()
	closed, err := runner.Execute(context.Background(), config(srv.URL, load.ConstantVUs{VUs: 5, Duration: 2500 * time.Millisecond, Think: 20 * time.Millisecond}), opts(t))
	srv.Close()
	if err != nil {
		t.Fatal(err)
	}
	srv = stall()
	open, err := runner.Execute(context.Background(), config(srv.URL, load.ConstantArrivalRate{Rate: 100, TimeUnit: time.Second, Duration: 2500 * time.Millisecond, PreAllocatedVUs: 10, MaxVUs: 500}), opts(t))
	srv.Close()
	if err != nil {
		t.Fatal(err)
	}
	// Closed: each of the 5 VUs is caught once, with at most one more slow
	// request each around the edges of the stall.
	if n := slow(closed); n < 1 || n > 10 {
		t.Errorf("closed model: %d requests over 400 ms, want 1..10 (about one per VU)", n)
	}
	// Open: the 100 requests due during the stall, less those due in its
	// last 400 ms (they wait less): about 60. A loaded machine (or -race)
	// only adds slow requests, so only the lower bound is firm.
	if n := slow(open); n < 40 {
		t.Errorf("open model: %d requests over 400 ms, want at least 40 (about rate × stall = 60)", n)
	}
	if open.Summary.Requests != 250 || open.Summary.DroppedIterations != 0 {
		t.Errorf("open model: %d requests, %d dropped; want all 250 sent", open.Summary.Requests, open.Summary.DroppedIterations)
	}
}

// The offered rate a run writes per interval lets analyze recover the step
// plan of a stepped run without being told it.
func TestSteppedRunInfersItsPlan(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a 9 s run")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	// 1 s jump + 3.5 s hold at 40/s, then at 80/s.
	ex := load.RampingArrivalRate{StartRate: 40, TimeUnit: time.Second, PreAllocatedVUs: 5, MaxVUs: 200,
		Stages: []load.Stage{{Duration: time.Second, Target: 40}, {Duration: 3500 * time.Millisecond, Target: 40},
			{Duration: time.Second, Target: 80}, {Duration: 3500 * time.Millisecond, Target: 80}}}
	o := opts(t)
	o.Interval = time.Second
	res, err := runner.Execute(context.Background(), config(srv.URL, ex), o)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := analyze.InferPlan(res.Run, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if plan.Steps != 2 || math.Abs(plan.Start-40) > 2 || math.Abs(plan.Step-40) > 2 {
		t.Errorf("inferred plan %+v; want 2 steps from 40/s by 40/s", plan)
	}
}

// A gracefulStop of 0 stops at once, as k6's "0s" does: the request in
// flight at the end (its reply comes 2 s later) is cut off, not waited for
// and counted as a 200 (it would be with the 30 s default).
func TestGracefulStopZeroStopsAtOnce(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-time.After(2 * time.Second):
		case <-r.Context().Done():
		}
		w.Write([]byte("ok"))
	}))
	defer srv.Close()
	defer close(release)
	cfg := config(srv.URL, load.ConstantVUs{VUs: 1, Duration: 300 * time.Millisecond})
	cfg.Scenarios[0].GracefulStop = 0
	res, err := runner.Execute(context.Background(), cfg, opts(t))
	if err != nil {
		t.Fatal(err)
	}
	if n := res.Run.Meta.Counters.ByStatus["2xx"]; n != 0 {
		t.Errorf("%d replies counted: the run waited for the request in flight at its end", n)
	}
}
