package runner_test

import (
	"context"
	"errors"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/knee-dev/knee/analyze"
	"github.com/knee-dev/knee/rundir"
	"github.com/knee-dev/knee/runner"
	"github.com/knee-dev/knee/scenario"
)

// stepsRun is a plan of two steps, 40 then 80 req/s, each a 1 s jump and a
// 2 s hold, and the scenario it builds against url.
func stepsRun(t *testing.T, url string) (*scenario.Config, runner.StepsOptions) {
	t.Helper()
	plan := analyze.StepPlan{Start: 40, Step: 40, Steps: 2, StepDuration: 2 * time.Second, Jump: analyze.DefaultJump, Warmup: 500 * time.Millisecond}
	cfg, err := scenario.FromStepFlags(scenario.Flags{URL: url + "/x/{v}", Vars: []string{"v=a,b"}},
		scenario.Steps{Start: plan.Start, Step: plan.Step, Count: plan.Steps, Hold: plan.StepDuration, PreAllocatedVUs: 5, MaxVUs: 100})
	if err != nil {
		t.Fatal(err)
	}
	o := opts(t)
	o.Interval = time.Second
	return cfg, runner.StepsOptions{Options: o, Plan: plan}
}

// A stepped run is run, sampled and measured in one call: both steps at
// their offered rates, every scheduled iteration sent, the USE scan made
// (resources.jsonl, tables and verdict: the machine and knee itself are
// always sampled), and the run directory and summary attached.
func TestStepsRunsAndMeasures(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a 6 s run")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) }))
	defer srv.Close()
	cfg, o := stepsRun(t, srv.URL)
	res, run, err := runner.Steps(context.Background(), cfg, o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Dir != o.Dir || run == nil || run.Dir != o.Dir {
		t.Errorf("result dir %q, run %v; want both %q", res.Dir, run, o.Dir)
	}
	// Hand-computed from the schedule: step 0 holds 40/s for its 1 s jump
	// and 2 s hold (120), step 1 ramps 40 -> 80 in 1 s (60) and holds 80/s
	// for 2 s (160): 340 iterations.
	if res.Summary == nil || math.Abs(float64(res.Summary.Requests)-340) > 1 || res.Summary.DroppedIterations != 0 || res.Summary.Errors != 0 {
		t.Fatalf("summary %+v; want 340 requests, none dropped or failed", res.Summary)
	}
	if len(res.Steps) != 2 {
		t.Fatalf("%d steps measured, want 2", len(res.Steps))
	}
	for i, want := range []float64{40, 80} {
		s := res.Steps[i]
		if s.OfferedRate != want || math.Abs(s.Rate-want) > 0.15*want {
			t.Errorf("step %d: offered %g, achieved %.1f req/s; want %g offered and achieved within 15%%", i, s.OfferedRate, s.Rate, want)
		}
	}
	if _, err := os.Stat(filepath.Join(o.Dir, rundir.ResourcesFile)); err != nil {
		t.Errorf("resources.jsonl: %v; a stepped run samples resources", err)
	}
	if res.USE == nil || res.Bottleneck == nil || len(res.StepUSE) != 2 {
		t.Errorf("USE table %v, verdict %v, %d step tables; want the scan of both steps", res.USE != nil, res.Bottleneck != nil, len(res.StepUSE))
	}
	if res.Summary.Interrupted || slices.ContainsFunc(res.Notes, func(n string) bool { return strings.Contains(n, "interrupted") }) {
		t.Errorf("an uninterrupted run says it was interrupted: %v", res.Notes)
	}
}

// A bad plan is refused before any load: no run directory. A run stopped
// before its first step could be measured is an error that says so
// (analyze.ErrNoSteps), not an empty curve.
func TestStepsRefusesWhatItCannotMeasure(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	cfg, o := stepsRun(t, srv.URL)
	bad := o
	bad.Plan.Warmup = bad.Plan.StepDuration
	if _, _, err := runner.Steps(context.Background(), cfg, bad); err == nil || !strings.Contains(err.Error(), "--warmup") {
		t.Errorf("warmup as long as the step: %v; want the plan refused naming --warmup", err)
	}
	if _, err := os.Stat(o.Dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused plan left %s behind (%v)", o.Dir, err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, _, err := runner.Steps(ctx, cfg, o)
	if !errors.Is(err, analyze.ErrNoSteps) || res != nil {
		t.Errorf("run stopped at once: %v, %v; want no result and an error wrapping analyze.ErrNoSteps", res, err)
	}
}
