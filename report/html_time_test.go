package report

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/knee-dev/knee/internal/cdptest"
	"github.com/knee-dev/knee/record"
	"github.com/knee-dev/knee/rundir"
)

// freezeRun is 20 s at 100 req/s whose target was frozen from 5 to 10 s:
// nothing completes in seconds 5–9, and the 500 requests sent meanwhile
// complete in second 10, after 0.5 to 5 s. Its settings are a long ramp,
// whose JSON must wrap on the page.
func freezeRun(t *testing.T) *rundir.Dir {
	var stages []map[string]any
	for i := range 12 {
		stages = append(stages, map[string]any{"duration": "1s", "target": 100 + i})
	}
	cfg, _ := json.Marshal(map[string]any{"executor": "ramping-arrival-rate", "startRate": 100, "timeUnit": "1s",
		"stages": stages, "preAllocatedVUs": 10, "maxVUs": 1000, "gracefulStop": "30s"})
	meta := rundir.Meta{ID: "freeze", Source: "knee", Model: "open", Scenarios: []rundir.Scenario{{
		Name: "browse", Executor: "ramping-arrival-rate", Model: "open", Requests: []string{getName}, Config: cfg,
	}}, Faults: []rundir.Fault{
		{Kind: "freeze", At: 5 * time.Second, Target: "pid:4242", Method: "sigstop"},
		{Kind: "thaw", At: 10 * time.Second, Target: "pid:4242", Method: "sigstop"},
	}}
	key := record.Key{Metric: record.Latency, Scenario: "browse", Name: getName}
	var ivs []fixtureInterval
	for i := range 20 {
		iv := fixtureInterval{hists: map[record.Key]*record.Histogram{}, counters: map[string]record.Counters{},
			extra: map[string]rundir.IntervalCounters{"browse": {TargetRate: 100, VUs: 10, BusyVUs: 2}}}
		switch {
		case i >= 5 && i < 10:
		case i == 10:
			late := map[time.Duration]int64{}
			for j := 1; j <= 500; j++ {
				late[time.Duration(j)*10*time.Millisecond] = 1
			}
			iv.hists[key] = fixtureHist(late)
			iv.counters["browse"] = fixtureCounters(500, 0, 0)
		default:
			iv.hists[key] = fixtureHist(map[time.Duration]int64{2 * time.Millisecond: 100})
			iv.counters["browse"] = fixtureCounters(100, 0, 0)
		}
		ivs = append(ivs, iv)
	}
	return writeFixture(t, meta, ivs)
}

// pixel is the colour the page shows at page coordinates (x, y).
func pixel(t *testing.T, b *cdptest.Browser, x, y float64) (r, g, bl uint32) {
	t.Helper()
	res, err := b.Call("Page.captureScreenshot", map[string]any{"format": "png", "captureBeyondViewport": true,
		"clip": map[string]any{"x": x, "y": y, "width": 1, "height": 1, "scale": 1}})
	if err != nil {
		t.Fatal(err)
	}
	var shot struct{ Data string }
	if err := json.Unmarshal(res, &shot); err != nil {
		t.Fatal(err)
	}
	raw, err := base64.StdEncoding.DecodeString(shot.Data)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	var c = img.At(img.Bounds().Min.X, img.Bounds().Min.Y)
	r, g, bl, _ = c.RGBA()
	return r >> 8, g >> 8, bl >> 8
}

// TestHTMLFreezeShown opens the report of a 20 s run frozen at 5–10 s in
// headless chromium and checks what is on screen: the latency chart has a
// point a second (15 windows with requests), each series is one connected
// line where it has values, a shaded span covers 5–10 s on the time axis
// with its label, and the settings JSON wraps inside the page.
func TestHTMLFreezeShown(t *testing.T) {
	in, err := Build([]*rundir.Dir{freezeRun(t)}, BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(file, renderHTML(t, in), 0o644); err != nil {
		t.Fatal(err)
	}
	b := cdptest.Start(t)
	b.Navigate("file://" + file)
	// Over time: latency, throughput, errors, status, VUs, data (no send lag
	// recorded); then the distribution.
	if !b.WaitFor(`document.body.getAttribute('data-charts-drawn') === '7'`, 20*time.Second) {
		t.Fatalf("charts not drawn: data-charts-drawn=%s errors=%s", b.String(`document.body.getAttribute('data-charts-drawn')`),
			b.String(`document.body.getAttribute('data-errors')`))
	}
	r := overlayRect(t, b, "chart-timeline")
	var geo struct {
		Vertices, Pieces, Xs int
		Fault                struct{ X, Y, W, H float64 }
		Label                string
		LabelW               float64
		ScrollW, ClientW     float64
		CodeRight, Right     float64
	}
	err = b.Eval(`(function(){
		var p = document.querySelector('#chart-timeline path[data-series="p99"]'), d = p.getAttribute('d');
		var xs = {}; (d.match(/[ML][-0-9.]+/g) || []).forEach(function(s){ xs[s.slice(1)] = 1; });
		var f = document.querySelector('#chart-timeline rect.fault').getBoundingClientRect();
		var l = document.querySelector('#chart-timeline text.faultlabel');
		var code = document.querySelector('td code').getBoundingClientRect();
		return { Vertices: (d.match(/[ML]/g) || []).length, Pieces: (d.match(/M/g) || []).length, Xs: Object.keys(xs).length,
			Fault: {X: f.x, Y: f.y, W: f.width, H: f.height}, Label: l.textContent, LabelW: l.getBBox().width,
			ScrollW: document.documentElement.scrollWidth, ClientW: document.documentElement.clientWidth, CodeRight: code.right,
			Right: document.body.getBoundingClientRect().right - parseFloat(getComputedStyle(document.body).paddingRight) };
	})()`, &geo)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("geometry %+v, plot %+v", geo, r)
	// 15 windows with requests, two vertices each (a window is flat over its second).
	if geo.Vertices < 30 || geo.Xs < 16 {
		t.Errorf("latency p99 has %d vertices at %d x positions, want a point a second: 30 and 16 or more", geo.Vertices, geo.Xs)
	}
	// Values in 0–5 s and 10–20 s: two connected pieces, the freeze's gap between them.
	if geo.Pieces != 2 {
		t.Errorf("latency p99 is drawn in %d pieces, want 2 (before and after the seconds without replies)", geo.Pieces)
	}
	px := func(s float64) float64 { return r.X + s/20*r.W }
	if d := geo.Fault.X - px(5); d < -1.5 || d > 1.5 {
		t.Errorf("fault span starts at x=%.1f, want %.1f (5 s)", geo.Fault.X, px(5))
	}
	if d := geo.Fault.X + geo.Fault.W - px(10); d < -1.5 || d > 1.5 {
		t.Errorf("fault span ends at x=%.1f, want %.1f (10 s)", geo.Fault.X+geo.Fault.W, px(10))
	}
	if d := geo.Fault.H - r.H; d < -1.5 || d > 1.5 {
		t.Errorf("fault span is %.1f px high, the plot %.1f", geo.Fault.H, r.H)
	}
	if geo.Label != "freeze pid:4242" || geo.LabelW <= 0 {
		t.Errorf("fault label %q (%.0f px wide), want %q shown", geo.Label, geo.LabelW, "freeze pid:4242")
	}
	// What is shown: inside the span near the top of the plot the page is
	// amber-tinted (blue well below red); at 2.5 s, outside it, it is not.
	var scroll struct{ X, Y float64 }
	if err := b.Eval(`({X: window.scrollX, Y: window.scrollY})`, &scroll); err != nil {
		t.Fatal(err)
	}
	y := scroll.Y + r.Y + 4
	ir, _, ib := pixel(t, b, scroll.X+px(7.5), y)
	or, _, ob := pixel(t, b, scroll.X+px(2.5), y)
	t.Logf("pixel inside the span rgb(%d,_,%d), outside rgb(%d,_,%d)", ir, ib, or, ob)
	if !(int(ir)-int(ib) > 30) {
		t.Errorf("inside the fault span the page shows rgb(%d,_,%d): not shaded", ir, ib)
	}
	if int(or)-int(ob) > 10 {
		t.Errorf("outside the fault span the page shows rgb(%d,_,%d): shaded", or, ob)
	}
	if geo.ScrollW > geo.ClientW || geo.CodeRight > geo.Right+0.5 {
		t.Errorf("settings run off the page: document %v px wide in a %v px window, settings end at %v, the page's text at %v",
			geo.ScrollW, geo.ClientW, geo.CodeRight, geo.Right)
	}
	if e := b.String(`document.body.getAttribute('data-errors')`); e != "null" {
		t.Errorf("script errors: %s", e)
	}
	if errs := b.Errors(); len(errs) > 0 {
		t.Errorf("browser errors: %s", strings.Join(errs, "\n"))
	}
}

// TestHTMLScenariosShown: a run of two scenarios draws each one's p99 and
// rate over time, one connected line per scenario, with the scenario's
// name in the legend; the slow scenario's line lies above the fast one's.
func TestHTMLScenariosShown(t *testing.T) {
	meta := rundir.Meta{ID: "two", Source: "knee", Model: "open", Scenarios: []rundir.Scenario{
		{Name: "browse", Executor: "constant-arrival-rate", Model: "open", TargetRate: 100, Requests: []string{listName}},
		{Name: "order", Executor: "constant-arrival-rate", Model: "open", TargetRate: 20, Requests: []string{getName}},
	}}
	var ivs []fixtureInterval
	for range 10 {
		ivs = append(ivs, fixtureInterval{
			hists: map[record.Key]*record.Histogram{
				{Metric: record.Latency, Scenario: "browse", Name: listName}: fixtureHist(map[time.Duration]int64{2 * time.Millisecond: 100}),
				{Metric: record.Latency, Scenario: "order", Name: getName}:   fixtureHist(map[time.Duration]int64{300 * time.Millisecond: 20}),
			},
			counters: map[string]record.Counters{"browse": fixtureCounters(100, 0, 0), "order": fixtureCounters(20, 0, 0)},
			extra:    map[string]rundir.IntervalCounters{"browse": {TargetRate: 100, VUs: 5}, "order": {TargetRate: 20, VUs: 5}},
		})
	}
	in, err := Build([]*rundir.Dir{writeFixture(t, meta, ivs)}, BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(file, renderHTML(t, in), 0o644); err != nil {
		t.Fatal(err)
	}
	b := cdptest.Start(t)
	b.Navigate("file://" + file)
	// Over time: the six charts and two per scenario; then the distributions.
	if !b.WaitFor(`document.body.getAttribute('data-charts-drawn') === '9'`, 20*time.Second) {
		t.Fatalf("charts not drawn: data-charts-drawn=%s errors=%s", b.String(`document.body.getAttribute('data-charts-drawn')`),
			b.String(`document.body.getAttribute('data-errors')`))
	}
	var lines []struct {
		Pieces int
		Top    float64
		H      float64
	}
	err = b.Eval(`(function(){var fig=document.getElementById('chart-scenario-latency');fig.scrollIntoView();
		return Array.from(fig.querySelectorAll('path')).filter(function(p){return p.getAttribute('fill')==='none'}).map(function(p){
			var r=p.getBoundingClientRect();return {Pieces:(p.getAttribute('d').match(/M/g)||[]).length, Top:r.y, H:fig.getBoundingClientRect().height};});})()`, &lines)
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 2 {
		t.Fatalf("per-scenario latency chart draws %d lines, want 2 (browse, order)", len(lines))
	}
	for i, l := range lines {
		if l.Pieces != 1 || l.H <= 0 {
			t.Errorf("scenario line %d: %d pieces in a %.0f px chart, want one connected line shown", i, l.Pieces, l.H)
		}
	}
	if !(lines[1].Top < lines[0].Top) { // screen y grows downwards: order (300 ms) above browse (2 ms)
		t.Errorf("order's p99 line (y %.0f) is not above browse's (y %.0f)", lines[1].Top, lines[0].Top)
	}
	legend := b.String(`document.querySelector('#chart-scenario-rate svg').textContent`)
	if !strings.Contains(legend, "browse") || !strings.Contains(legend, "order") {
		t.Errorf("per-scenario throughput chart's text %q lacks the scenario names", legend)
	}
}
