package analyze_test

import (
	"testing"
	"time"

	"github.com/knee-dev/knee/analyze"
	"github.com/knee-dev/knee/record"
	"github.com/knee-dev/knee/rundir"
)

// The floor send lag is judged against is the one measured at the run's own
// gap between starts, beside it, when there is one: a 1/s run whose send lag
// is within 3× a long wait's floor is not the generator's fault, one above it
// is, and the 1 ms limit below which nothing is blamed holds whatever the
// floor. A run too short for one wait beside it falls back to the floor
// before the run, and the warning says so.
func TestSendLagAgainstTheFloorBesideTheRun(t *testing.T) {
	before := &rundir.WakeFloor{Waits: 200, Period: time.Millisecond, P50MS: 0.05, P99MS: 0.1}
	second := func(waits int, p99 float64) *rundir.WakeFloor {
		return &rundir.WakeFloor{Waits: waits, Period: time.Second, Beside: true, P50MS: p99 / 2, P99MS: p99}
	}
	tests := []struct {
		name   string
		lag    time.Duration // every start's send lag
		beside *rundir.WakeFloor
		floor  float64 // the summary's floor p99, ms
		want   string  // the generator-limited warning's start; "" for none
	}{
		{"within 3× the 1 s floor", 2 * time.Millisecond, second(2, 1), 1, ""},
		{"over 3× the 1 s floor", 4 * time.Millisecond, second(2, 1), 1,
			"generator-limited: send-lag p99 4.00 ms > 1.00 ms and over 3× this machine's own wake-up floor " +
				"(p99 1.00 ms, a bare thread's timed waits of 1 s beside the run):"},
		{"under the 1 ms limit, over 3× the floor", 900 * time.Microsecond, second(2, 0.1), 0.1, ""},
		{"no wait beside the run", 2 * time.Millisecond, second(0, 0), 0.1,
			"(p99 100 µs, a bare thread's timed waits of 1 ms before the run; the run was too short for one wait " +
				"of its own gap between starts (1 s) beside it"},
		{"no floor beside the run (starts came often)", 2 * time.Millisecond, nil, 0.1,
			"(p99 100 µs, a bare thread's timed waits of 1 ms before the run):"},
	}
	for _, tc := range tests {
		f := newFakeRun("open", 3, rundir.Scenario{Name: "slow", Model: "open", Executor: "constant-arrival-rate",
			TargetRate: 1, WakeFloor: tc.beside})
		f.r.Meta.Env.WakeFloor = before
		for sec := range 3 {
			f.add(sec, lat("slow", "GET /"), time.Millisecond, 1)
			f.add(sec, key(record.SendLag, "slow"), tc.lag, 1)
		}
		s := analyze.Summarize(f.r, analyze.SummaryOptions{})
		if s.WakeFloor == nil || s.WakeFloor.P99MS != tc.floor {
			t.Errorf("%s: the summary's floor is %+v, want p99 %v ms", tc.name, s.WakeFloor, tc.floor)
		}
		switch {
		case tc.want == "" && hasWarning(s.Warnings, "generator-limited"):
			t.Errorf("%s: warnings %q blame the generator", tc.name, s.Warnings)
		case tc.want != "" && !hasWarning(s.Warnings, tc.want):
			t.Errorf("%s: warnings %q, want one with %q", tc.name, s.Warnings, tc.want)
		}
	}
}

// With several scenarios, each one's send lag is judged against its own
// floor, and the whole run's, merged, against the highest: a 300/s
// scenario whose lag is 20× the floor before the run is generator-limited
// in its own block even when a 1/s scenario beside it waited a floor that
// covers the merged p99.
func TestSendLagFloorPerScenario(t *testing.T) {
	f := newFakeRun("open", 3,
		rundir.Scenario{Name: "slow", Model: "open", Executor: "constant-arrival-rate", TargetRate: 1,
			WakeFloor: &rundir.WakeFloor{Waits: 2, Period: time.Second, Beside: true, P50MS: 0.5, P99MS: 1}},
		rundir.Scenario{Name: "fast", Model: "open", Executor: "constant-arrival-rate", TargetRate: 300})
	f.r.Meta.Env.WakeFloor = &rundir.WakeFloor{Waits: 200, Period: time.Millisecond, P50MS: 0.05, P99MS: 0.1}
	for sec := range 3 {
		f.add(sec, lat("slow", "GET /"), time.Millisecond, 1)
		f.add(sec, key(record.SendLag, "slow"), 2*time.Millisecond, 1)
		f.add(sec, lat("fast", "GET /"), time.Millisecond, 300)
		// 6 of 300 (2 %) at 2 ms: the p99 of fast alone and of the merged run.
		f.add(sec, key(record.SendLag, "fast"), 200*time.Microsecond, 294)
		f.add(sec, key(record.SendLag, "fast"), 2*time.Millisecond, 6)
	}
	s := analyze.Summarize(f.r, analyze.SummaryOptions{})
	want := map[string]struct {
		floor   float64
		limited bool
	}{
		"":     {1, false},  // 2 ms merged p99 within 3 × 1 ms
		"slow": {1, false},  // 2 ms within 3 × 1 ms
		"fast": {0.1, true}, // 2 ms over 3 × 0.1 ms and over 1 ms
	}
	got := map[string]rundir.Summary{"": s}
	for _, sc := range s.Scenarios {
		got[sc.Scenario] = sc.Summary
	}
	for name, w := range want {
		g, ok := got[name]
		if !ok {
			t.Errorf("no summary of scenario %q", name)
			continue
		}
		if g.WakeFloor == nil || g.WakeFloor.P99MS != w.floor {
			t.Errorf("scenario %q: floor %+v, want p99 %v ms", name, g.WakeFloor, w.floor)
		}
		if hasWarning(g.Warnings, "generator-limited") != w.limited {
			t.Errorf("scenario %q: warnings %q; want generator-limited %v", name, g.Warnings, w.limited)
		}
	}
}
