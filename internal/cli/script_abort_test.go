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

// abortOnFail stops the test once its threshold fails on what was measured
// so far (k6's semantics; exit 99), not before its delayAbortEval, on k6's
// metrics and custom ones alike.
func TestScriptAbortOnFail(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(30 * time.Millisecond)
	}))
	t.Cleanup(srv.Close)
	script := func(thresholds string) string {
		return writeJS(t, `import http from 'k6/http';
import { check } from 'k6';
import { Trend } from 'k6/metrics';
const mine = new Trend('mine');
export const options = {
  scenarios: { s: { executor: 'constant-arrival-rate', rate: 20, timeUnit: '1s', duration: __ENV.DUR, preAllocatedVUs: 5, maxVUs: 50 } },
  thresholds: `+thresholds+`,
};
export default function () {
  const r = http.get(__ENV.BASE + '/');
  check(r, { 'never': () => false });
  mine.add(50);
}
`)
	}
	run := func(thresholds, dur string) (code int, out, stderr string, requests int64, interrupted bool) {
		t.Helper()
		runs := t.TempDir()
		code, out, stderr = runKnee(t, "run", script(thresholds), "-e", "BASE="+srv.URL, "-e", "DUR="+dur, "--out", runs, "--quiet")
		dirs, _ := filepath.Glob(filepath.Join(runs, "*", "run.json"))
		if len(dirs) == 1 {
			var m struct {
				Counters    struct{ Requests int64 }
				Interrupted bool
			}
			data, _ := os.ReadFile(dirs[0])
			json.Unmarshal(data, &m)
			requests, interrupted = m.Counters.Requests, m.Interrupted
		}
		return
	}

	// Every request takes 30 ms: p(95)<10 fails at the first judgement (2 s,
	// k6's pace); the 30 s test (600 requests) stops there.
	code, out, stderr, n, interrupted := run(`{ http_req_duration: [{ threshold: 'p(95)<10', abortOnFail: true }] }`, "30s")
	if code != ExitThresholds || !strings.Contains(out, "ABORTED: threshold http_req_duration: p(95)<10 crossed at") {
		t.Fatalf("latency: exit %d, want %d with the abort said\n%s\n%s", code, ExitThresholds, out, stderr)
	}
	if n == 0 || n >= 600 || !interrupted {
		t.Errorf("latency: %d requests (interrupted %v); want the 30 s run stopped early", n, interrupted)
	}

	// The same threshold with a delayAbortEval longer than the test: it runs
	// whole (2 s at 20/s), and fails at the end.
	code, out, stderr, n, _ = run(`{ http_req_duration: [{ threshold: 'p(95)<10', abortOnFail: true, delayAbortEval: '1m' }] }`, "2s")
	if code != ExitThresholds || strings.Contains(out, "ABORTED") || n != 40 {
		t.Errorf("delayed: exit %d, %d requests, want %d, 40 and no abort\n%s\n%s", code, n, ExitThresholds, out, stderr)
	}

	// checks: every check fails.
	code, out, stderr, n, _ = run(`{ checks: [{ threshold: 'rate>0.5', abortOnFail: true }] }`, "30s")
	if code != ExitThresholds || !strings.Contains(out, "ABORTED: threshold checks: rate>0.5 crossed at") || n >= 600 {
		t.Errorf("checks: exit %d, %d requests; want %d and an early stop\n%s\n%s", code, n, ExitThresholds, out, stderr)
	}

	// A custom metric's values are summed as they come, as k6's: every
	// value is 50, so p(95)<10 fails at the first judgement and stops it.
	code, out, stderr, n, _ = run(`{ mine: [{ threshold: 'p(95)<10', abortOnFail: true }] }`, "30s")
	if code != ExitThresholds || !strings.Contains(out, "ABORTED: threshold mine: p(95)<10 crossed at") || n >= 600 {
		t.Errorf("custom metric: exit %d, %d requests; want %d and an early stop\n%s\n%s", code, n, ExitThresholds, out, stderr)
	}

	// k6 judges on its test run duration, setup() included: a 3 s setup
	// and 20 requests/s make http_reqs' rate 20·L/(3+L) at L s of load, 5/s
	// at k6's judgement of 4 s, so rate>15 aborts the test there. Judged on
	// the load's time alone (20/s) it would pass and the test run whole.
	slow := writeJS(t, `import http from 'k6/http';
import { sleep } from 'k6';
export const options = {
  scenarios: { s: { executor: 'constant-arrival-rate', rate: 20, timeUnit: '1s', duration: '20s', preAllocatedVUs: 5, maxVUs: 50 } },
  thresholds: { http_reqs: [{ threshold: 'rate>15', abortOnFail: true }] },
};
export function setup() { sleep(3); }
export default function () { http.get(__ENV.BASE + '/'); }
`)
	runs := t.TempDir()
	code, out, stderr = runKnee(t, "run", slow, "-e", "BASE="+srv.URL, "--out", runs, "--quiet")
	if code != ExitThresholds || !strings.Contains(out, "ABORTED: threshold http_reqs: rate>15 crossed at") {
		t.Errorf("counter rate after a slow setup: exit %d, want %d with the abort said\n%s\n%s", code, ExitThresholds, out, stderr)
	}
}
