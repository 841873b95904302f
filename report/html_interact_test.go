package report

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/knee-dev/knee/internal/cdptest"
)

// plotRect is where the plot area of a chart is on screen, after scrolling it into view.
type plotRect struct{ X, Y, W, H float64 }

func overlayRect(t *testing.T, b *cdptest.Browser, fig string) plotRect {
	t.Helper()
	var r plotRect
	err := b.Eval(`(function(){var o=document.querySelector('#`+fig+` .overlay');o.scrollIntoView({block:'center'});
		var r=o.getBoundingClientRect();return {X:r.x,Y:r.y,W:r.width,H:r.height};})()`, &r)
	if err != nil || r.W <= 0 {
		t.Fatalf("%s: no plot area on screen (%v, %+v)", fig, err, r)
	}
	return r
}

// exact is how the page prints a measured value on hover: six significant digits.
func exact(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }

// TestHTMLInteractive drives the stepped run's report in headless chromium
// over the DevTools protocol: a hover over the latency chart shows the
// window's exact p99 and moves the shared cursor onto the throughput chart;
// the wheel and a drag zoom every chart over time alike and change the
// axis; reset brings the whole run back; nothing logs an error.
func TestHTMLInteractive(t *testing.T) {
	var in Input
	for _, tc := range reportCases(t) {
		if tc.name == "steps" {
			in = tc.in
		}
	}
	ws := in.Timeline.Points
	if len(ws) < 2 {
		t.Fatalf("steps case has %d windows, want 2 or more", len(ws))
	}
	file := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(file, renderHTML(t, in), 0o644); err != nil {
		t.Fatal(err)
	}
	b := cdptest.Start(t)
	b.Navigate("file://" + file)
	if !b.WaitFor(`document.body.getAttribute('data-charts-drawn') === '9'`, 20*time.Second) {
		t.Fatalf("charts not drawn: data-charts-drawn=%s errors=%s", b.String(`document.body.getAttribute('data-charts-drawn')`),
			b.String(`document.body.getAttribute('data-errors')`))
	}
	end := ws[len(ws)-1].EndS

	// Hover in the middle of the first window.
	r := overlayRect(t, b, "chart-timeline")
	frac := (ws[0].StartS + ws[0].EndS) / 2 / end
	b.Mouse("mouseMoved", r.X+frac*r.W, r.Y+r.H/2, 0)
	hover := b.String(`document.getElementById('chart-timeline').getAttribute('data-hover')`)
	t.Logf("hover: %s", hover)
	for _, want := range []string{"p99 per window: " + exact(ws[0].LatencyMS.P99) + " ms", "p50 per window: " + exact(ws[0].LatencyMS.P50) + " ms"} {
		if !strings.Contains(hover, want) {
			t.Errorf("hover over the first window shows %q, want it to contain %q", hover, want)
		}
	}
	if vis := b.String(`document.querySelector('#chart-timeline .tip').getAttribute('visibility')`); vis != "visible" {
		t.Errorf("tooltip visibility %q after a hover", vis)
	}
	// The same cursor on the throughput chart: the first window's achieved rate.
	rate := b.String(`document.getElementById('chart-rate').getAttribute('data-hover')`)
	if want := "achieved: " + exact(ws[0].Rate) + " req/s"; !strings.Contains(rate, want) {
		t.Errorf("shared cursor: throughput chart shows %q, want %q", rate, want)
	}

	xRange := func(fig string) string {
		return b.String(`document.querySelector('#` + fig + ` svg.chart-svg').getAttribute('data-x-range')`)
	}
	firstTick := func() string { return b.String(`document.querySelector('#chart-timeline .xtick').textContent`) }
	full := xRange("chart-timeline")
	if want := "0-" + exact(end); full != want {
		t.Fatalf("x range before zoom %q, want %q", full, want)
	}
	ticksBefore := b.String(`Array.from(document.querySelectorAll('#chart-timeline .xtick')).map(function(e){return e.textContent}).join(',')`)

	// Wheel up over the middle: zoom in around it, on every chart over time.
	r = overlayRect(t, b, "chart-timeline")
	b.Mouse("mouseWheel", r.X+r.W/2, r.Y+r.H/2, -120)
	zoomed := xRange("chart-timeline")
	lo, hi := rangeOf(t, zoomed)
	if !(lo > 0 && hi < end && hi-lo < end*0.9) {
		t.Errorf("after the wheel the x range is %q, want narrower than [0, %g]", zoomed, end)
	}
	for _, fig := range []string{"chart-rate", "chart-errors", "chart-vus", "chart-status", "chart-data"} {
		if got := xRange(fig); got != zoomed {
			t.Errorf("%s x range %q, want the shared %q", fig, got, zoomed)
		}
	}
	if after := b.String(`Array.from(document.querySelectorAll('#chart-timeline .xtick')).map(function(e){return e.textContent}).join(',')`); after == ticksBefore {
		t.Errorf("zoom left the axis ticks as they were: %s", after)
	}

	// Reset, then drag across the first fifth of the run.
	b.Eval(`document.querySelector('#chart-vus button.reset').click()`, nil)
	if got := xRange("chart-timeline"); got != full {
		t.Errorf("after reset the x range is %q, want %q", got, full)
	}
	r = overlayRect(t, b, "chart-timeline")
	b.Mouse("mousePressed", r.X+0.1*r.W, r.Y+r.H/2, 0)
	b.Mouse("mouseMoved", r.X+0.2*r.W, r.Y+r.H/2, 0)
	b.Mouse("mouseMoved", r.X+0.3*r.W, r.Y+r.H/2, 0)
	b.Mouse("mouseReleased", r.X+0.3*r.W, r.Y+r.H/2, 0)
	t.Logf("zoomed %s", zoomed)
	lo, hi = rangeOf(t, xRange("chart-vus"))
	t.Logf("drag [%g %g] tick %s", lo, hi, firstTick())
	if d := end * 0.02; lo < 0.1*end-d || lo > 0.1*end+d || hi < 0.3*end-d || hi > 0.3*end+d {
		t.Errorf("drag over 10%%..30%% of %g s zoomed to [%g, %g]", end, lo, hi)
	}
	if first := firstTick(); first == "0" {
		t.Errorf("after a drag to [%g, %g] the axis still starts at 0", lo, hi)
	}
	// The distribution chart is not over time: a hover shows the nearest point.
	r = overlayRect(t, b, "chart-distribution")
	b.Mouse("mouseMoved", r.X+2, r.Y+r.H/2, 0)
	if h := b.String(`document.getElementById('chart-distribution').getAttribute('data-hover')`); !strings.Contains(h, "p0 → ") {
		t.Errorf("hover at the left of the distribution shows %q, want the p0 point", h)
	}
	if errs := b.Errors(); len(errs) > 0 {
		t.Errorf("browser errors: %s", strings.Join(errs, "\n"))
	}
	if e := b.String(`document.body.getAttribute('data-errors')`); e != "null" {
		t.Errorf("script errors: %s", e)
	}
}

func rangeOf(t *testing.T, s string) (lo, hi float64) {
	t.Helper()
	a, c, ok := strings.Cut(s, "-")
	var err1, err2 error
	lo, err1 = strconv.ParseFloat(a, 64)
	hi, err2 = strconv.ParseFloat(c, 64)
	if !ok || err1 != nil || err2 != nil {
		t.Fatalf("x range %q is not lo-hi", s)
	}
	return lo, hi
}
