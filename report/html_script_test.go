package report

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/knee-dev/knee/internal/cdptest"
	"github.com/knee-dev/knee/record"
	"github.com/knee-dev/knee/rundir"
)

// iterationRun is 4 s of a k6 script's scenario "default": ten requests a
// second, and iterations (the iteration_duration series, written to
// latency.hlog and read back): 10 of 200 ms in second 0, 5 of 400 ms and
// 6 of 1 s in second 1, none in second 2, 20 of 100 ms in second 3. Its
// requests' phases are timed in every second but the last: blocked 3 ms,
// connecting 1 ms, TLS 2 ms, sending 50 µs, waiting 4 ms, receiving
// 500 µs in each, but waiting 9 ms in second 1.
func iterationRun(t *testing.T) *rundir.Dir {
	meta := rundir.Meta{ID: "iter", Source: "knee", Model: "closed", Scenarios: []rundir.Scenario{{
		Name: "default", Executor: "constant-vus", Model: "closed", Requests: []string{getName},
	}}}
	iters := []map[time.Duration]int64{
		{200 * time.Millisecond: 10},
		{400 * time.Millisecond: 5, time.Second: 6},
		nil,
		{100 * time.Millisecond: 20},
	}
	var ivs []fixtureInterval
	for i, it := range iters {
		iv := fixtureInterval{
			hists: map[record.Key]*record.Histogram{
				{Metric: record.Latency, Scenario: "default", Name: getName}: fixtureHist(map[time.Duration]int64{5 * time.Millisecond: 10}),
			},
			counters: map[string]record.Counters{"default": fixtureCounters(10, 0, 0)},
			extra:    map[string]rundir.IntervalCounters{"default": {VUs: 10, BusyVUs: 10}},
		}
		if it != nil {
			iv.hists[record.Key{Metric: record.Trend, Scenario: "default", Name: record.IterationDuration}] = fixtureHist(it)
		}
		phases := []time.Duration{3 * time.Millisecond, time.Millisecond, 2 * time.Millisecond, 50 * time.Microsecond, 4 * time.Millisecond, 500 * time.Microsecond}
		if i == 1 {
			phases[4] = 9 * time.Millisecond
		}
		for j, name := range record.PhaseNames() {
			if i < 3 {
				iv.hists[record.Key{Metric: record.Trend, Scenario: "default", Name: name}] = fixtureHist(map[time.Duration]int64{phases[j]: 10})
			}
		}
		ivs = append(ivs, iv)
	}
	return writeFixture(t, meta, ivs)
}

// TestHTMLScriptChartsShown opens the report of a k6 script's run in
// headless chromium: the iteration rate and duration charts are shown
// with their titles and a drawn line each, and the cursor at 1.5 s reads
// second 1's numbers, worked out by hand: 11 iterations/s; p50 of 11
// durations is the 6th smallest (1 s), p99 and max the 11th (1 s). The
// phases chart is shown too, its hover giving second 1's waiting (9 ms).
func TestHTMLScriptChartsShown(t *testing.T) {
	in, err := Build([]*rundir.Dir{iterationRun(t)}, BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(file, renderHTML(t, in), 0o644); err != nil {
		t.Fatal(err)
	}
	b := cdptest.Start(t)
	b.Navigate("file://" + file)
	// Over time: latency, throughput, errors, status, VUs, data, iteration
	// rate and duration, phases (no send lag in a closed model); then the distribution.
	if !b.WaitFor(`document.body.getAttribute('data-charts-drawn') === '10'`, 20*time.Second) {
		t.Fatalf("charts not drawn: data-charts-drawn=%s errors=%s", b.String(`document.body.getAttribute('data-charts-drawn')`),
			b.String(`document.body.getAttribute('data-errors')`))
	}
	if err := b.Eval(`window.kneeCharts.group.cursor(1.5), true`, new(bool)); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		fig, title, series string
		want               map[string]float64 // hover row name → value (relative 0.2 %: 3 significant digits)
	}{
		{"chart-iterations", "Iterations per second per 1 s window", "iterations",
			map[string]float64{"iterations per second": 11}},
		{"chart-iteration-duration", "Iteration duration per 1 s window", "p99",
			map[string]float64{"p50 per window": 1000, "p99 per window": 1000, "max per window": 1000}},
		{"chart-phases", "Request phases per 1 s window: p95 of each", "phase_waiting",
			map[string]float64{"waiting (time to first byte)": 9, "connecting": 1, "receiving": 0.5}},
	} {
		t.Run(tc.fig, func(t *testing.T) {
			var got struct {
				Hidden        bool
				Title, Hover  string
				Vertices, Pcs int
			}
			err := b.Eval(`(function(){
				var f = document.getElementById('`+tc.fig+`'), p = f.querySelector('path[data-series="`+tc.series+`"]');
				var d = p ? p.getAttribute('d') : '';
				return { Hidden: f.hidden || f.getBoundingClientRect().height === 0, Title: f.querySelector('svg text.title').textContent,
					Hover: f.getAttribute('data-hover') || '', Vertices: (d.match(/[ML]/g) || []).length, Pcs: (d.match(/M/g) || []).length };
			})()`, &got)
			if err != nil {
				t.Fatal(err)
			}
			if got.Hidden || got.Title != tc.title {
				t.Errorf("shown %v with title %q, want shown with %q", !got.Hidden, got.Title, tc.title)
			}
			// Seconds 0, 1 and 3 have iterations, flat over each: six vertices
			// in two pieces (the rate is 0 in second 2, not missing, so one);
			// phases were timed in seconds 0 to 2, one piece.
			wantPcs := 2
			if tc.series != "p99" {
				wantPcs = 1
			}
			if got.Vertices < 6 || got.Pcs != wantPcs {
				t.Errorf("series %s: %d vertices in %d pieces, want 6 or more in %d", tc.series, got.Vertices, got.Pcs, wantPcs)
			}
			t.Logf("hover: %s", got.Hover)
			rows := map[string]string{}
			for _, part := range strings.Split(got.Hover, " | ")[1:] {
				if name, val, ok := strings.Cut(part, ": "); ok {
					rows[name] = val
				}
			}
			for name, want := range tc.want {
				// "11 iterations/s", or each phase's "p50 9.00… , p95 …": the first number.
				num, _, _ := strings.Cut(strings.TrimPrefix(rows[name], "p50 "), " ")
				num = strings.TrimSuffix(num, ",")
				v, err := strconv.ParseFloat(num, 64)
				if err != nil || math.Abs(v-want) > want*0.002 {
					t.Errorf("hover %q: %s = %q, want %g", got.Hover, name, rows[name], want)
				}
			}
		})
	}
	if errs := b.Errors(); len(errs) > 0 {
		t.Errorf("browser errors: %s", strings.Join(errs, "\n"))
	}
}
