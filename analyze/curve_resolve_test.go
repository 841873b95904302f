package analyze

import (
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
	given := StepPlan{Start: 100, Step: 100, StepDuration: 3 * time.Second, Warmup: time.Second}
	for _, tc := range []struct {
		name  string
		r     *rundir.Dir
		jump  time.Duration
		steps int
	}{
		{"instant", instant, 0, 3},
		{"instant, begun late in a second", late, 0, 3},
		// 13 s of data, a 4 s period: three whole steps, the straggler second left out.
		{"ramped", ramped, time.Second, 3},
	} {
		if got := FitJump(tc.r, given, true); got != tc.jump {
			t.Errorf("%s: jump %v, want %v", tc.name, got, tc.jump)
		}
		p, err := ResolvePlan(tc.r, given, true)
		if err != nil || p.Jump != tc.jump || p.Steps != tc.steps {
			t.Errorf("%s: %+v %v, want jump %v and %d steps", tc.name, p, err, tc.jump, tc.steps)
		}
		steps, err := Curve(tc.r, p)
		if err != nil {
			t.Fatal(err)
		}
		for i, s := range steps {
			if want := float64(100 * (i + 1)); s.Rate != want {
				t.Errorf("%s: step %d at %g req/s, want %g", tc.name, i+1, s.Rate, want)
			}
		}
	}
	// A plan given whole is kept, jump and all, when the jump is not fitted.
	whole := given
	whole.Steps, whole.Jump = 2, 5*time.Second
	if p, err := ResolvePlan(instant, whole, false); err != nil || p != whole {
		t.Errorf("whole plan came back as %+v %v", p, err)
	}
}
