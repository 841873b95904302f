package analyze

import (
	"strings"
	"testing"
	"time"

	"github.com/knee-dev/knee/record"
	"github.com/knee-dev/knee/rundir"
)

// countsRun is a run of 1 s intervals completing counts[i] requests each,
// with no offered rate recorded (an import of another tool's output).
func countsRun(counts ...int64) *rundir.Dir {
	r := &rundir.Dir{}
	for i, n := range counts {
		r.Intervals = append(r.Intervals, rundir.Interval{
			Start: time.Duration(i) * time.Second, End: time.Duration(i+1) * time.Second,
			Histograms: map[record.Key]*record.Histogram{},
			Counters:   map[string]rundir.IntervalCounters{"s": {Scenario: "s", Counters: record.Counters{Requests: n}}},
		})
	}
	return r
}

// A run that jumps at once (a k6 0 s stage) and one that ramps for a second
// before each 3 s hold (knee's and the article's): FitJump tells them apart,
// StepsIn counts their whole steps, ResolvePlan fills both in.
func TestResolvePlanFitsTheJump(t *testing.T) {
	instant := countsRun(100, 100, 100, 200, 200, 200, 300, 300, 300)
	// The ramp second completes about halfway between the two rates.
	ramped := countsRun(100, 100, 100, 100, 150, 200, 200, 200, 250, 300, 300, 300, 20)
	// The instant run begun 0.9 s into its first interval (an import's grid
	// starts at the first timestamp's whole second): the interval each step
	// begins in holds 90 % of the step before.
	late := countsRun(10, 100, 100, 90+20, 200, 200, 180+30, 300, 300, 270)
	// The ramped run of a target that collapses at its third step (a
	// capacity of about 210 req/s, as knee run steps.js measured one):
	// offered 300, achieved 30 to 40.
	collapsed := countsRun(100, 100, 100, 100, 150, 200, 200, 200, 210, 40, 30, 40, 30)
	given := StepPlan{Start: 100, Step: 100, StepDuration: 3 * time.Second, Warmup: time.Second}
	for _, tc := range []struct {
		name  string
		r     *rundir.Dir
		jump  time.Duration
		steps int
		rates []float64 // nil: 100, 200, 300
	}{
		{"instant", instant, 0, 3, nil},
		{"instant, begun late in a second", late, 0, 3, nil},
		// 13 s of data, a 4 s period: three whole steps, the straggler second left out.
		{"ramped", ramped, time.Second, 3, nil},
		// The third step's measured part: (40 + 30 + 40) / 3 s.
		{"ramped, collapsed at the third step", collapsed, time.Second, 3, []float64{100, 200, 110.0 / 3}},
	} {
		if got := FitJump(tc.r, given, true); got != tc.jump {
			t.Errorf("%s: jump %v, want %v", tc.name, got, tc.jump)
		}
		p, err := ResolvePlan(tc.r, given, &PlanGiven{Start: true, Step: true, StepDuration: true, Warmup: true})
		if err != nil || p.Jump != tc.jump || p.Steps != tc.steps {
			t.Errorf("%s: %+v %v, want jump %v and %d steps", tc.name, p, err, tc.jump, tc.steps)
		}
		steps, err := Curve(tc.r, p)
		if err != nil {
			t.Fatal(err)
		}
		for i, s := range steps {
			want := float64(100 * (i + 1))
			if tc.rates != nil {
				want = tc.rates[i]
			}
			if s.Rate != want {
				t.Errorf("%s: step %d at %g req/s, want %g", tc.name, i+1, s.Rate, want)
			}
		}
	}
	// A plan given whole is kept, jump and all, when the jump is not fitted.
	whole := given
	whole.Steps, whole.Jump = 2, 5*time.Second
	if p, err := ResolvePlan(instant, whole, nil); err != nil || p != whole {
		t.Errorf("whole plan came back as %+v %v", p, err)
	}
}

// A run that stored its plan (knee steps) is measured by it, warmup
// included, whatever knee curve's defaults say; --warmup replaces the
// run's, --steps may ask for fewer, and a flag that contradicts the run is
// an error that names it and the run's value.
func TestResolvePlanTakesTheStoredPlan(t *testing.T) {
	// Two steps of a 1 s jump and a 5 s hold: 20 and 40 req/s.
	r := countsRun(20, 20, 20, 20, 20, 20, 30, 40, 40, 40, 40, 40)
	r.Meta.StepPlan = &rundir.StepPlan{Start: 20, Step: 20, Steps: 2, StepDuration: 5 * time.Second, Jump: time.Second, Warmup: time.Second}
	stored := StepPlan{Start: 20, Step: 20, Steps: 2, StepDuration: 5 * time.Second, Jump: time.Second, Warmup: time.Second}
	curveDefaults := StepPlan{Warmup: 6 * time.Second} // knee curve's flags, none given
	for _, tc := range []struct {
		name  string
		p     StepPlan
		given PlanGiven
		want  StepPlan
		err   []string // in the error, in order; nil: no error
	}{
		{"nothing given", curveDefaults, PlanGiven{}, stored, nil},
		{"--warmup", StepPlan{Warmup: 2 * time.Second}, PlanGiven{Warmup: true},
			StepPlan{Start: 20, Step: 20, Steps: 2, StepDuration: 5 * time.Second, Jump: time.Second, Warmup: 2 * time.Second}, nil},
		{"--steps 1", StepPlan{Steps: 1, Warmup: 6 * time.Second}, PlanGiven{Steps: true},
			StepPlan{Start: 20, Step: 20, Steps: 1, StepDuration: 5 * time.Second, Jump: time.Second, Warmup: time.Second}, nil},
		{"the run's own values", StepPlan{Start: 20, Step: 20, StepDuration: 5 * time.Second, Jump: time.Second, Warmup: 6 * time.Second},
			PlanGiven{Start: true, Step: true, StepDuration: true, Jump: true}, stored, nil},
		{"--warmup as long as a step", StepPlan{Warmup: 5 * time.Second}, PlanGiven{Warmup: true}, StepPlan{},
			[]string{"--warmup 5s", "5s step", "run.json"}},
		{"--step-duration and --start", StepPlan{Start: 30, StepDuration: 8 * time.Second, Warmup: 6 * time.Second},
			PlanGiven{Start: true, StepDuration: true}, StepPlan{},
			[]string{"--start 30 conflicts", "(--start 20)", "--step-duration 8s conflicts", "(--step-duration 5s)"}},
		{"--jump", StepPlan{Warmup: 6 * time.Second}, PlanGiven{Jump: true}, StepPlan{},
			[]string{"--jump 0s conflicts", "(--jump 1s)"}},
		{"--steps 3", StepPlan{Steps: 3, Warmup: 6 * time.Second}, PlanGiven{Steps: true}, StepPlan{},
			[]string{"--steps 3", "only 2 steps"}},
	} {
		got, err := ResolvePlan(r, tc.p, &tc.given)
		if tc.err == nil {
			if err != nil || got != tc.want {
				t.Errorf("%s: %+v %v, want %+v", tc.name, got, err, tc.want)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s: %+v, want an error", tc.name, got)
			continue
		}
		msg := err.Error()
		for _, w := range tc.err {
			i := strings.Index(msg, w)
			if i < 0 {
				t.Errorf("%s: %q lacks %q", tc.name, err, w)
				break
			}
			msg = msg[i+len(w):]
		}
	}
	// The stored plan is measured as it says: 20 and 40 req/s after the
	// 1 s warmup, the ramp second left out.
	p, err := ResolvePlan(r, curveDefaults, &PlanGiven{})
	if err != nil {
		t.Fatal(err)
	}
	steps, err := Curve(r, p)
	if err != nil || len(steps) != 2 || steps[0].Rate != 20 || steps[1].Rate != 40 {
		t.Errorf("steps %+v %v, want 20 and 40 req/s", steps, err)
	}
	// Another scenario's plan is not this one's.
	r.Meta.StepPlan.Scenario = "other"
	if _, err := ResolvePlan(r, StepPlan{Scenario: "s", Warmup: 6 * time.Second}, &PlanGiven{}); err == nil {
		t.Errorf("scenario s measured by scenario other's plan")
	}
}

// A run without a stored plan whose steps are read from its stages: a
// warmup as long as them says so, whether it is the default or given.
func TestResolvePlanWarmupLongerThanTheRunsSteps(t *testing.T) {
	r := countsRun(20, 20, 20, 20, 20, 20)
	r.Meta.Scenarios = []rundir.Scenario{{Name: "s", Executor: rampingArrivalRate,
		Config: []byte(`{"timeUnit":"1s","stages":[{"duration":"1s","target":20},{"duration":"5s","target":20}]}`)}}
	for _, tc := range []struct {
		given PlanGiven
		want  string
	}{
		{PlanGiven{}, "the default --warmup 6s leaves nothing of this run's 5s steps (read from the stages in run.json)"},
		{PlanGiven{Warmup: true}, "--warmup 6s leaves nothing of this run's 5s steps"},
	} {
		_, err := ResolvePlan(r, StepPlan{Warmup: 6 * time.Second}, &tc.given)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("given %+v: %v, want %q", tc.given, err, tc.want)
		}
	}
	p, err := ResolvePlan(r, StepPlan{Warmup: 2 * time.Second}, &PlanGiven{Warmup: true})
	if err != nil || p.Start != 20 || p.Steps != 1 || p.StepDuration != 5*time.Second || p.Warmup != 2*time.Second {
		t.Errorf("%+v %v, want one 5 s step of 20 req/s, 2 s warmup", p, err)
	}
}
