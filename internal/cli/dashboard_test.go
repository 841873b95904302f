package cli

import (
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
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
