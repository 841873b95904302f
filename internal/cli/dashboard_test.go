package cli

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestRunDashboardFlag: an address that is not host:port is refused with
// exit 2 before any load; a run with --dashboard on a free loopback port says
// where the page is, and at the end where the run directory and the report
// it wrote are.
func TestRunDashboardFlag(t *testing.T) {
	for _, addr := range []string{"127.0.0.1", "no-port"} {
		code, _, stderr := runKnee(t, "run", "--rate", "10", "--duration", "1s", "--url", "http://127.0.0.1:1/", "--out", t.TempDir(), "--dashboard="+addr)
		if code != ExitUsage || !strings.Contains(stderr, "host:port") {
			t.Errorf("--dashboard=%s: exit %d, stderr %q; want exit 2 asking for host:port", addr, code, stderr)
		}
	}
	if code, _, stderr := runKnee(t, "run", "--rate", "10", "--duration", "1s", "--url", "http://127.0.0.1:1/", "--dashboard", "--repeat", "3"); code != ExitUsage || !strings.Contains(stderr, "--repeat") {
		t.Errorf("--dashboard with --repeat 3: exit %d, stderr %q", code, stderr)
	}

	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok")) }))
	defer srv.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0") // a free port for the dashboard
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	code, _, stderr := runKnee(t, "run", "--rate", "20", "--duration", "2s", "--url", srv.URL, "--out", t.TempDir(), "--quiet", "--dashboard="+addr)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "dashboard: http://"+addr+"/") {
		t.Errorf("stderr does not give the page's address %s:\n%s", addr, stderr)
	}
	m := regexp.MustCompile(`dashboard: run directory (\S+), report (\S+)`).FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("stderr does not say where the run and the report are:\n%s", stderr)
	}
	if m[2] != filepath.Join(m[1], "report.html") {
		t.Errorf("report %s, want report.html in the run directory %s", m[2], m[1])
	}
	page, err := os.ReadFile(m[2])
	if err != nil || !strings.Contains(string(page), "knee-data") {
		t.Errorf("the report %s is not an HTML report: %v", m[2], err)
	}
}

// TestRunScriptDashboard: knee run script.js --dashboard serves the page of
// the script's run, fed while it goes: during a 3 s k6 script run against a
// loopback server the page's data gains intervals and requests, and at the
// end stderr says where the run directory and its report are.
func TestRunScriptDashboard(t *testing.T) {
	if testing.Short() {
		t.Skip("a 3 s script run; skipped in -short")
	}
	var served atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		served.Add(1)
		w.Write([]byte("ok"))
	}))
	defer srv.Close()
	script := writeJS(t, `import http from 'k6/http';
import { sleep } from 'k6';
export const options = { vus: 2, duration: '3s' };
export default function () { http.get(__ENV.BASE + '/'); sleep(0.01); }
`)
	ln, err := net.Listen("tcp", "127.0.0.1:0") // a free port for the dashboard
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	type result struct {
		code           int
		stdout, stderr string
	}
	done := make(chan result, 1)
	go func() {
		code, out, errs := runKnee(t, "run", script, "-e", "BASE="+srv.URL, "--interval", "500ms", "--out", t.TempDir(), "--quiet", "--dashboard="+addr)
		done <- result{code, out, errs}
	}()
	// Live snapshots read while the run goes: intervals and requests so far.
	var live [][2]int64
	var res result
poll:
	for {
		select {
		case res = <-done:
			break poll
		case <-time.After(300 * time.Millisecond):
		}
		resp, err := http.Get("http://" + addr + "/data")
		if err != nil {
			continue // not listening yet
		}
		var snap struct {
			Status struct {
				Intervals int   `json:"intervals"`
				Requests  int64 `json:"requests"`
			} `json:"status"`
		}
		err = json.NewDecoder(resp.Body).Decode(&snap)
		resp.Body.Close()
		if err == nil && snap.Status.Intervals > 0 {
			live = append(live, [2]int64{int64(snap.Status.Intervals), snap.Status.Requests})
		}
	}
	if res.code != ExitOK {
		t.Fatalf("exit %d:\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	t.Logf("live (intervals, requests): %v; served %d", live, served.Load())
	if len(live) < 2 || live[0][0] >= live[len(live)-1][0] || live[0][1] >= live[len(live)-1][1] {
		t.Errorf("the page's data did not grow while the script ran: %v", live)
	}
	for _, l := range live {
		if l[1] <= 0 || l[1] > served.Load() {
			t.Errorf("live snapshot counts %d requests; the server saw %d in all", l[1], served.Load())
		}
	}
	m := regexp.MustCompile(`dashboard: run directory (\S+), report (\S+)`).FindStringSubmatch(res.stderr)
	if m == nil || m[2] != filepath.Join(m[1], "report.html") {
		t.Fatalf("stderr does not say where the run and its report are:\n%s", res.stderr)
	}
	if page, err := os.ReadFile(m[2]); err != nil || !strings.Contains(string(page), "knee-data") {
		t.Errorf("the report %s is not an HTML report: %v", m[2], err)
	}
}

// freeAddr is a free loopback port's address.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// serving starts knee with args in the background; stop interrupts it (as
// Ctrl-C does) and returns its exit code and stderr.
func serving(t *testing.T, args ...string) (exited <-chan struct{}, stop func() (int, string)) {
	t.Helper()
	sig := make(chan os.Signal, 2)
	done := make(chan struct{})
	var code int
	var errb bytes.Buffer
	go func() {
		defer close(done)
		code = Main(Env{Args: args, Stdout: io.Discard, Stderr: &errb, Getenv: func(string) string { return "" }, Signals: sig})
	}()
	return done, func() (int, string) {
		sig <- os.Interrupt
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Fatal("knee did not stop within 30 s of an interrupt")
		}
		return code, errb.String()
	}
}

// finalData polls the dashboard at addr until its data says the run is
// done, and returns the run's summary as the page has it.
func finalData(t *testing.T, addr string, exited <-chan struct{}) (requests int64) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			t.Fatal("knee exited before the page said the run was done")
		case <-time.After(200 * time.Millisecond):
		}
		res, err := http.Get("http://" + addr + "/data")
		if err != nil {
			continue
		}
		var snap struct {
			Done *struct{ RunDir string }  `json:"done"`
			Run  *struct{ Requests int64 } `json:"run"`
		}
		err = json.NewDecoder(res.Body).Decode(&snap)
		res.Body.Close()
		if err == nil && snap.Done != nil && snap.Run != nil {
			return snap.Run.Requests
		}
	}
	t.Fatal("the page never said the run was done")
	return 0
}

// TestDashboardStaysAfterRun: with --dashboard-linger the page is still
// served after the run, with the run's final summary, until knee is
// interrupted; knee report --serve shows a finished run the same way.
func TestDashboardStaysAfterRun(t *testing.T) {
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok")) }))
	defer target.Close()
	out := t.TempDir()
	addr := freeAddr(t)
	exited, stop := serving(t, "run", "--rate", "20", "--duration", "1s", "--url", target.URL, "--out", out, "--quiet",
		"--dashboard="+addr, "--dashboard-linger=2m")
	requests := finalData(t, addr, exited)
	select {
	case <-exited:
		t.Fatal("knee exited with the page while --dashboard-linger=2m had not passed")
	default:
	}
	code, stderr := stop()
	if code != ExitOK || !strings.Contains(stderr, "the final summary stays at http://"+addr+"/ for 2m0s") {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	m := regexp.MustCompile(`dashboard: run directory (\S+),`).FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("stderr does not say where the run is:\n%s", stderr)
	}
	b, err := os.ReadFile(filepath.Join(m[1], "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	var meta struct{ Summary struct{ Requests int64 } }
	if err := json.Unmarshal(b, &meta); err != nil {
		t.Fatal(err)
	}
	if requests != meta.Summary.Requests || requests == 0 {
		t.Errorf("the page's final summary has %d requests, run.json %d", requests, meta.Summary.Requests)
	}

	addr2 := freeAddr(t)
	exited, stop = serving(t, "report", "--serve="+addr2, m[1])
	if got := finalData(t, addr2, exited); got != meta.Summary.Requests {
		t.Errorf("knee report --serve shows %d requests, run.json %d", got, meta.Summary.Requests)
	}
	if code, stderr := stop(); code != ExitOK {
		t.Errorf("knee report --serve: exit %d:\n%s", code, stderr)
	}
	for _, args := range [][]string{{"report", "--serve=no-port", m[1]}, {"report", "--serve", m[1], m[1]}} {
		if code, _, stderr := runKnee(t, args...); code != ExitUsage {
			t.Errorf("%v: exit %d, want 2: %s", args, code, stderr)
		}
	}
}
