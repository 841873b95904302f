package cli

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
)

// TestScriptChecksPerInterval: a script's check() outcomes are counted per
// interval in counters.jsonl, so the charts can draw them over time. Every
// iteration makes one request and evaluates two checks, one always true and
// one always false: over the run, passed = failed = requests.
func TestScriptChecksPerInterval(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok")) }))
	defer srv.Close()
	script := writeJS(t, `import http from 'k6/http';
import { check, sleep } from 'k6';
export const options = { vus: 2, duration: '1s' };
export default function () {
  const r = http.get(__ENV.BASE + '/');
  check(r, { 'is 200': (x) => x.status === 200, 'is 404': (x) => x.status === 404 });
  sleep(0.02);
}
`)
	out := t.TempDir()
	if code, _, stderr := runKnee(t, "run", script, "-e", "BASE="+srv.URL, "--interval", "250ms", "--out", out, "--quiet"); code != 0 && code != 99 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	files, _ := filepath.Glob(filepath.Join(out, "*", "counters.jsonl"))
	if len(files) != 1 {
		t.Fatalf("counters.jsonl files under %s: %v", out, files)
	}
	f, err := os.Open(files[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var requests, passed, failed, lines, withChecks int64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var line struct {
			Counters struct {
				Requests     int64 `json:"requests"`
				ChecksPassed int64 `json:"checks_passed"`
				ChecksFailed int64 `json:"checks_failed"`
			} `json:"counters"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatal(err)
		}
		c := line.Counters
		requests, passed, failed, lines = requests+c.Requests, passed+c.ChecksPassed, failed+c.ChecksFailed, lines+1
		if c.ChecksPassed > 0 {
			withChecks++
		}
	}
	t.Logf("%d lines (%d with checks): %d requests, %d checks passed, %d failed", lines, withChecks, requests, passed, failed)
	if requests == 0 || passed != requests || failed != requests {
		t.Errorf("checks passed %d, failed %d; want both equal to the %d requests", passed, failed, requests)
	}
	if withChecks < 2 {
		t.Errorf("checks counted in %d of %d intervals, want them spread over the run", withChecks, lines)
	}
}
