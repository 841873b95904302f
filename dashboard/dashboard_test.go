package dashboard

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/knee-dev/knee/fault"
	"github.com/knee-dev/knee/guard"
	"github.com/knee-dev/knee/internal/cdptest"
	"github.com/knee-dev/knee/runner"
	"github.com/knee-dev/knee/scenario"
)

func TestCheckAddr(t *testing.T) {
	for _, tc := range []struct {
		addr string
		ok   bool
	}{
		{"127.0.0.1:5665", true},
		{"[::1]:5665", true},
		{"localhost:5665", true},
		{":5665", true},          // every interface: served behind the token
		{"192.0.2.1:5665", true}, // likewise
		{"127.0.0.1", false},     // no port
		{"[::1", false},
	} {
		if err := CheckAddr(tc.addr); (err == nil) != tc.ok {
			t.Errorf("CheckAddr(%q) = %v, want ok=%v", tc.addr, err, tc.ok)
		}
	}
}

// A dashboard that needs a token (as every one beyond loopback does)
// answers nothing without it, sets a cookie for the page's own requests
// once given ?token=, and serves its page under a policy that lets only the
// page's own inline code run.
func TestDashboardToken(t *testing.T) {
	srv, err := Start(Options{Addr: "127.0.0.1:0", Dir: t.TempDir(), Token: "s3cret-token"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if !strings.HasSuffix(srv.URL(), "/?token=s3cret-token") {
		t.Errorf("URL %q does not carry the token", srv.URL())
	}
	base := strings.TrimSuffix(srv.URL(), "?token=s3cret-token")
	for _, path := range []string{"", "data", "events", "?token=wrong"} {
		res, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusUnauthorized {
			t.Errorf("GET /%s without the token: %d, want 401", path, res.StatusCode)
		}
	}
	res, err := http.Get(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.Contains(string(page), "<script>") {
		t.Fatalf("GET with the token: %d", res.StatusCode)
	}
	csp := res.Header.Get("Content-Security-Policy")
	if !strings.Contains(csp, "default-src 'none'") || strings.Count(csp, "'sha256-") != 3 || strings.Contains(csp, "unsafe-inline") {
		t.Errorf("policy %q: want default-src 'none' and the page's two scripts and one style by hash, no unsafe-inline", csp)
	}
	var cookie *http.Cookie
	for _, c := range res.Cookies() {
		if c.Name == guard.CookieName {
			cookie = c
		}
	}
	if cookie == nil || !cookie.HttpOnly {
		t.Fatalf("no HttpOnly cookie after ?token=: %v", res.Cookies())
	}
	req, _ := http.NewRequest("GET", base+"data", nil)
	req.AddCookie(cookie)
	if res, err = http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Errorf("GET /data with the cookie: %d, want 200", res.StatusCode)
	}
}

// attr reads a numeric attribute of <body>.
func attr(b *cdptest.Browser, name string) int {
	n, _ := strconv.Atoi(b.String(`document.body.getAttribute('` + name + `') || '0'`))
	return n
}

// live runs cfg into a fresh run directory with the dashboard open in a
// headless chromium; check is called while the run goes.
func live(t *testing.T, cfg *scenario.Config, opt runner.Options, during func(b *cdptest.Browser, runDone <-chan struct{})) (*cdptest.Browser, *runner.Result) {
	t.Helper()
	opt.Dir = filepath.Join(t.TempDir(), "run")
	opt.SkipEnvironment = true
	srv, err := Start(Options{Addr: "127.0.0.1:0", Dir: opt.Dir, Interval: opt.Interval})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	opt.OnRecord = srv.Add
	b := cdptest.Start(t)
	b.Navigate(srv.URL())
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	runDone := make(chan struct{})
	var res *runner.Result
	var runErr error
	go func() {
		defer close(runDone)
		res, runErr = runner.Execute(ctx, cfg, opt)
	}()
	during(b, runDone)
	<-runDone
	if runErr != nil {
		t.Fatalf("run: %v", runErr)
	}
	srv.Finish(res.Dir, filepath.Join(res.Dir, "report.html"))
	if !b.WaitFor(`document.body.hasAttribute('data-done')`, 10*time.Second) {
		t.Error("the page never said the run finished")
	}
	if got := b.String(`document.getElementById('done').textContent`); !strings.Contains(got, res.Dir) || !strings.Contains(got, "report.html") {
		t.Errorf("end of run says %q, want the run directory %s and the report", got, res.Dir)
	}
	// The final summary is on screen (laid out, not only in the DOM) with the run's total.
	var final struct {
		H    float64
		Text string
	}
	if err := b.Eval(`(function(){var f=document.getElementById('final');f.scrollIntoView();
		return {H: f.getBoundingClientRect().height, Text: document.getElementById('final-requests').textContent};})()`, &final); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("%d in ", res.Summary.Requests); final.H <= 0 || !strings.HasPrefix(final.Text, want) {
		t.Errorf("final summary %.0f px high saying %q, want it shown starting %q", final.H, final.Text, want)
	}
	for _, u := range b.URLs() {
		if !cdptest.Loopback(u) {
			t.Errorf("the page requested %s: off loopback", u)
		}
	}
	if errs := b.Errors(); len(errs) > 0 {
		t.Errorf("browser errors:\n%s", strings.Join(errs, "\n"))
	}
	if e := b.String(`document.body.getAttribute('data-errors')`); e != "null" {
		t.Errorf("script errors: %s", e)
	}
	return b, res
}

// TestDashboardChartsGrow: during a 6 s open-model run against a loopback
// server, the page's charts gain points interval by interval.
func TestDashboardChartsGrow(t *testing.T) {
	if testing.Short() {
		t.Skip("a 6 s run in a browser; skipped in -short")
	}
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok")) }))
	defer target.Close()
	cfg, err := scenario.FromFlags(scenario.Flags{Executor: scenario.ConstantArrivalRate, Rate: 100, Duration: 6 * time.Second, URL: target.URL + "/"})
	if err != nil {
		t.Fatal(err)
	}
	var seen []int
	b, res := live(t, cfg, runner.Options{Interval: 500 * time.Millisecond}, func(b *cdptest.Browser, runDone <-chan struct{}) {
		for {
			select {
			case <-runDone:
				return
			case <-time.After(700 * time.Millisecond):
			}
			if n := attr(b, "data-points"); len(seen) == 0 || n != seen[len(seen)-1] {
				seen = append(seen, n)
			}
		}
	})
	t.Logf("points seen during the run: %v", seen)
	if dir := os.Getenv("KNEE_SCREENSHOT_DIR"); dir != "" { // for a look: KNEE_SCREENSHOT_DIR=/tmp/shots
		if png, err := b.Screenshot(); err == nil {
			os.WriteFile(filepath.Join(dir, "dashboard.png"), png, 0o644)
		}
	}
	grew := 0
	for i := 1; i < len(seen); i++ {
		if seen[i] > seen[i-1] {
			grew++
		}
	}
	if grew < 3 {
		t.Errorf("the charts gained points %d times during the run (%v), want 3 or more", grew, seen)
	}
	ivs := res.Run.Intervals
	// 500 ms intervals are drawn in 1 s windows (analyze.ChartWindow: at least 1 s).
	// The run's last, partial interval may reach the page only with the run's end.
	want := int((ivs[len(ivs)-1].End - ivs[0].Start + time.Second - 1) / time.Second)
	// The last events travel on after the run returns: give them a moment.
	n := attr(b, "data-points")
	for deadline := time.Now().Add(5 * time.Second); n < want-1 && time.Now().Before(deadline); n = attr(b, "data-points") {
		time.Sleep(100 * time.Millisecond)
	}
	if n < want-1 || n > want {
		t.Errorf("at the end the latency chart has %d windows, want %d (or one less): one a second of the run's %d intervals of 500 ms", n, want, len(ivs))
	}
	if drawn := attr(b, "data-charts-drawn"); drawn != 7 {
		t.Errorf("%d charts drawn, want latency, throughput, send lag, errors, status codes, VUs and data over time", drawn)
	}
	// Lines, not dashes: each series of the latency chart is one connected path.
	var subpaths []int
	if err := b.Eval(`Array.from(document.querySelectorAll('#chart-timeline path[data-series]')).map(function(p){
		return (p.getAttribute('d').match(/M/g) || []).length; })`, &subpaths); err != nil {
		t.Fatal(err)
	}
	if len(subpaths) != 4 {
		t.Errorf("latency chart draws %d series, want p50, p95, p99 and max", len(subpaths))
	}
	for i, n := range subpaths {
		if n != 1 {
			t.Errorf("latency series %d is drawn as %d pieces, want one connected line", i, n)
		}
	}
	// The page shows the run's own numbers: the total of requests.
	if got, want := b.String(`document.getElementById('errors').textContent`), fmt.Sprintf("0 of %d requests", res.Summary.Requests); got != want {
		t.Errorf("errors line %q, want %q", got, want)
	}
	// Hover works on the live charts as in the report.
	var r struct{ X, Y, W, H float64 }
	if err := b.Eval(`(function(){var o=document.querySelector('#chart-timeline .overlay');o.scrollIntoView({block:'center'});var r=o.getBoundingClientRect();return {X:r.x,Y:r.y,W:r.width,H:r.height};})()`, &r); err != nil {
		t.Fatal(err)
	}
	b.Mouse("mouseMoved", r.X+r.W/2, r.Y+r.H/2, 0)
	if h := b.String(`document.getElementById('chart-rate').getAttribute('data-hover')`); !strings.Contains(h, "achieved: ") {
		t.Errorf("hover on the live latency chart shows %q on the throughput chart", h)
	}
}

const targetEnv = "KNEE_DASHBOARD_TEST_TARGET"

// TestDashboardTargetProcess is the freeze test's target when re-executed with targetEnv.
func TestDashboardTargetProcess(t *testing.T) {
	if os.Getenv(targetEnv) != "1" {
		t.Skip("the freeze test's target process; runs only when re-executed by it")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		time.Sleep(2 * time.Millisecond)
		w.Write([]byte("ok"))
	})}
	go srv.Serve(ln)
	fmt.Println(ln.Addr().String())
	os.Stdin.Read(make([]byte, 1)) // EOF: the parent test is gone
	srv.Close()
}

func startTarget(t *testing.T) (string, int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestDashboardTargetProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), targetEnv+"=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGCONT) // a failed run may have left it stopped
		stdin.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Scan()
		line <- strings.TrimSpace(sc.Text())
	}()
	select {
	case addr := <-line:
		return addr, cmd.Process.Pid
	case <-time.After(30 * time.Second):
		t.Fatal("the target process did not print its address within 30 s")
	}
	return "", 0
}

// TestDashboardShowsCOLive: a closed-model run whose target (a child
// process) is stopped with SIGSTOP for 2 s shows the coordinated-omission
// warning on the page while the run still goes.
func TestDashboardShowsCOLive(t *testing.T) {
	if testing.Short() {
		t.Skip("a 10 s run with a real freeze in a browser; skipped in -short")
	}
	addr, pid := startTarget(t)
	cfg, err := scenario.FromFlags(scenario.Flags{Executor: scenario.ConstantVUs, VUs: 5, Duration: 10 * time.Second, URL: "http://" + addr + "/"})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Faults = []scenario.Fault{{At: 3 * time.Second, Kind: scenario.FaultFreeze, For: 2 * time.Second}}
	freezer, err := fault.NewSignalFreezer(pid)
	if err != nil {
		t.Fatal(err)
	}
	var firedAt time.Duration
	var firstCO, early string
	start := time.Now()
	b, res := live(t, cfg, runner.Options{Interval: 500 * time.Millisecond, Target: freezer, FaultState: t.TempDir()},
		func(b *cdptest.Browser, runDone <-chan struct{}) {
			for {
				select {
				case <-runDone:
					return
				case <-time.After(200 * time.Millisecond):
				}
				if early == "" && b.String(`document.getElementById('co-warning').hidden`) == "false" {
					early = fmt.Sprintf("%.1f s: %s", time.Since(start).Seconds(), b.String(`document.getElementById('co-evidence').textContent`))
				}
				if firedAt == 0 && b.String(`document.getElementById('co-warning').hidden`) == "false" &&
					strings.Contains(b.String(`document.body.getAttribute('data-co')`), "stall") {
					// A loaded machine may show a quiet spell of its own
					// before the freeze; the freeze's is the one wanted.
					if ev := b.String(`document.getElementById('co-evidence').textContent`); freezeSpell.MatchString(ev) {
						firedAt, firstCO = time.Since(start), ev
					}
				}
			}
		})
	if firedAt == 0 {
		t.Fatalf("the stall warning with the freeze's quiet spell never appeared during the run (verdict at the end: %s; evidence: %s)", b.String(`document.getElementById('co-verdict').textContent`), b.String(`document.getElementById('co-evidence').textContent`))
	}
	t.Logf("first CO warning at %s", early)
	t.Logf("stall warning shown %.1f s after the start (freeze 3-5 s, run %.1f s): %s", firedAt.Seconds(), res.Summary.DurationS, firstCO)
	// A quiet interval is judged once the next interval is written (the
	// freeze starts at 3 s, intervals are 0.5 s); it must show before the 10 s run ends.
	if firedAt < 3500*time.Millisecond || firedAt > 9800*time.Millisecond {
		t.Errorf("the stall warning came at %s, want between 3.5 s (the freeze plus an interval) and the run's end (10 s)", firedAt)
	}
	if !freezeSpell.MatchString(firstCO) {
		t.Errorf("the live stall evidence %q has no quiet spell starting at the freeze (3 s)", firstCO)
	}
	// The freeze is a shaded span on the live latency chart, from the
	// freeze to the thaw the run recorded, with its label.
	var at [2]float64
	for _, f := range res.Run.Meta.Faults {
		switch f.Kind {
		case "freeze":
			at[0] = (f.At - res.Run.Intervals[0].Start).Seconds()
		case "thaw":
			at[1] = (f.At - res.Run.Intervals[0].Start).Seconds()
		}
	}
	var geo struct {
		X, W, PX, PW, Lo, Hi float64
		Label                string
	}
	if err := b.Eval(`(function(){var fig=document.getElementById('chart-timeline');fig.scrollIntoView();
		var f=fig.querySelector('rect.fault').getBoundingClientRect(), o=fig.querySelector('.overlay').getBoundingClientRect();
		var r=fig.querySelector('svg.chart-svg').getAttribute('data-x-range').split('-');
		return {X:f.x, W:f.width, PX:o.x, PW:o.width, Lo:+r[0], Hi:+r[1], Label:fig.querySelector('text.faultlabel').textContent};})()`, &geo); err != nil {
		t.Fatalf("no fault span on the live latency chart: %v", err)
	}
	px := func(s float64) float64 { return geo.PX + (s-geo.Lo)/(geo.Hi-geo.Lo)*geo.PW }
	t.Logf("freeze %.2f-%.2f s drawn at x %.1f-%.1f (want %.1f-%.1f), label %q", at[0], at[1], geo.X, geo.X+geo.W, px(at[0]), px(at[1]), geo.Label)
	if math.Abs(geo.X-px(at[0])) > 1.5 || math.Abs(geo.X+geo.W-px(at[1])) > 1.5 || !strings.HasPrefix(geo.Label, "freeze pid:") {
		t.Errorf("fault span at x %.1f-%.1f labelled %q, want %.1f-%.1f (the recorded freeze %.2f-%.2f s) labelled freeze pid:…",
			geo.X, geo.X+geo.W, geo.Label, px(at[0]), px(at[1]), at[0], at[1])
	}
}

// freezeSpell finds, in the stall signal's evidence, a quiet spell that
// starts at 3 s (the spells are listed "quiet spells: A–B s: …; C–D s: …").
var freezeSpell = regexp.MustCompile(`(quiet spells: |; )3–`)

// FuzzCheckAddr: whatever the string, an accepted address splits into
// host and port, and a non-loopback one gets a token from Start's guard.
func FuzzCheckAddr(f *testing.F) {
	for _, s := range []string{"127.0.0.1:5665", "[::1]:1", "localhost:80", "0.0.0.0:1", ":1", "[::ffff:127.0.0.1]:1", "127.1:1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, addr string) {
		if CheckAddr(addr) != nil {
			return
		}
		if _, _, err := net.SplitHostPort(addr); err != nil {
			t.Fatalf("accepted %q, which does not split: %v", addr, err)
		}
		g, err := guard.For(addr)
		if err != nil {
			t.Fatal(err)
		}
		if !guard.IsLoopback(addr) && g.Token() == "" {
			t.Fatalf("%q is beyond loopback but needs no token", addr)
		}
	})
}
