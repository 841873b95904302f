package dashboard

import (
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/knee-dev/knee/internal/cdptest"
	"github.com/knee-dev/knee/k6script"
	"github.com/knee-dev/knee/runner"
)

// TestDashboardScriptChartsShown runs a k6 script of exactly 12 iterations
// (shared-iterations, 2 VUs, each iteration one request and a 250 ms
// sleep) with the dashboard open in headless chromium: the page shows the
// iteration rate and duration and the request phases charts with their
// titles and drawn lines,
// the windows it was sent add up to the script's 12 iterations, no
// iteration lasts less than its sleep, and the hover reads the rate of the
// window under the cursor.
func TestDashboardScriptChartsShown(t *testing.T) {
	if testing.Short() {
		t.Skip("a k6 script's run in a browser; skipped in -short")
	}
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok")) }))
	defer target.Close()
	script := filepath.Join(t.TempDir(), "iters.js")
	src := `import http from 'k6/http';
import { sleep } from 'k6';
export const options = { scenarios: { s: { executor: 'shared-iterations', vus: 2, iterations: 12 } } };
export default function () { http.get(__ENV.BASE + '/'); sleep(0.25); }
`
	if err := os.WriteFile(script, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := k6script.Load(t.Context(), script, k6script.Config{Env: map[string]string{"BASE": target.URL}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	plan, err := s.Plan(k6script.Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	opt := runner.Options{Dir: filepath.Join(t.TempDir(), "run"), SkipEnvironment: true, Interval: 500 * time.Millisecond}
	srv, err := Start(Options{Addr: "127.0.0.1:0", Dir: opt.Dir, Interval: opt.Interval})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	opt.OnRecord = srv.Add
	b := cdptest.Start(t)
	b.Navigate(srv.URL())
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	res, err := runner.ExecuteScript(ctx, s, plan, opt)
	if err != nil {
		t.Fatal(err)
	}
	srv.Finish(res.Run.Dir, "")
	if !b.WaitFor(`document.body.hasAttribute('data-done')`, 10*time.Second) {
		t.Fatal("the page never said the run finished")
	}
	var data struct {
		N        int64
		Min      float64
		Rate     float64
		At       float64
		Windows  int
		Drawn    string
		Errors   string
		Sections []struct {
			Shown       bool
			Title, Path string
		}
	}
	// The numbers the page was sent, and what it shows for them.
	err = b.Eval(`fetch('/data').then(function (r) { return r.json(); }).then(function (s) {
		var P = s.charts.time.points, n = 0, min = Infinity, busiest = P[0];
		P.forEach(function (p) {
			n += p.iterations || 0;
			if (p.iteration_ms) { min = Math.min(min, p.iteration_ms.p50); }
			if ((p.iteration_rate || 0) > (busiest.iteration_rate || 0)) { busiest = p; }
		});
		var at = (busiest.start_s + busiest.end_s) / 2;
		window.kneeCharts.group.cursor(at);
		return { N: n, Min: min, Rate: busiest.iteration_rate, At: at, Windows: P.length,
			Drawn: document.body.getAttribute('data-charts-drawn'), Errors: String(document.body.getAttribute('data-errors')),
			Sections: ['chart-iterations', 'chart-iteration-duration', 'chart-phases'].map(function (id) {
				var f = document.getElementById(id), p = f.querySelector('path[data-series]');
				return { Shown: !f.hidden && f.getBoundingClientRect().height > 0, Title: f.querySelector('svg text.title').textContent,
					Path: p ? p.getAttribute('d') : '' };
			}) };
	})`, &data)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("page: %d iterations in %d windows, shortest p50 %g ms, busiest %g/s at %g s; %s charts drawn", data.N, data.Windows, data.Min, data.Rate, data.At, data.Drawn)
	if data.N != 12 {
		t.Errorf("the page was sent %d iterations, want the script's 12", data.N)
	}
	// Each iteration sleeps 250 ms: none can be shorter (3 significant digits).
	if data.Min < 249.75 {
		t.Errorf("an iteration p50 of %g ms, shorter than the 250 ms every iteration sleeps", data.Min)
	}
	// The window is the run's (analyze.ChartWindow: whole intervals, its last cut short).
	for i, want := range []string{"Iterations per second per ", "Iteration duration per ", "Request phases per "} {
		sec := data.Sections[i]
		if !sec.Shown || !strings.HasPrefix(sec.Title, want) || !strings.Contains(sec.Path, "L") {
			t.Errorf("chart %q: shown %v, path %q; want shown as %q… with a drawn line", sec.Title, sec.Shown, sec.Path, want)
		}
	}
	// Latency, throughput, send lag is not measured (closed model), errors,
	// status codes, VUs, data, iteration rate and duration, request phases.
	if data.Drawn != "9" || data.Errors != "null" {
		t.Errorf("%s charts drawn (errors %s), want 9 and none", data.Drawn, data.Errors)
	}
	hover := b.String(`document.getElementById('chart-iterations').getAttribute('data-hover')`)
	_, val, _ := strings.Cut(hover, "iterations per second: ")
	num, _, _ := strings.Cut(val, " ")
	if v, err := strconv.ParseFloat(num, 64); err != nil || math.Abs(v-data.Rate) > 1e-5*data.Rate { // six significant digits shown
		t.Errorf("hover at %g s reads %q, want the window's %g iterations/s", data.At, hover, data.Rate)
	}
	if errs := b.Errors(); len(errs) > 0 {
		t.Errorf("browser errors:\n%s", strings.Join(errs, "\n"))
	}
}
