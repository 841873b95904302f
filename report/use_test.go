package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/knee-dev/knee/analyze"
	"github.com/knee-dev/knee/record"
	"github.com/knee-dev/knee/use"
)

// The article's 400 req/s step, written out by hand in the table's format.
func TestCurveTable(t *testing.T) {
	var b bytes.Buffer
	err := CurveTable(&b, []analyze.Step{
		{OfferedRate: 300, Rate: 299.5, LatencyMS: record.Latencies{P50: 1.4, P95: 4, P99: 13.9, Max: 21.1}, BusyVUs: 2},
		{OfferedRate: 400, Rate: 252, LatencyMS: record.Latencies{P50: 2.2, P95: 1600, P99: 2100, Max: 3000},
			DroppedIterations: 1094, Errors: 3, ErrorsByClass: map[string]int64{"timeout": 2, "reset": 1}, BusyVUs: 812},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "offered/s  achieved/s     p50     p95     p99     max  dropped  errors  busy VUs  error classes\n" +
		"      300       299.5  1.40ms  4.00ms  13.9ms  21.1ms        0       0         2  -\n" +
		"      400       252.0  2.20ms   1.60s   2.10s   3.00s     1094       3       812  timeout=2 reset=1\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

// The same two steps on terminals of several widths, laid out by hand: the
// full table is 9+10+4×6+7+6+8+17 = 81 columns of cells and 9×2 of
// padding, 99 in all, so it fits 99 columns and not 98. Without the error
// classes it is 64+8×2 = 80: the narrow form fits an 80-column terminal
// with every header and number whole, and the classes follow on a line.
func TestCurveTableWidths(t *testing.T) {
	steps := []analyze.Step{
		{OfferedRate: 300, Rate: 299.5, LatencyMS: record.Latencies{P50: 1.4, P95: 4, P99: 13.9, Max: 21.1}, BusyVUs: 2},
		{OfferedRate: 400, Rate: 252, LatencyMS: record.Latencies{P50: 2.2, P95: 1600, P99: 2100, Max: 3000},
			DroppedIterations: 1094, Errors: 3, ErrorsByClass: map[string]int64{"timeout": 2, "reset": 1}, BusyVUs: 812},
	}
	full := "offered/s  achieved/s     p50     p95     p99     max  dropped  errors  busy VUs  error classes\n" +
		"      300       299.5  1.40ms  4.00ms  13.9ms  21.1ms        0       0         2  -\n" +
		"      400       252.0  2.20ms   1.60s   2.10s   3.00s     1094       3       812  timeout=2 reset=1\n"
	narrow := "offered/s  achieved/s     p50     p95     p99     max  dropped  errors  busy VUs\n" +
		"      300       299.5  1.40ms  4.00ms  13.9ms  21.1ms        0       0         2\n" +
		"      400       252.0  2.20ms   1.60s   2.10s   3.00s     1094       3       812\n" +
		"error classes at 400 req/s: timeout=2 reset=1\n"
	for _, tc := range []struct {
		width int // 0: a file or a pipe
		want  string
	}{
		{0, full},
		{120, full},
		{99, full},   // exactly the full table's width
		{98, narrow}, // one short of it
		{80, narrow}, // exactly the narrow form's width
	} {
		var b bytes.Buffer
		if err := CurveTable(Fit(&b, tc.width), steps); err != nil {
			t.Fatal(err)
		}
		if b.String() != tc.want {
			t.Errorf("width %d: got\n%s\nwant\n%s", tc.width, b.String(), tc.want)
		}
	}
}

func TestCurveFindings(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    analyze.CurveSummary
		want []string
	}{
		{"knee and collapse", analyze.CurveSummary{
			Knee:     analyze.Knee{LastHealthyRate: 300, FirstUnhealthyRate: 400, Reason: "at 400 req/s p95 1.6s above 20ms"},
			Collapse: &analyze.Collapse{AtRate: 500, Rate: 12},
			USL:      &analyze.USL{Sigma: 0.1, Kappa: 0.01, Lambda: 50, PeakN: 9.487, PeakRate: 260, R2: 0.95},
			Capacity: "The knee lies between 300 and 400 req/s.",
		}, []string{
			"knee:      between 300 and 400 req/s; at 400 req/s p95 1.6s above 20ms\n",
			"collapse:  at 500 req/s offered only 12 req/s completed (under 80 % of the best rate before it)\n",
			"USL fit:   σ=0.1 κ=0.01 λ=50 req/s, peak 260 req/s at N=9.487 (R²=0.950)\n",
			"capacity:  The knee lies between 300 and 400 req/s.\n",
		}},
		{"no knee, no fit", analyze.CurveSummary{
			Knee:    analyze.Knee{LastHealthyRate: 300, Reason: "every step was healthy up to 300 req/s"},
			USLNote: "too few points",
		}, []string{
			"knee:      no knee found: every step was healthy up to 300 req/s\n",
			"collapse:  none",
			"USL fit:   no ceiling: too few points\n",
			"capacity:  -\n",
		}},
	} {
		var b bytes.Buffer
		if err := CurveFindings(&b, tc.s); err != nil {
			t.Fatal(err)
		}
		for _, w := range tc.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s: output lacks %q:\n%s", tc.name, w, b.String())
			}
		}
	}
}

// useSamples: the target CPU at 0.2 and 0.4 of a 0.5-core limit over two
// samples (mean 0.3 cores = 60 %), a pool always 100 % busy with 2 s/s of
// waiting and a database probe that failed.
func useSamples() []use.Sample {
	cpu := func(at time.Duration, cores float64) use.Sample {
		return use.Sample{At: at, Probe: "target-cpu", Readings: []use.Reading{
			{Resource: use.TargetCPU, Metric: use.MetricCPUCores, Kind: use.Info, Value: cores, Unit: use.UnitCores},
			{Resource: use.TargetCPU, Metric: use.MetricCPULimit, Kind: use.Info, Value: 0.5, Unit: use.UnitCores},
			{Resource: use.TargetCPU, Metric: use.MetricCPUUtilization, Kind: use.Utilization, Value: cores / 0.5, Unit: use.UnitFraction},
		}}
	}
	pool := func(at time.Duration) use.Sample {
		return use.Sample{At: at, Probe: "metrics", Readings: []use.Reading{
			{Resource: use.ConnPool, Metric: use.MetricPoolUtil, Kind: use.Utilization, Value: 1, Unit: use.UnitFraction},
			{Resource: use.ConnPool, Metric: use.MetricPoolWaitTime, Kind: use.Saturation, Value: 2, Unit: use.UnitSecondsPerSec},
		}}
	}
	return []use.Sample{cpu(time.Second, 0.2), pool(time.Second), cpu(2*time.Second, 0.4), pool(2 * time.Second),
		{At: 2 * time.Second, Probe: "postgres", Error: "connection refused"}}
}

func TestUSETableAndVerdict(t *testing.T) {
	tab := use.Summarize(useSamples(), 0, 0)
	tab.Label = "USE table, whole run"
	var b bytes.Buffer
	if err := USE(&b, tab); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, w := range []string{
		"USE table, whole run\n",
		"target CPU       0.30 of 0.50 cores (60%), max 80%",
		"connection pool  connections in use 100%",
		"waiting for a connection 2 s/s",
		"problem: probe postgres failed in 1 samples: connection refused",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("USE table lacks %q:\n%s", w, out)
		}
	}
	if strings.Index(out, "target CPU") > strings.Index(out, "connection pool") {
		t.Errorf("rows out of scan order:\n%s", out)
	}

	v := use.Judge([]use.Table{tab}, nil)
	b.Reset()
	if err := Verdict(&b, v); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{
		"verdict: bottleneck: connection pool",
		"  evidence: connection pool connections in use 100% (at or over 90%)\n",
		"  evidence: connection pool waiting for a connection 2 s/s (over 0.05 s/s)\n",
		"  ruled out: target CPU: 0.30 of 0.50 cores (60%), max 80%\n",
		"  not measured, so not ruled out: Go scheduler, HTTP server, database, machine, generator\n",
	} {
		if !strings.Contains(b.String(), w) {
			t.Errorf("verdict lacks %q:\n%s", w, b.String())
		}
	}

	r := USEReport(tab, v)
	if r.Verdict != v.Summary || len(r.Rows) != len(tab.Rows) {
		t.Fatalf("USEReport %+v", r)
	}
	if got := r.Rows[0]; got.Resource != "target CPU" || got.Utilization != "0.30 of 0.50 cores (60%), max 80%" {
		t.Errorf("first row %+v", got)
	}
}

// The per-step matrix shows only measured resources, utilization / saturation.
func TestStepUSE(t *testing.T) {
	s := useSamples()
	steps := []use.Table{use.Summarize(s, time.Second, 2*time.Second), use.Summarize(s, 2*time.Second, 3*time.Second)}
	steps[0].Label, steps[1].Label = "step 1: 100 req/s", "step 2: 200 req/s"
	var b bytes.Buffer
	if err := StepUSE(&b, steps); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d lines, want title, header and 2 steps:\n%s", len(lines), b.String())
	}
	if f := strings.Fields(lines[1]); strings.Join(f, " ") != "step target CPU connection pool" {
		t.Errorf("header %q: want only the measured resources", lines[1])
	}
	// 0.2/0.5 = 40 %, no throttling reading: "-"; pool 100 % and 2 s/s.
	if f := strings.Join(strings.Fields(lines[2]), " "); f != "step 1: 100 req/s 40% / - 100% / 2 s/s" {
		t.Errorf("step 1 %q", f)
	}
	if f := strings.Join(strings.Fields(lines[3]), " "); f != "step 2: 200 req/s 80% / - 100% / 2 s/s" {
		t.Errorf("step 2 %q", f)
	}
}

// A step of an import counted no VUs: its busy VUs print as "-", not 0.
func TestCurveTableBusyVUsOfImports(t *testing.T) {
	var b strings.Builder
	steps := []analyze.Step{{OfferedRate: 100, BusyVUs: 0, NoVUs: true}, {OfferedRate: 200, BusyVUs: 3}}
	if err := CurveTable(&b, steps); err != nil {
		t.Fatal(err)
	}
	rows := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(rows) != 3 {
		t.Fatalf("table:\n%s", b.String())
	}
	busyCol := func(row string) string { return strings.Fields(row)[8] }
	if got := busyCol(rows[1]); got != "-" {
		t.Errorf("import step's busy VUs %q, want -", got)
	}
	if got := busyCol(rows[2]); got != "3" {
		t.Errorf("knee step's busy VUs %q, want 3", got)
	}
}

// What a run with --target-pid only shows (the user's first hour): the
// target's CPU from /proc at 5.0 % then 6.5 % with no cgroup to throttle, the
// machine and knee measured, nothing else. Worked by hand: the mean CPU is
// 5.75 % ("5.8%", max "6.5%"); each verdict line says one thing, and no name
// is followed by its own label ("target CPU: CPU ...").
func TestVerdictAndUSEOfATargetPID(t *testing.T) {
	r := func(res use.Resource, metric string, kind use.Kind, v float64, unit string) use.Reading {
		return use.Reading{Resource: res, Metric: metric, Kind: kind, Value: v, Unit: unit}
	}
	noCgroup := use.Reading{Resource: use.TargetCPU, Metric: use.MetricThrottledPeriods, Kind: use.Saturation, Unit: use.UnitFraction, NotMeasured: "target is in no cgroup of its own"}
	var samples []use.Sample
	for i, cpu := range []float64{0.05, 0.065} {
		samples = append(samples, use.Sample{At: time.Duration(i) * time.Second, Probe: "p", Readings: []use.Reading{
			r(use.TargetCPU, use.MetricCPUUtilization, use.Utilization, cpu, use.UnitFraction), noCgroup,
			r(use.Machine, use.MetricOtherUtil, use.Utilization, 0.2, use.UnitFraction),
			r(use.Generator, use.MetricGeneratorUtil, use.Utilization, 0.02, use.UnitFraction),
		}})
	}
	tab := use.Summarize(samples, 0, 0)
	tab.Label = "USE table, whole run"
	var b bytes.Buffer
	if err := USE(Fit(&b, 80), tab); err != nil {
		t.Fatal(err)
	}
	// Fitted to 80 columns by hand: the cells are 15 + 48 ("not measured:
	// no probe reads the connection pool") + 47 ("not measured: target is
	// in no cgroup of its own") + 12 wide, 122 where 80 − 2 − 3×2 = 72 fit;
	// the two widest give way by turns, the first from 48 to 22, the
	// second from 47 to 23, and their cells wrap at spaces.
	want := "USE table, whole run\n" +
		"  resource         utilization             saturation               errors\n" +
		"  target CPU       CPU 5.8%, max 6.5%      not measured: target is  not measured\n" +
		"                                           in no cgroup of its own\n" +
		"  Go scheduler     not measured: no probe  -                        -\n" +
		"                   reads the Go scheduler\n" +
		"  HTTP server      not measured: no probe  -                        -\n" +
		"                   reads the HTTP server\n" +
		"  connection pool  not measured: no probe  -                        -\n" +
		"                   reads the connection\n" +
		"                   pool\n" +
		"  database         not measured: no probe  -                        -\n" +
		"                   reads the database\n" +
		"  machine          CPU of other processes  not measured             not measured\n" +
		"                   20%\n" +
		"  generator        CPU 2.0%                not measured             not measured\n"
	if b.String() != want {
		t.Errorf("USE table:\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	tab.Label = "step 1: 100 req/s"
	if err := Verdict(&b, use.JudgeSteps([]use.Table{tab}, nil)); err != nil {
		t.Fatal(err)
	}
	want = "verdict: no resource saturated in 1 steps, up to step 1: 100 req/s: the target kept up\n" +
		"  ruled out: target CPU: 5.8%, max 6.5%\n" +
		"  ruled out: machine: CPU of other processes 20%\n" +
		"  ruled out: generator: CPU 2.0%\n" +
		"  not measured, so not ruled out: Go scheduler, HTTP server, connection pool, database\n"
	if b.String() != want {
		t.Errorf("verdict:\n%s\nwant\n%s", b.String(), want)
	}
}
