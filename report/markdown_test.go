package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/knee-dev/knee/analyze"
	"github.com/knee-dev/knee/rundir"
)

var updateGolden = flag.Bool("update", false, "rewrite testdata/*.golden files")

func mustThresholds(t *testing.T, exprs ...string) []analyze.Threshold {
	t.Helper()
	ts, err := analyze.ParseThresholds(exprs)
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

// reportCases are the fixtures every report test renders.
func reportCases(t *testing.T) []struct {
	name string
	in   Input
} {
	t.Helper()
	open := openRun(t, "open-1", 1e6) // 1 ms steps
	rep2 := openRun(t, "open-2", 2e6) // 2 ms steps
	openIn, err := Build([]*rundir.Dir{open, rep2}, BuildOptions{
		Goal:       "Does the catalogue hold 100 req/s with p99 under 40 ms?",
		Data:       "5 ISBNs from books.txt",
		Action:     "Add an index on books(isbn) and repeat three times.",
		Thresholds: mustThresholds(t, "p(99)<40ms", "errors<2%", "{name:GET /books/{isbn}}p(95)<10ms"),
		USE:        fixtureUSE(),
	})
	if err != nil {
		t.Fatal(err)
	}
	closedIn, err := Build([]*rundir.Dir{closedRun(t)}, BuildOptions{Goal: "How much does a 5 s freeze cost?"})
	if err != nil {
		t.Fatal(err)
	}
	steps, plan := stepsRun(t)
	stepsIn, err := Build([]*rundir.Dir{steps}, BuildOptions{Plan: &plan})
	if err != nil {
		t.Fatal(err)
	}
	return []struct {
		name string
		in   Input
	}{{"open", openIn}, {"closed", closedIn}, {"steps", stepsIn}}
}

func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *updateGolden {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./report -run %s -update to create it)", err, t.Name())
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file; got:\n%s", path, got)
	}
}

func TestMarkdownGolden(t *testing.T) {
	for _, tc := range reportCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := Markdown(&buf, tc.in); err != nil {
				t.Fatal(err)
			}
			checkGolden(t, tc.name+".golden.md", buf.Bytes())
		})
	}
}

// TestMarkdownHandWorked checks the numbers that matter against values
// worked out by hand from the fixtures, so a golden file updated in haste
// cannot make a wrong number right.
func TestMarkdownHandWorked(t *testing.T) {
	cases := reportCases(t)
	want := map[string][]string{
		"open": {
			// GET /books: 1..50 ms, 20 of each. p50 = rank 500 = 25 ms, bucket
			// [24992, 25007] µs; p95 = rank 950 = 48 ms; p99 = rank 990 = 50 ms
			// (bucket [49984, 50015]). 1000 requests in 20 s = 50/s.
			"| browse · GET /books | 1000 | 50.0/s | 25.0ms | 48.0ms | 50.0ms |",
			// GET /books/{isbn}: 999 × 2 ms and one 900 ms (bucket [899584, 900095] µs).
			"| browse · GET /books/{isbn} | 1000 | 50.0/s | 2.00ms | 2.00ms | 2.00ms | 2.00ms | 900.1ms | - | - |",
			// All 2000: ranks 21..1039 are 2 ms, so p50 = 2 ms; p95 = rank 1900:
			// 20v+999 >= 1900 gives v = 46 ms; p99 = rank 1980 gives 50 ms.
			// 20 errors of 2000 = 1.00 %; 3 dropped.
			"| all | 2000 | 100.0/s | 2.00ms | 46.0ms | 50.0ms | 50.0ms | 900.1ms | 20 (1.00 %) | 3 |",
			"| `p(99)<40ms` | 50.0ms | **FAIL** |",
			"| `errors<2%` | 1.00 % | pass |",
			"| `{name:GET /books/{isbn}}p(95)<10ms` | 2.00ms | pass |",
			"**FAIL** (2 of 3 thresholds passed)",
			// The repetition doubles GET /books: its all-p99 is 100 ms
			// (20v+999 >= 1980 with v even ms gives 100 ms, bucket [99968, 100031]).
			// Labelled without a unit: the values carry theirs.
			"| p99 | 75.0ms | [50.0ms–100.0ms] |",
			"2 run(s): open-1, open-2.",
			"only 2 run(s)",
			"78-88 of 100 \\| in use",
			"- Load average (1/5/15 min): before 0.12 0.34 0.56, after 1.50 0.90 0.60",
			"- Generator: 0.50 s CPU (250.0 µs per request), peak RSS 48.0 MB",
			"`cpu.cfs_period_us` = `100000`, `cpu.cfs_quota_us` = `50000`",
			"postgres (pid 42) 0.75 cores, bookstore (pid 7) 0.50 cores",
			"Verdict: **no sign — open model**",
		},
		"closed": {
			// 15 s × 198 + 20 = 2990 requests in 20 s = 149.5/s; expected
			// 20 VUs / (1 ms + 100 ms) = 198.0/s.
			"| closed · GET /books/{isbn} | 2990 | 149.5/s | 1.00ms | 1.00ms | 1.00ms | 4.98s | 4.98s | 0 (0.00 %) | - |",
			"achieved 149.5 req/s against 198.0 req/s",
			"Verdict: **likely coordinated omission**",
			// Each 4.98 s value (bucket top 4980735 µs) adds the values
			// 4980735 - k·101000 >= 101000: k = 1..48, so 2990 + 20·48 = 3950.
			"| raw | 2990 | 20 |",
			"| corrected | 3950 |",
			"expected interval 101.0ms (median response + think)",
			"- Fault: freeze of pid:7 at 10s for 5s (cgroup-v1-freezer)",
			"Dropped iterations: not applicable",
			"_Not measured: no USE scan was taken",
			"only 1 run(s)",
		},
		"steps": {
			// Hold of step i is seconds 5i+1 .. 5i+4: 4 intervals.
			"| 100/s | 100/s | 2.00ms | 2.00ms | 2.00ms | 0 | 0 |",
			"| 200/s | 200/s | 3.00ms | 3.00ms | 3.00ms | 0 | 0 |",
			// 800 ms is in bucket [799744, 800255] µs; 4 s × 90 dropped.
			"| 300/s | 210/s | 800.3ms | 800.3ms | 800.3ms | 360 | 0 |",
			"- Knee: between 200 and 300 req/s; at 300 req/s achieved 210 req/s",
		},
	}
	// What a report must not say: a unit in a label whose values carry
	// another, and a count of what it calls not applicable.
	wantNot := map[string][]string{
		"open":   {"_ms |"},
		"closed": {"_ms |", "| dropped_iterations |"},
	}
	for _, tc := range cases {
		var buf bytes.Buffer
		if err := Markdown(&buf, tc.in); err != nil {
			t.Fatal(err)
		}
		for _, w := range want[tc.name] {
			if !strings.Contains(buf.String(), w) {
				t.Errorf("%s: report lacks %q", tc.name, w)
			}
		}
		for _, w := range wantNot[tc.name] {
			if strings.Contains(buf.String(), w) {
				t.Errorf("%s: report says %q", tc.name, w)
			}
		}
	}
}

// TestMarkdownEmptyInput: a hand-filled Input with nothing measured still
// renders every section, saying what is missing.
func TestMarkdownEmptyInput(t *testing.T) {
	var buf bytes.Buffer
	if err := Markdown(&buf, Input{}); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"# knee report\n", "## Goal", "_Not stated: say which question", "## Load", "## Environment",
		"## Result", "## Bottleneck", "_Not measured", "## Action", "_No thresholds were set", "_Not checked._",
		"_Not given: this report covers one run"} {
		if !strings.Contains(buf.String(), w) {
			t.Errorf("empty report lacks %q:\n%s", w, buf.String())
		}
	}
}

type failWriter struct{ n int }

func (f *failWriter) Write(p []byte) (int, error) {
	if f.n--; f.n < 0 {
		return 0, errors.New("disk full")
	}
	return len(p), nil
}

func TestMarkdownWriteError(t *testing.T) {
	if err := Markdown(&failWriter{n: 3}, Input{}); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("Markdown on a failing writer: %v", err)
	}
}

func TestBuildErrors(t *testing.T) {
	if _, err := Build(nil, BuildOptions{}); err == nil {
		t.Error("Build(nil) succeeded")
	}
	bad := &analyze.StepPlan{Steps: -1}
	if _, err := Build([]*rundir.Dir{openRun(t, "x", 1e6)}, BuildOptions{Plan: bad}); err == nil {
		t.Error("Build with an invalid plan succeeded")
	}
}

// A ramping executor's load reads from its settings: the start and the
// peak per second, whatever the time unit.
func TestScenarioLoadRamping(t *testing.T) {
	for _, tc := range []struct {
		name string
		sc   rundir.Scenario
		want string
	}{
		{"constant rate", rundir.Scenario{TargetRate: 250}, "250 req/s"},
		{"ramping arrival rate per minute", rundir.Scenario{Executor: "ramping-arrival-rate", Config: json.RawMessage(
			`{"startRate":600,"timeUnit":"1m0s","stages":[{"duration":"10s","target":6000},{"duration":"10s","target":1200}]}`)},
			"ramping 10 → 100 req/s (peak), 2 stages"},
		{"ramping VUs", rundir.Scenario{Executor: "ramping-vus", VUs: 30, Config: json.RawMessage(
			`{"startVUs":2,"stages":[{"duration":"5s","target":30},{"duration":"5s","target":0}],"think":"0s"}`)},
			"ramping 2 → 30 VUs (peak), 2 stages"},
		{"constant VUs", rundir.Scenario{VUs: 8, Config: json.RawMessage(`{"vus":8,"duration":"5s"}`)}, "8 VUs"},
		{"nothing known", rundir.Scenario{}, "-"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := scenarioLoad(tc.sc); got != tc.want {
				t.Errorf("scenarioLoad = %q, want %q", got, tc.want)
			}
		})
	}
}
