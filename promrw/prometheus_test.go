package promrw_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/knee-dev/knee/internal/kneetest"
	"github.com/knee-dev/knee/record"
	"github.com/knee-dev/knee/rundir"
)

// startPrometheus starts Debian's prometheus on a free loopback port with
// native histograms and the remote-write receiver; it is killed with the test.
func startPrometheus(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		t.Skip("SKIP LOUDLY: no prometheus binary (Debian package prometheus; scripts/test.sh installs it): the remote-write test cannot run")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "prometheus.yml")
	os.WriteFile(cfg, []byte("global:\n  scrape_interval: 1m\n"), 0o644)
	cmd := exec.Command(bin, "--config.file="+cfg, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--enable-feature=native-histograms", "--web.enable-remote-write-receiver")
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	base := "http://" + addr
	for deadline := time.Now().Add(30 * time.Second); ; {
		resp, err := http.Get(base + "/-/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return base
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("prometheus not ready after 30 s:\n%s", log.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

type promResult struct {
	Status string `json:"status"`
	Error  string `json:"error"`
	Data   struct {
		ResultType string `json:"resultType"`
		Result     []struct {
			Metric map[string]string `json:"metric"`
			Value  []any             `json:"value"`
			Values [][]any           `json:"values"`
		} `json:"result"`
	} `json:"data"`
}

func query(t *testing.T, base, q string, at time.Time) promResult {
	t.Helper()
	v := url.Values{"query": {q}, "time": {strconv.FormatFloat(float64(at.UnixMilli())/1000, 'f', 3, 64)}}
	resp, err := http.Get(base + "/api/v1/query?" + v.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r promResult
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		t.Fatal(err)
	}
	if r.Status != "success" {
		t.Fatalf("query %s: %s", q, r.Error)
	}
	return r
}

// scalar is the one value of an instant query's vector result.
func scalar(t *testing.T, r promResult, q string) float64 {
	t.Helper()
	if len(r.Data.Result) != 1 || len(r.Data.Result[0].Value) != 2 {
		t.Fatalf("query %s: want one value, got %+v", q, r.Data.Result)
	}
	f, err := strconv.ParseFloat(r.Data.Result[0].Value[1].(string), 64)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestRemoteWriteAddsUp(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Prometheus and four knee processes; not in -short")
	}
	prom := startPrometheus(t)
	bin := kneetest.BuildKnee(t)
	target := kneetest.DelayServer(t, 10*time.Millisecond)

	tmp := t.TempDir()
	startAt := time.Now().Add(3 * time.Second).UTC().Format(time.RFC3339Nano)
	testID := "rw-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	var wg sync.WaitGroup
	outs := make([]string, 4)
	errs := make([]error, 4)
	for i := range 4 {
		wg.Go(func() {
			cmd := exec.Command(bin, "run", "--executor", "constant-arrival-rate", "--rate", "400", "--duration", "3s",
				"--pre-allocated-vus", "40", "--max-vus", "200", "--url", target, "--quiet", "--graceful-stop", "5s",
				"--execution-segment-sequence", "0,1/4,2/4,3/4,1", "--execution-segment-index", strconv.Itoa(i),
				// No --runner-name: four runners on one host push under their
				// segments by default, never under one host name (which made
				// Prometheus reject most of their pushes as out of order).
				"--start-at", startAt, "--test-id", testID,
				"--out", filepath.Join(tmp, fmt.Sprintf("part-%d", i)), "--out", "prometheus-rw="+prom+"/api/v1/write")
			b, err := cmd.CombinedOutput()
			outs[i], errs[i] = string(b), err
		})
	}
	wg.Wait()
	for i := range 4 {
		if errs[i] != nil || !strings.Contains(outs[i], "0 dropped") || strings.Contains(outs[i], "last error") {
			t.Fatalf("runner %d: %v\n%s", i, errs[i], outs[i])
		}
	}
	t.Logf("runner 0:\n%s", outs[0])
	mergedDir := filepath.Join(tmp, "merged")
	if out, err := exec.Command(bin, "merge", tmp, "--out", mergedDir).CombinedOutput(); err != nil {
		t.Fatalf("knee merge: %v\n%s", err, out)
	}
	merged, err := rundir.Open(mergedDir)
	if err != nil {
		t.Fatal(err)
	}
	wantReqs := merged.Counters(0, 0).Requests
	lat := merged.Merged(func(k record.Key) bool { return k.Metric == record.Latency }, 0, 0)
	kneeP99 := lat.Percentile(99).Seconds()

	at := time.Now()
	sel := `{test_id="` + testID + `"}`
	q := "sum(knee_requests_total" + sel + ")"
	if got := scalar(t, query(t, prom, q, at), q); got != float64(wantReqs) {
		t.Errorf("%s = %v; knee merge counted %d requests", q, got, wantReqs)
	}
	q = "histogram_count(sum(knee_latency_seconds" + sel + "))"
	if got := scalar(t, query(t, prom, q, at), q); got != float64(wantReqs) {
		t.Errorf("%s = %v; knee merge counted %d requests", q, got, wantReqs)
	}
	q = "sum(knee_dropped_iterations_total" + sel + ")"
	if got := scalar(t, query(t, prom, q, at), q); got != float64(merged.Counters(0, 0).DroppedIterations) {
		t.Errorf("%s = %v; knee merge counted %d dropped", q, got, merged.Counters(0, 0).DroppedIterations)
	}
	// PromQL's p99 lies in the native bucket that holds knee's p99: within
	// one bucket width (2^(1/8), schema 3) of it.
	q = "histogram_quantile(0.99, sum(knee_latency_seconds" + sel + "))"
	promP99 := scalar(t, query(t, prom, q, at), q)
	width := math.Exp2(1.0/8) - 1
	t.Logf("p99: PromQL %.6f s, knee merge %.6f s (native bucket width %.1f %%)", promP99, kneeP99, width*100)
	if math.Abs(promP99-kneeP99) > kneeP99*width+0.0001 {
		t.Errorf("PromQL p99 %.6f s is more than one native bucket from knee's %.6f s", promP99, kneeP99)
	}

	// Every query of the dashboard runs and finds data.
	dash, err := os.ReadFile("dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	exprs := regexp.MustCompile(`"expr": "((?:[^"\\]|\\.)*)"`).FindAllSubmatch(dash, -1)
	if len(exprs) < 5 {
		t.Fatalf("dashboard has %d queries", len(exprs))
	}
	for _, m := range exprs {
		var e string
		json.Unmarshal([]byte(`"`+string(m[1])+`"`), &e)
		e = strings.NewReplacer("$test_id", testID, "$__rate_interval", "1m").Replace(e)
		r := query(t, prom, e, at)
		if len(r.Data.Result) == 0 && !strings.Contains(e, "knee_errors_total") { // no errors, so no error series
			t.Errorf("dashboard query %s found nothing", e)
		}
	}
}
