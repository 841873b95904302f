package cli

import (
	"encoding/json"
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
