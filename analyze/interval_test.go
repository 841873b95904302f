package analyze

import (
	"testing"
	"time"

	"github.com/knee-dev/knee/rundir"
)

// lengthsRun is a run of back-to-back intervals of the given lengths, each
// offering rates[i] req/s (none when rates is shorter).
func lengthsRun(lengths []time.Duration, rates ...float64) *rundir.Dir {
	r := &rundir.Dir{}
	var at time.Duration
	for i, d := range lengths {
		iv := rundir.Interval{Start: at, End: at + d}
		if i < len(rates) {
			iv.Counters = map[string]rundir.IntervalCounters{"s": {Scenario: "s", TargetRate: rates[i]}}
		}
		r.Intervals = append(r.Intervals, iv)
		at += d
	}
	return r
}

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

// The one rule for a run's interval is the median of its lengths, worked
// out here by hand. The jittered rows are where the most common length
// (ties to the shortest) went wrong: no length repeats, so it picked the
// shortest, a partial last interval.
func TestNominalInterval(t *testing.T) {
	for _, tc := range []struct {
		name    string
		lengths []time.Duration
		want    time.Duration
	}{
		{"no intervals: the default 1 s", nil, time.Second},
		{"one interval", []time.Duration{ms(400)}, ms(400)},
		// sorted 0.4 1 1 1: (1+1)/2
		{"1 s with a partial last", []time.Duration{ms(1000), ms(1000), ms(1000), ms(400)}, time.Second},
		// sorted 0.4 0.998 0.999 1.001 1.002: the middle one
		{"jittered, odd count", []time.Duration{ms(1001), ms(999), ms(1002), ms(998), ms(400)}, ms(999)},
		// sorted 0.998 1.002: (0.998+1.002)/2
		{"jittered, even count", []time.Duration{ms(1002), ms(998)}, time.Second},
		// sorted 0.2 0.5 0.5 0.5 0.5 0.5 0.5: the 4th
		{"--interval 500ms with a partial last", []time.Duration{ms(500), ms(500), ms(500), ms(500), ms(500), ms(500), ms(200)}, ms(500)},
		// sorted 0.4 0.4 1 1 1: the most common length would be a tie won
		// by 0.4 s; the median is 1 s
		{"two partial intervals", []time.Duration{ms(400), ms(1000), ms(1000), ms(1000), ms(400)}, time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := nominalInterval(lengthsRun(tc.lengths)); got != tc.want {
				t.Fatalf("nominalInterval = %v, want %v", got, tc.want)
			}
		})
	}
}

// A step plan inferred from an import whose interval lengths jitter and
// whose last interval is partial: two holds, 100 then 200 req/s, spanning
// 1.002+0.998+1.001 = 3.001 s and 0.999+1.003+0.4 = 2.402 s. Each step is
// 5.403/2 = 2.7015 s, which rounds to 3 s on the median grain (sorted
// lengths 0.4 0.998 0.999 1.001 1.002 1.003: (0.999+1.001)/2 = 1 s), so the
// steps hold 3 s - the 1 s jump = 2 s. On the partial interval's 0.4 s
// grain it rounded to 2.8 s, holds of 1.8 s.
func TestInferPlanOnTheMedianInterval(t *testing.T) {
	r := lengthsRun([]time.Duration{ms(1002), ms(998), ms(1001), ms(999), ms(1003), ms(400)}, 100, 100, 100, 200, 200, 200)
	want := StepPlan{Start: 100, Step: 100, Steps: 2, StepDuration: 2 * time.Second, Jump: time.Second}
	got, err := InferPlan(r, "", 0)
	if err != nil || got != want {
		t.Fatalf("InferPlan = %+v, %v\nwant %+v", got, err, want)
	}
	// StepsIn: the run ends at 5.403 s; (5.403 + 1/2) / 3 = 1 whole step.
	if n := StepsIn(r, want); n != 1 {
		t.Errorf("StepsIn = %d, want 1", n)
	}
}
