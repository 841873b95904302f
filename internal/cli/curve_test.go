package cli

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// curveExport is the part of --summary-export the tests read.
type curveExport struct {
	Plan struct {
		Start        float64       `json:"start"`
		Step         float64       `json:"step"`
		Steps        int           `json:"steps"`
		StepDuration time.Duration `json:"step_duration_ns"`
		Jump         time.Duration `json:"jump_ns"`
		Warmup       time.Duration `json:"warmup_ns"`
	} `json:"plan"`
	Steps []struct {
		OfferedRate float64 `json:"offered_rate"`
		Rate        float64 `json:"rate"`
	} `json:"steps"`
	Knee struct {
		LastHealthy    float64 `json:"last_healthy_rate"`
		FirstUnhealthy float64 `json:"first_unhealthy_rate"`
		Reason         string  `json:"reason"`
	} `json:"knee"`
	Collapse   *json.RawMessage `json:"collapse"`
	Capacity   string           `json:"capacity"`
	USE        *json.RawMessage `json:"use"`
	Bottleneck *json.RawMessage `json:"bottleneck"`
	Plots      []string         `json:"plots"`
}

func readCurveExport(t *testing.T, path string) curveExport {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var e curveExport
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return e
}

// knee steps against a target of known capacity, then knee curve on the
// run directory it made. The target serves 8 requests at a time for 32 ms
// each: 8 / 0.032 s = 250 req/s. Steps of 100, 200, 300 and 400 req/s must
// put the knee between 200 (80 % busy: healthy) and 300 (more than it can
// serve: achieved at most 250/300 = 83 % of offered, under the 97 % a
// healthy step needs), and nothing collapses: the achieved rate stays at
// the capacity, never under 80 % of the best. The p95 bound is an SLO of 1 s,
// so the knee is found by the throughput rule the capacity sets, not by the
// p95 of a step whose tail a busy machine can stretch past 5x the first's.
func TestStepsThenCurveFindTheKnee(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a 16 s stepped run")
	}
	srv := stepsTarget(8, 32*time.Millisecond)
	defer srv.Close()
	out := t.TempDir()
	export := filepath.Join(out, "steps.json")
	code, stdout, stderr := runKnee(t, "steps", "--start", "100", "--step", "100", "--steps", "4",
		"--step-duration", "3s", "--warmup", "1s", "--max-p95", "1s", "--url", srv.URL+"/?run={vu}-{iter}",
		"--out", filepath.Join(out, "runs"), "--summary-export", export, "--quiet")
	if code != 0 {
		t.Fatalf("knee steps: exit %d\n%s\n%s", code, stdout, stderr)
	}
	checkKnee(t, "knee steps", readCurveExport(t, export))
	for _, want := range []string{"offered/s", "knee:", "collapse:", "USL fit:", "capacity:", "USE table", "USE per step", "verdict:"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("knee steps output lacks %q", want)
		}
	}
	runs, err := filepath.Glob(filepath.Join(out, "runs", "*"))
	if err != nil || len(runs) != 1 {
		t.Fatalf("run directories: %v %v", runs, err)
	}
	for _, f := range []string{"curve.png", "curve.svg", "timeline.png", "timeline.svg", "resources.jsonl"} {
		if st, err := os.Stat(filepath.Join(runs[0], f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}

	// run.json holds the plan knee steps was given, and knee curve measures
	// the run by it, its 1 s warmup included (knee curve's default is 6 s,
	// longer than these steps).
	b, err := os.ReadFile(filepath.Join(runs[0], "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	var meta struct {
		StepPlan map[string]float64 `json:"step_plan"`
	}
	if err := json.Unmarshal(b, &meta); err != nil {
		t.Fatal(err)
	}
	wantPlan := map[string]float64{"start": 100, "step": 100, "steps": 4, "step_duration_ns": 3e9, "jump_ns": 1e9, "warmup_ns": 1e9}
	if !maps.Equal(meta.StepPlan, wantPlan) {
		t.Errorf("run.json step_plan %v, want %v", meta.StepPlan, wantPlan)
	}
	plots := filepath.Join(out, "plots")
	export2 := filepath.Join(out, "curve.json")
	code, stdout, stderr = runKnee(t, "curve", runs[0], "--max-p95", "1s", "--plots", plots, "--summary-export", export2)
	if code != 0 {
		t.Fatalf("knee curve: exit %d\n%s\n%s", code, stdout, stderr)
	}
	e := readCurveExport(t, export2)
	if e.Plan.Start != 100 || e.Plan.Step != 100 || e.Plan.Steps != 4 || e.Plan.StepDuration != 3*time.Second ||
		e.Plan.Jump != time.Second || e.Plan.Warmup != time.Second {
		t.Errorf("plan %+v, want the run's: 100 by 100, 4 steps of a 1 s jump and a 3 s hold, 1 s warmup", e.Plan)
	}
	checkKnee(t, "knee curve", e)
	if e.USE == nil || e.Bottleneck == nil {
		t.Errorf("knee curve on a run with resources.jsonl: no USE table or verdict")
	}
	for _, f := range []string{"curve.png", "curve.svg", "timeline.png", "timeline.svg"} {
		if _, err := os.Stat(filepath.Join(plots, f)); err != nil {
			t.Errorf("--plots: %v", err)
		}
	}

	// Flags that contradict the run's plan exit 2 naming the run's value;
	// --warmup replaces the run's, checked against the run's steps.
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--step-duration", "8s"}, "--step-duration 8s conflicts with the plan this run was made by (--step-duration 3s)"},
		{[]string{"--steps", "5"}, "--steps 5: the run made only 4 steps"},
		{[]string{"--warmup", "3s"}, "--warmup 3s leaves nothing of a 3s step"},
	} {
		code, _, stderr := runKnee(t, append([]string{"curve", runs[0], "--plots", plots}, tc.args...)...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("knee curve %v: exit %d, %q; want exit 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}

func checkKnee(t *testing.T, what string, e curveExport) {
	t.Helper()
	if len(e.Steps) != 4 {
		t.Fatalf("%s: %d steps, want 4", what, len(e.Steps))
	}
	if e.Knee.LastHealthy != 200 || e.Knee.FirstUnhealthy != 300 {
		t.Errorf("%s: knee between %g and %g (%s); want between 200 and 300 around the 250 req/s capacity",
			what, e.Knee.LastHealthy, e.Knee.FirstUnhealthy, e.Knee.Reason)
	}
	if e.Collapse != nil && string(*e.Collapse) != "null" {
		t.Errorf("%s: collapse %s, want none", what, *e.Collapse)
	}
	for _, s := range e.Steps[2:] {
		if s.Rate > 250*1.05 {
			t.Errorf("%s: at %g req/s offered %g completed, above the 250 req/s capacity", what, s.OfferedRate, s.Rate)
		}
	}
	if !strings.Contains(e.Capacity, "between 200 and 300") {
		t.Errorf("%s: capacity line %q", what, e.Capacity)
	}
}
