package analyze_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/knee-dev/knee/analyze"
	"github.com/knee-dev/knee/record"
	"github.com/knee-dev/knee/rundir"
)

func TestMannWhitneyU(t *testing.T) {
	tests := []struct {
		name   string
		x, y   []float64
		u1, u  float64
		p      float64
		method string
	}{
		// Complete separation, 5 against 5: U1 = 15 − 15 = 0; exactly one of
		// the C(10,5) = 252 orderings has U = 0, so p = 2/252.
		{"separated 5v5", []float64{1, 2, 3, 4, 5}, []float64{6, 7, 8, 9, 10}, 0, 0, 2.0 / 252, analyze.MethodExact},
		// x ranks 1, 2, 5 among 7: R1 = 8, U1 = 8 − 6 = 2, U2 = 12 − 2 = 10.
		// Orderings with U ≤ 2 (partitions of 0, 1, 2 into ≤ 3 parts ≤ 4): 1+1+2 = 4
		// of C(7,3) = 35; p = 2·4/35.
		{"exact 3v4", []float64{1, 2, 5}, []float64{3, 4, 6, 7}, 2, 2, 8.0 / 35, analyze.MethodExact},
		// Reversed samples give U1 = 10 and the same U and p.
		{"exact 4v3", []float64{3, 4, 6, 7}, []float64{1, 2, 5}, 10, 2, 8.0 / 35, analyze.MethodExact},
		// One tie (3, 3 at ranks 3 and 4 → 3.5): R1 = 1+2+3.5+5+6 = 17.5, U1 = 2.5.
		// mu = 15; sigma² = 30/12·(12 − 6/110) = 29.86364, sigma = 5.464763;
		// z = (12.5 − 0.5)/sigma = 2.195887; p = erfc(z/√2) = 0.028100.
		{"ties normal", []float64{1, 2, 3, 4, 5}, []float64{3, 6, 7, 8, 9, 10}, 2.5, 2.5, 0.0281000636, analyze.MethodNormal},
		// All equal: no evidence at all.
		{"all equal", []float64{4, 4, 4, 4, 4}, []float64{4, 4, 4, 4, 4}, 12.5, 12.5, 1, analyze.MethodNormal},
	}
	for _, tt := range tests {
		got := analyze.MannWhitneyU(tt.x, tt.y)
		if got.U1 != tt.u1 || got.U != tt.u || !closeTo(got.P, tt.p, 1e-9) || got.Method != tt.method {
			t.Errorf("%s: %+v; want U1 %v U %v p %v %s", tt.name, got, tt.u1, tt.u, tt.p, tt.method)
		}
	}
}

func TestMannWhitneyLargeSamplesNormal(t *testing.T) {
	// 8 against 8, separated: too big for the exact rule, so normal:
	// U1 = 0, mu = 32, sigma² = 64/12·17 = 90.6667; z = 31.5/9.521905 = 3.308162;
	// p = erfc(z/√2) = 0.00093911.
	x := []float64{1, 2, 3, 4, 5, 6, 7, 8}
	y := []float64{9, 10, 11, 12, 13, 14, 15, 16}
	got := analyze.MannWhitneyU(x, y)
	if got.Method != analyze.MethodNormal || got.U != 0 || !closeTo(got.Z, 3.308162, 1e-6) || !closeTo(got.P, 0.00093911, 1e-7) {
		t.Errorf("%+v; want normal, U 0, z 3.308162, p 0.00093911", got)
	}
}

func TestRepetitions(t *testing.T) {
	sum := func(p99 float64) rundir.Summary { return rundir.Summary{LatencyMS: record.Latencies{P99: p99}} }
	tests := []struct {
		name string
		ss   []rundir.Summary
		want analyze.Spread
		warn bool
	}{
		{"odd", []rundir.Summary{sum(5), sum(1), sum(3)}, analyze.Spread{Median: 3, Min: 1, Max: 5, N: 3}, false},
		{"even", []rundir.Summary{sum(4), sum(1), sum(3), sum(10)}, analyze.Spread{Median: 3.5, Min: 1, Max: 10, N: 4}, false},
		{"two", []rundir.Summary{sum(2), sum(4)}, analyze.Spread{Median: 3, Min: 2, Max: 4, N: 2}, true},
	}
	for _, tt := range tests {
		rep := analyze.Repetitions(tt.ss)
		var got analyze.Spread
		for _, m := range rep.Metrics {
			if m.Metric == "p99_ms" {
				got = m.Spread
			}
		}
		if got != tt.want || (len(rep.Warnings) > 0) != tt.warn || rep.Runs != len(tt.ss) {
			t.Errorf("%s: p99 %+v warnings %q; want %+v, warning %v", tt.name, got, rep.Warnings, tt.want, tt.warn)
		}
	}
}

// repRun is one repetition: 10 s at 100 req/s, every latency d (below
// 2048 µs, where the histogram is exact).
func repRun(d time.Duration, host string) *rundir.Dir {
	f := newFakeRun("open", 10, rundir.Scenario{Name: "s", Executor: "constant-arrival-rate", Model: "open", TargetRate: 100})
	for sec := range 10 {
		f.add(sec, lat("s", "GET /"), d, 100)
		f.count(sec, "s", record.Counters{Requests: 100}, 100)
	}
	f.r.Meta.Env = rundir.Environment{Host: host, CPUs: 2, CPUModel: "x", KneeVersion: "v1"}
	f.r.Meta.Started = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	return f.r
}

func reps(host string, micros ...int) []*rundir.Dir {
	var rs []*rundir.Dir
	for _, us := range micros {
		rs = append(rs, repRun(time.Duration(us)*time.Microsecond, host))
	}
	return rs
}

func metric(t *testing.T, c analyze.Comparison, name string) analyze.MetricComparison {
	t.Helper()
	for _, m := range c.Metrics {
		if m.Metric == name {
			return m
		}
	}
	t.Fatalf("no metric %s", name)
	return analyze.MetricComparison{}
}

func TestCompare(t *testing.T) {
	tests := []struct {
		name        string
		base, cand  []*rundir.Dir
		p99Verdict  string
		ratio       float64
		mw          float64 // 0: no test
		warnings    int
		overlapping bool
	}{
		// Separate ranges, 5 v 5: exact U = 0, p = 2/252 < 0.05.
		{"five each, separate", reps("h", 1000, 1010, 1020, 1030, 1040), reps("h", 1200, 1210, 1220, 1230, 1240),
			analyze.VerdictRealDifference, 1220.0 / 1020, 2.0 / 252, 0, false},
		// Ranges overlap at 1040, so within spread whatever the test says. The
		// tie makes it normal: U1 = 0.5, sigma² = 25/12·(11 − 6/90) = 22.7778,
		// z = 11.5/4.772607 = 2.409585, p = 0.0159707.
		{"five each, overlapping", reps("h", 1000, 1010, 1020, 1030, 1040), reps("h", 1040, 1210, 1220, 1230, 1240),
			analyze.VerdictWithinSpread, 1220.0 / 1020, 0.0159707, 0, true},
		// Three each: ranges alone decide.
		{"three each", reps("h", 1000, 1010, 1020), reps("h", 1100, 1110, 1120),
			analyze.VerdictRealDifference, 1110.0 / 1010, 0, 0, false},
		// Two each: too few to tell from noise, whatever the ranges say; a
		// warning per side and one with the rule for the runs needed.
		{"two each", reps("h", 1000, 1010), reps("h", 1100, 1110),
			analyze.VerdictNoise, 1105.0 / 1005, 0, 3, false},
	}
	for _, tt := range tests {
		c, err := analyze.Compare(tt.base, tt.cand)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		m := metric(t, c, "p99_ms")
		if m.Verdict != tt.p99Verdict || !closeTo(m.Ratio, tt.ratio, 1e-12) || m.Overlap != tt.overlapping {
			t.Errorf("%s: p99 %+v; want %q, ratio %v", tt.name, m, tt.p99Verdict, tt.ratio)
		}
		if (m.MannWhitney == nil) != (tt.mw == 0) || (m.MannWhitney != nil && !closeTo(m.MannWhitney.P, tt.mw, 1e-6)) {
			t.Errorf("%s: mann_whitney %+v; want p %v", tt.name, m.MannWhitney, tt.mw)
		}
		if len(c.Warnings) != tt.warnings {
			t.Errorf("%s: warnings %q; want %d", tt.name, c.Warnings, tt.warnings)
		}
		// Every run had 100 req/s: identical ranges never make a difference.
		if r := metric(t, c, "rate"); (r.Verdict != analyze.VerdictWithinSpread && r.Verdict != analyze.VerdictNoise) ||
			r.Verdict == analyze.VerdictNoise && r.RunsNeeded != 0 || r.Ratio != 1 {
			t.Errorf("%s: rate %+v; want within spread (or no verdict and no runs needed), ratio 1", tt.name, r)
		}
	}
}

func TestCompareEnvironment(t *testing.T) {
	base := reps("alpha", 1000, 1010, 1020)
	cand := reps("beta", 1000, 1010, 1020)
	cand[0].Meta.Env.CPUs = 8
	cand[1].Meta.Env.LoadBefore = [3]float64{1.9, 1, 1} // 0.95 per CPU: loaded
	cand[2].Meta.Started = base[0].Meta.Started.Add(49 * time.Hour)
	cand[2].Meta.Env.TargetLimits = map[string]string{"cpu.max": "50000 100000"}
	cand[2].Meta.Env.KneeVersion = "v2"
	c, err := analyze.Compare(base, cand)
	if err != nil {
		t.Fatal(err)
	}
	for _, phrase := range []string{"hosts: alpha vs beta", "CPUs: 2 × x vs 8 × x", "target limits: none vs cpu.max=50000 100000",
		"knee versions: v1 vs v2", "load averages before the run: idle (<0.25/CPU) vs loaded (>=0.75/CPU)", "started 49h0m0s apart"} {
		if !hasWarning(c.Warnings, phrase) {
			t.Errorf("warnings %q lack %q", c.Warnings, phrase)
		}
	}
}

func TestCompareErrors(t *testing.T) {
	other := repRun(time.Millisecond, "h")
	other.Meta.Scenarios[0].TargetRate = 200
	if _, err := analyze.Compare(reps("h", 1000, 1000), []*rundir.Dir{other}); !errors.Is(err, analyze.ErrDifferentScenarios) {
		t.Errorf("different target rates: error %v; want ErrDifferentScenarios", err)
	}
	if _, err := analyze.Compare(nil, reps("h", 1000)); err == nil {
		t.Error("Compare without base runs: no error")
	}
}

// SameTest: repetitions pass; another model, scenario or request does not,
// and the error names both runs' tests.
func TestSameTest(t *testing.T) {
	same := reps("h", 1000, 1100, 1200)
	if err := analyze.SameTest(same); err != nil {
		t.Errorf("repetitions refused: %v", err)
	}
	if err := analyze.SameTest(same[:1]); err != nil {
		t.Errorf("one run refused: %v", err)
	}
	for _, tc := range []struct {
		name string
		edit func(*rundir.Dir)
		want string
	}{
		{"closed", func(r *rundir.Dir) { r.Meta.Model, r.Meta.Scenarios[0].Model = "closed", "closed" }, "closed"},
		{"scenario", func(r *rundir.Dir) { r.Meta.Scenarios[0].Name = "browse" }, "browse"},
		{"target", func(r *rundir.Dir) { r.Meta.Scenarios[0].Requests = []string{"GET /authors"} }, "GET /authors"},
	} {
		runs := reps("h", 1000, 1100)
		tc.edit(runs[1])
		err := analyze.SameTest(runs)
		if !errors.Is(err, analyze.ErrNotRepetitions) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want ErrNotRepetitions naming %q", tc.name, err, tc.want)
		}
	}
}

// With fewer than 3 runs a side no difference is told from noise, however
// far apart the runs are, and the runs needed follow the two-sample rule
// n = 2·(1.959964 + 0.841621)²·s²/d² = 15.697757·s²/d² (at least 3), worked
// here by hand. Latencies in µs, p99 in ms (exact below 2048 µs).
func TestCompareFewRunsCannotTellFromNoise(t *testing.T) {
	for _, tc := range []struct {
		name       string
		base, cand []*rundir.Dir
		needed     int
		noise      string
	}{
		// The runs: p99 1,916 against 1,909 one run a side, once
		// called a real difference. No spread: nothing to size from.
		{"one each", reps("h", 1916), reps("h", 1909), 0, "one run a side"},
		// d = 0.1 ms; each side's variance (2·0.005²)/1, pooled 0.00005:
		// 15.697757·0.00005/0.01 = 0.078, so the least, 3.
		{"two each, tight", reps("h", 1000, 1010), reps("h", 1100, 1110), 3, "needs about 3 runs a side"},
		// d = 0.1 ms; each side's variance (2·0.1²)/1 = 0.02, pooled 0.02:
		// 15.697757·0.02/0.01 = 31.396, so 32.
		{"two each, noisy", reps("h", 1000, 1200), reps("h", 1100, 1300), 32, "a difference of 0.1 against a run-to-run standard deviation of 0.1414 needs about 32 runs a side"},
		// d = 1.2 − 1.0 = 0.2 ms; the candidates' variance (0.1² + 0 + 0.1²)/2
		// = 0.01, the lone base run adds nothing: 15.697757·0.01/0.04 = 3.92, so 4.
		{"one against three", reps("h", 1000), reps("h", 1100, 1200, 1300), 4, "needs about 4 runs a side"},
		{"equal medians", reps("h", 1000, 1010), reps("h", 1000, 1010), 0, "equal medians"},
	} {
		c, err := analyze.Compare(tc.base, tc.cand)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		m := metric(t, c, "p99_ms")
		if m.Verdict != analyze.VerdictNoise || m.RunsNeeded != tc.needed || !strings.Contains(m.Noise, tc.noise) {
			t.Errorf("%s: p99 %q, %d runs needed (%q); want %q, %d, %q", tc.name, m.Verdict, m.RunsNeeded, m.Noise,
				analyze.VerdictNoise, tc.needed, tc.noise)
		}
		if !hasWarning(c.Warnings, "no difference can be told from noise") {
			t.Errorf("%s: warnings %q lack the rule", tc.name, c.Warnings)
		}
	}
	// A difference far inside the spread needs more runs than are worth
	// making: d = 0.00005, s² = (2·500²)/1 = 500,000.
	if n, why := analyze.RunsNeeded([]float64{0, 1000}, []float64{0.0001, 1000}); n != 1_000_000 || !strings.Contains(why, "as good as none") {
		t.Errorf("RunsNeeded of a difference far inside the spread: %d %q", n, why)
	}
}
