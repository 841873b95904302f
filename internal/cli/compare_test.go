package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// knee compare A/*/ --vs B/*/ as a shell gives it: three baseline runs at
// 1 ms and three candidate runs at 2 ms, every run after --vs a candidate.
// Mixed groups would put a 1 ms run among the candidates (or a 2 ms one
// among the baseline) and widen a range that must be a single value.
func TestCompareEveryRunAfterVsIsACandidate(t *testing.T) {
	dir := t.TempDir()
	var base, cand []string
	for i := range 3 {
		base = append(base, writeRun(t, filepath.Join(dir, "A"), testRun{id: "a" + string(rune('1'+i)), model: "open", latency: time.Millisecond}))
		cand = append(cand, writeRun(t, filepath.Join(dir, "B"), testRun{id: "b" + string(rune('1'+i)), model: "open", latency: 2 * time.Millisecond}))
	}
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"globs on both sides", append(append(append([]string{"compare"}, base...), "--vs"), cand...)},
		{"export at the end", append(append(append([]string{"compare"}, base...), "--vs"), append(cand, "--summary-export", "X")...)},
		{"--vs=", append(append([]string{"compare"}, base...), append([]string{"--vs=" + cand[0]}, cand[1:]...)...)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			export := filepath.Join(t.TempDir(), "cmp.json")
			args := append([]string(nil), tc.args...)
			for i, a := range args {
				if a == "X" {
					args[i] = export
				}
			}
			if args[len(args)-1] != export {
				args = append([]string{args[0], "--summary-export", export}, args[1:]...)
			}
			code, stdout, stderr := runKnee(t, args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if !strings.Contains(stdout, "baseline: 3 runs, candidate: 3 runs") {
				t.Errorf("stdout %q, want 3 runs each", stdout)
			}
			var cmp struct {
				BaseRuns      int `json:"base_runs"`
				CandidateRuns int `json:"candidate_runs"`
				Metrics       []struct {
					Metric string `json:"metric"`
					Base   struct {
						Median, Min, Max float64
						N                int
					} `json:"base"`
					Candidate struct {
						Median, Min, Max float64
						N                int
					} `json:"candidate"`
				} `json:"metrics"`
			}
			if err := json.Unmarshal(mustRead(t, export), &cmp); err != nil {
				t.Fatal(err)
			}
			found := false
			for _, m := range cmp.Metrics {
				if m.Metric != "p50_ms" {
					continue
				}
				found = true
				if m.Base.Min != 1 || m.Base.Max != 1 || m.Candidate.Min != 2 || m.Candidate.Max != 2 || m.Base.N != 3 || m.Candidate.N != 3 {
					t.Errorf("p50: base %+v, candidate %+v; want 1 ms ×3 and 2 ms ×3", m.Base, m.Candidate)
				}
			}
			if !found || cmp.BaseRuns != 3 || cmp.CandidateRuns != 3 {
				t.Errorf("comparison of %d and %d runs, p50 found %v", cmp.BaseRuns, cmp.CandidateRuns, found)
			}
		})
	}
}

// A run given twice, or on both sides, is refused with exit 2: a comparison
// of a run with itself proves nothing.
func TestCompareRefusesARunGivenTwice(t *testing.T) {
	dir := t.TempDir()
	a := writeRun(t, dir, testRun{id: "a", model: "open", latency: time.Millisecond})
	b := writeRun(t, dir, testRun{id: "b", model: "open", latency: time.Millisecond})
	for _, args := range [][]string{
		{"compare", a, "--vs", b, a},
		{"compare", a, a + "/", "--vs", b},
		{"compare", a, "--vs", b, filepath.Join(dir, ".", "b")},
	} {
		code, _, stderr := runKnee(t, args...)
		if code != ExitUsage || !strings.Contains(stderr, "given twice") {
			t.Errorf("knee %s: exit %d, stderr %q; want exit 2 saying a run is given twice", strings.Join(args, " "), code, stderr)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"compare", a, b}, "--vs"},
		{[]string{"compare", "--vs", a, b}, "no baseline"},
		{[]string{"compare", a, "--vs", b, "--vs", dir}, "--vs given twice"},
		{[]string{"compare", a, "--vs", b, "--frobnicate"}, "--frobnicate"},
	} {
		code, _, stderr := runKnee(t, tc.args...)
		if code != ExitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("knee %s: exit %d, stderr %q; want exit 2 naming %q", strings.Join(tc.args, " "), code, stderr, tc.want)
		}
	}
}

// knee report of runs that are not repetitions of one test (a closed and an
// open run, another scenario, another target) refuses with the reason and
// exit 2; repetitions are reported with their median and range.
func TestReportRefusesRunsThatAreNotRepetitions(t *testing.T) {
	dir := t.TempDir()
	open1 := writeRun(t, dir, testRun{id: "open1", model: "open", latency: time.Millisecond})
	open2 := writeRun(t, dir, testRun{id: "open2", model: "open", latency: 2 * time.Millisecond})
	closed := writeRun(t, dir, testRun{id: "closed", model: "closed", latency: time.Millisecond})
	other := writeRun(t, dir, testRun{id: "other", model: "open", scenario: "browse", latency: time.Millisecond})
	elsewhere := writeRun(t, dir, testRun{id: "elsewhere", model: "open", target: "http://127.0.0.1:1/authors", latency: time.Millisecond})
	for _, tc := range []struct {
		second string
		want   string
	}{
		{closed, "constant-vus, closed"},
		{other, "browse"},
		{elsewhere, "/authors"},
	} {
		code, stdout, stderr := runKnee(t, "report", open1, tc.second)
		if code != ExitUsage || !strings.Contains(stderr, "not repetitions") || !strings.Contains(stderr, tc.want) || stdout != "" {
			t.Errorf("knee report %s %s: exit %d, stderr %q; want exit 2 saying why (%q) and no report", open1, tc.second, code, stderr, tc.want)
		}
	}
	code, stdout, stderr := runKnee(t, "report", open1, open2)
	// p50 of 1 ms and 2 ms: median 1.5, range 1 to 2.
	if code != 0 || !strings.Contains(stdout, "| p50 | 1.50ms | [1.00ms–2.00ms] |") {
		t.Errorf("knee report of two repetitions: exit %d, stderr %q, stdout %q", code, stderr, stdout)
	}
}

// compareGroups reads whatever a shell passes: it never panics, never puts
// one word on both sides, and keeps every run word it accepts.
func FuzzCompareGroups(f *testing.F) {
	f.Add("a b --vs c d", false)
	f.Add("--vs=a b --summary-export x", true)
	f.Add("a --vs --vs b", false)
	f.Add("a -x --vs b", false)
	f.Fuzz(func(t *testing.T, line string, vsFirst bool) {
		args := strings.Fields(line)
		base, cand, _, err := compareGroups(args, vsFirst)
		if err != nil {
			return
		}
		if len(base) == 0 || len(cand) == 0 {
			t.Fatalf("%q accepted with %d baseline and %d candidate runs", line, len(base), len(cand))
		}
		seen := map[string]bool{}
		for _, r := range append(append([]string(nil), base...), cand...) {
			if seen[sameRunKey(r)] {
				t.Fatalf("%q: %s accepted twice", line, r)
			}
			seen[sameRunKey(r)] = true
		}
	})
}

// One run a side, p99 1.916 against 1.909 ms (1.00×): knee compare says no
// difference can be told from noise, for every metric, and a ratio whose
// baseline is 0 (error rate 0/0, dropped iterations 0/0) prints "-", not
// 0.00×.
func TestCompareOneRunASideIsNoise(t *testing.T) {
	dir := t.TempDir()
	base := writeRun(t, dir, testRun{id: "a", model: "open", latency: 1916 * time.Microsecond})
	cand := writeRun(t, dir, testRun{id: "b", model: "open", latency: 1909 * time.Microsecond})
	code, stdout, stderr := runKnee(t, "compare", base, "--vs", cand)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if strings.Contains(stdout, "real difference") || strings.Contains(stdout, "within run-to-run spread") || strings.Contains(stdout, "0.00×") {
		t.Errorf("stdout has a verdict or a 0/0 ratio:\n%s", stdout)
	}
	rows := map[string][]string{}
	for _, line := range strings.Split(stdout, "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			rows[f[0]] = f
		}
	}
	for metric, ratio := range map[string]string{"p99_ms": "1.00×", "rate": "1.00×", "error_rate": "-", "dropped_iterations": "-"} {
		f := rows[metric]
		// metric, two "median [min – max]" cells of four fields each, the ratio
		if len(f) < 10 || f[9] != ratio || !strings.Contains(strings.Join(f[10:], " "), "cannot be told from noise (one run a side") {
			t.Errorf("%s row %q: want ratio %s and no verdict but noise", metric, f, ratio)
		}
	}
	if !strings.Contains(stdout, "no difference can be told from noise") {
		t.Errorf("stdout lacks the rule for the runs needed:\n%s", stdout)
	}
}
