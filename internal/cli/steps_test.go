package cli

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Bad plans, gone targets and unreachable endpoints stop knee steps, curve,
// use and the lab experiments with exit 2 before any load starts: no run
// directory is created.
func TestStepsBadInputExitsTwo(t *testing.T) {
	out := t.TempDir()
	url := "http://127.0.0.1:1/{isbn}"
	steps := func(extra ...string) []string {
		return append([]string{"steps", "--url", url, "--var", "isbn=1,2", "--out", out, "--quiet"}, extra...)
	}
	lab := func(cmd string, extra ...string) []string {
		return append([]string{"lab", cmd, "--out", out, "--quiet"}, extra...)
	}
	for _, tc := range []struct {
		args []string
		want string // in stderr
	}{
		{steps("--steps", "0"), "--steps 0"},
		{steps("--steps", "-2"), "--steps -2"},
		{steps("--start", "0"), "--start 0"},
		{steps("--step", "-100"), "--step -100"},
		{steps("--step-duration", "0s"), "--step-duration"},
		{steps("--step-duration", "-5s"), "--step-duration"},
		{steps("--warmup", "20s", "--step-duration", "20s"), "--warmup 20s"},
		{steps("--warmup", "30s", "--step-duration", "20s"), "--warmup 30s"},
		{steps("--warmup", "-1s"), "--warmup -1s"},
		{steps("--metrics", "http://127.0.0.1:1/metrics"), "--metrics"},
		{steps("--target-pid", "999999999"), "--target-pid"},
		{steps("--target-cgroup", filepath.Join(out, "no-such-cgroup")), "--target-cgroup"},
		{steps("--target-pid", "1", "--target-cgroup", "/sys/fs/cgroup/cpu"), "not both"},
		{steps("--pre-allocated-vus", "10", "--max-vus", "5"), "maxVUs"},
		{[]string{"steps", "--out", out}, "--url"},
		{[]string{"steps", "--url", url, "--out", out}, "isbn"},
		{[]string{"curve", filepath.Join(out, "missing")}, "missing"},
		{[]string{"curve", out, "--steps", "3", "--step-duration", "10s", "--warmup", "10s"}, "--warmup"},
		{[]string{"curve", out, "--steps", "0", "--warmup", "-1s"}, "--warmup"},
		{[]string{"use", "--duration", "1s"}, "--duration"},
		{[]string{"use", "--metrics", "http://127.0.0.1:1/metrics", "--duration", "5s"}, "--metrics"},
		{[]string{"use", "--target-pid", "999999999"}, "--target-pid"},
		{lab("curve", "--steps", "0"), "--steps 0"},
		{lab("curve", "--warmup", "15s", "--step-duration", "15s"), "--warmup"},
		{lab("curve", "--cpus", "-1"), "--cpus"},
		{lab("pool", "--max-pool", "0"), "--max-pool"},
		{lab("pool", "--start", "-20"), "--start"},
	} {
		code, _, stderr := runKnee(t, tc.args...)
		if code != ExitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("knee %s: exit %d, stderr %q; want exit 2 naming %q", strings.Join(tc.args, " "), code, stderr, tc.want)
		}
	}
	if left, _ := os.ReadDir(out); len(left) > 0 {
		t.Errorf("bad input created %d entries under --out, want none: load started", len(left))
	}
}

// A /metrics endpoint that answers something else than the Prometheus
// text format is bad input too.
func TestUseRejectsNonMetricsPage(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte("<html>not metrics</html>\n"))
	}))
	defer srv.Close()
	code, _, stderr := runKnee(t, "use", "--metrics", srv.URL, "--duration", "2s")
	if code != ExitUsage || !strings.Contains(stderr, "not a Prometheus metrics page") {
		t.Errorf("exit %d, stderr %q; want exit 2 saying it is not a metrics page", code, stderr)
	}
}

// knee use against a loopback /metrics page of known values: two samples,
// the pool row measured (3 of 10 connections = 30 %), the verdict printed.
func TestUseScansMetrics(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: samples for 3 s")
	}
	page := "# TYPE go_sql_in_use_connections gauge\ngo_sql_in_use_connections 3\n" +
		"# TYPE go_sql_max_open_connections gauge\ngo_sql_max_open_connections 10\n"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte(page)) }))
	defer srv.Close()
	export := filepath.Join(t.TempDir(), "use.json")
	code, stdout, stderr := runKnee(t, "use", "--metrics", srv.URL, "--duration", "3s", "--summary-export", export)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"connection pool", "connections in use 30%", "verdict:"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	var got struct {
		USE        json.RawMessage `json:"use"`
		Bottleneck json.RawMessage `json:"bottleneck"`
	}
	b, err := os.ReadFile(export)
	if err != nil || json.Unmarshal(b, &got) != nil || len(got.USE) == 0 || len(got.Bottleneck) == 0 {
		t.Errorf("--summary-export %s: %v, %s", export, err, b)
	}
}

// stepsTarget serves with workers goroutines at a time, each request
// holding one for service: a capacity of workers/service req/s.
func stepsTarget(workers int, service time.Duration) *httptest.Server {
	sem := make(chan struct{}, workers)
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case sem <- struct{}{}:
		case <-r.Context().Done():
			return
		}
		time.Sleep(service)
		<-sem
		w.Write([]byte("ok"))
	}))
}
