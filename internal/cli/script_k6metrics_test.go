package cli

import (
	"crypto/tls"
	"encoding/csv"
	"encoding/json"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/knee-dev/knee/k6script"
	"github.com/knee-dev/knee/runner"
)

// redirectServer serves /redirect/N as k6's httpbin does: a 302 to
// /redirect/N-1, and /redirect/0 a 200; /post answers 200.
func redirectServer(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n, ok := strings.CutPrefix(r.URL.Path, "/redirect/"); ok {
			if i, _ := strconv.Atoi(n); i > 0 {
				http.Redirect(w, r, "/redirect/"+strconv.Itoa(i-1), http.StatusFound)
				return
			}
		}
		w.Write([]byte("ok"))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// k6Stats reads k6.json of the one run directory under runs.
func k6Stats(t *testing.T, runs string) map[string]k6script.K6Stat {
	t.Helper()
	found, _ := filepath.Glob(filepath.Join(runs, "*", runner.K6File))
	if len(found) != 1 {
		t.Fatalf("want one %s under %s, found %v", runner.K6File, runs, found)
	}
	b, err := os.ReadFile(found[0])
	if err != nil {
		t.Fatal(err)
	}
	var ms []k6script.K6Stat
	if err := json.Unmarshal(b, &ms); err != nil {
		t.Fatal(err)
	}
	out := map[string]k6script.K6Stat{}
	for _, m := range ms {
		out[m.Name] = m
	}
	return out
}

// Every redirect hop is a request, and setup's and teardown's requests
// count, as in k6; thresholds on any tag (status, url, method,
// expected_response, a custom tag, a check's tag, a custom metric's tag)
// are judged on the values with that tag. By hand: setup POSTs /post (1
// request), each of the 2 iterations GETs /redirect/3 (302, 302, 302, 200:
// 4 requests), teardown GETs /redirect/0 (1): 10 requests, 6 of them 302s,
// 4 200s; 9 GETs and 1 POST; /redirect/0 is asked 3 times.
func TestScriptK6CountsHopsAndLifecycle(t *testing.T) {
	srv := redirectServer(t)
	script := writeJS(t, `import http from 'k6/http';
import { check } from 'k6';
import { Counter } from 'k6/metrics';
const mine = new Counter('mine');
const base = __ENV.BASE;
export const options = { vus: 1, iterations: 2, thresholds: {
  http_reqs: ['count==10'],
  'http_reqs{status:302}': ['count==6', 'count==5'],
  'http_reqs{status:200}': ['count==4'],
  'http_reqs{method:POST}': ['count==1'],
  ['http_reqs{url:' + base + '/redirect/0}']: ['count==3'],
  'http_reqs{hop:chain}': ['count==8'],
  'http_req_failed{expected_response:true}': ['rate==0'],
  'http_req_duration{expected_response:false}': ['max==0'],
  'checks{kind:body}': ['rate==1'],
  'mine{where:default}': ['count==4'],
  iterations: ['count==2'],
} };
export function setup() { http.post(base + '/post', 'x'); }
export default function () {
  const r = http.get(base + '/redirect/3', { tags: { hop: 'chain' } });
  check(r, { 'ok': (r) => r.body === 'ok' }, { kind: 'body' });
  mine.add(2, { where: 'default' });
  mine.add(5);
}
export function teardown() { http.get(base + '/redirect/0'); }
`)
	runs := t.TempDir()
	csvPath := filepath.Join(t.TempDir(), "k6.csv")
	code, out, stderr := runKnee(t, "run", script, "-e", "BASE="+srv.URL, "--out", runs, "--out", "csv="+csvPath, "--quiet")
	if code != ExitThresholds {
		t.Fatalf("exit %d; want %d (count==5 of the 302s fails)\n%s\n%s", code, ExitThresholds, out, stderr)
	}
	for _, want := range []string{
		"PASS  http_reqs: count==10 ", "PASS  http_reqs{status:302}: count==6 ", "FAIL  http_reqs{status:302}: count==5 ",
		"PASS  http_reqs{status:200}: count==4 ", "PASS  http_reqs{method:POST}: count==1 ",
		"PASS  http_reqs{url:" + srv.URL + "/redirect/0}: count==3 ", "PASS  http_reqs{hop:chain}: count==8 ",
		"PASS  http_req_failed{expected_response:true}: rate==0 ", "PASS  checks{kind:body}: rate==1 ",
		"PASS  mine{where:default}: count==4 ", "PASS  iterations: count==2 ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	ms := k6Stats(t, runs)
	if m := ms["http_reqs"]; m.Sum != 10 {
		t.Errorf("k6.json http_reqs %g; want 10", m.Sum)
	}
	if m := ms["http_req_duration"]; m.Count != 10 {
		t.Errorf("k6.json http_req_duration has %d values; want 10", m.Count)
	}
	// k6's CSV: one row set per hop; the 302s and 200s by status column.
	f, err := os.Open(csvPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	byStatus := map[string]int{}
	metrics := map[string]int{}
	for _, r := range rows[1:] {
		metrics[r[0]]++
		if r[0] == "http_reqs" {
			byStatus[r[13]]++
		}
	}
	if byStatus["302"] != 6 || byStatus["200"] != 4 {
		t.Errorf("CSV http_reqs rows by status %v; want 6 302s and 4 200s", byStatus)
	}
	for _, m := range []string{"http_req_duration", "http_req_blocked", "http_req_connecting", "http_req_tls_handshaking",
		"http_req_sending", "http_req_waiting", "http_req_receiving", "http_req_failed"} {
		if metrics[m] != 10 {
			t.Errorf("CSV has %d %s rows; want 10", metrics[m], m)
		}
	}
	// The rest of k6's samples, as k6 writes them: iterations and
	// iteration_duration per full iteration (2), a check row per check (2),
	// the custom Counter per add (4), data_sent and data_received once per
	// iteration, setup and teardown (4).
	for m, want := range map[string]int{"iterations": 2, "iteration_duration": 2, "checks": 2, "mine": 4,
		"data_sent": 4, "data_received": 4, "group_duration": 0} {
		if metrics[m] != want {
			t.Errorf("CSV has %d %s rows; want %d", metrics[m], m, want)
		}
	}
}

// slowHandshake delays each accepted connection before TLS starts, so
// every new connection's handshake takes at least d.
type slowHandshake struct {
	net.Listener
	d time.Duration
}

func (l slowHandshake) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		time.Sleep(l.d)
	}
	return c, err
}

// http_req_duration is sending + waiting + receiving, as k6's: never the
// TLS handshake, which is http_req_tls_handshaking (and part of
// http_req_blocked). The server sleeps 1 s after accepting a connection,
// before its handshake; the requests themselves are answered at once. The
// client times the handshake from its hello, which on a busy machine can
// leave some milliseconds after the server's sleep began (988 ms once in
// a CI rehearsal), so the thresholds split at 500 ms, far from both.
// Before the fix the threshold on duration was judged on knee's latency,
// handshake included, and failed. The k6 series equal what the script saw
// in res.timings, value for value.
func TestScriptK6DurationExcludesHandshake(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) }))
	srv.Listener = slowHandshake{Listener: srv.Listener, d: time.Second}
	srv.TLS = &tls.Config{}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	script := writeJS(t, `import http from 'k6/http';
import { check } from 'k6';
import { Trend } from 'k6/metrics';
const seen = new Trend('seen_duration', true);
const seenTLS = new Trend('seen_tls', true);
export const options = { vus: 2, iterations: 6, insecureSkipTLSVerify: true, thresholds: {
  http_req_duration: ['max<500'],
  http_req_tls_handshaking: ['max>=500'],
} };
export default function () {
  const r = http.get(__ENV.BASE + '/');
  const t = r.timings;
  seen.add(t.duration);
  seenTLS.add(t.tls_handshaking);
  check(t, {
    'duration is sending+waiting+receiving': (t) => Math.abs(t.duration - (t.sending + t.waiting + t.receiving)) < 1e-6,
    'blocked covers connecting and the handshake': (t) => t.blocked + 1e-6 >= t.connecting + t.tls_handshaking,
  });
}
`)
	runs := t.TempDir()
	code, out, stderr := runKnee(t, "run", script, "-e", "BASE="+srv.URL, "--out", runs, "--quiet")
	if code != 0 {
		t.Fatalf("exit %d; want 0\n%s\n%s", code, out, stderr)
	}
	if !strings.Contains(out, "checks: 100.00% of 12 passed") {
		t.Errorf("a timing check failed:\n%s", out)
	}
	ms := k6Stats(t, runs)
	found, _ := filepath.Glob(filepath.Join(runs, "*", runner.MetricsFile))
	b, _ := os.ReadFile(found[0])
	var custom []k6script.MetricResult
	if err := json.Unmarshal(b, &custom); err != nil {
		t.Fatal(err)
	}
	by := map[string]k6script.MetricResult{}
	for _, c := range custom {
		by[c.Name] = c
	}
	for k6name, mine := range map[string]string{"http_req_duration": "seen_duration", "http_req_tls_handshaking": "seen_tls"} {
		k, c := ms[k6name], by[mine]
		// The same values, summed in another order: avg to 1e-9.
		if k.Count != 6 || c.Count != 6 || k.Max != c.Max || k.Min != c.Min || math.Abs(k.Avg-c.Avg) > 1e-9*c.Avg || k.P95 != c.P95 {
			t.Errorf("%s %+v; want the values res.timings gave (%s %+v)", k6name, k, mine, c)
		}
	}
	if tlsMax := ms["http_req_tls_handshaking"].Max; tlsMax < 500 {
		t.Errorf("http_req_tls_handshaking max %g ms; the server delayed every handshake 1 s", tlsMax)
	}
}

// Iteration errors are counted beside the checks, with their share of the
// iterations: 4 iterations of one VU, the odd ones (__ITER 1 and 3) throw
// after their check: 2 of 4, 50.00%.
func TestScriptIterationErrorShare(t *testing.T) {
	script := writeJS(t, `import { check } from 'k6';
export const options = { vus: 1, iterations: 4 };
export default function () {
  check(1, { 'one': (x) => x === 1 });
  if (__ITER % 2 === 1) { throw new Error('odd iteration'); }
}
`)
	code, out, stderr := runKnee(t, "run", script, "--out", t.TempDir(), "--quiet")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	want := "checks: 100.00% of 4 passed"
	if !strings.Contains(out, want) || !strings.Contains(out, "iteration errors: 50.00% of 4 iterations (2); the first: ") ||
		!strings.Contains(out, "script.js:5:") {
		t.Errorf("output lacks the checks, the errors' share or the first one's place:\n%s", out)
	}
}

// As k6's httpext transport tags them: a request given a name has that
// name as its url tag too; with the response callback null, k6 writes no
// http_req_failed (a threshold on it has nothing to judge and does not
// fail) and no expected_response tag. By hand: 2 requests to /broken
// (500), one named 'named', both with the callback off.
func TestScriptK6NameURLAndNullCallback(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(500) }))
	t.Cleanup(srv.Close)
	script := writeJS(t, `import http from 'k6/http';
export const options = { vus: 1, iterations: 1, thresholds: {
  'http_reqs{url:named}': ['count==1'],
  'http_reqs{name:named}': ['count==1'],
  'http_reqs{status:500}': ['count==2'],
  'http_reqs{expected_response:false}': ['count==0'],
  http_req_failed: ['rate==0.5'],
} };
export default function () {
  http.setResponseCallback(null);
  http.get(__ENV.BASE + '/broken', { tags: { name: 'named' } });
  http.get(__ENV.BASE + '/broken');
}
`)
	code, out, stderr := runKnee(t, "run", script, "-e", "BASE="+srv.URL, "--out", t.TempDir(), "--quiet")
	if code != 0 {
		t.Fatalf("exit %d; want 0\n%s\n%s", code, out, stderr)
	}
	for _, want := range []string{"PASS  http_reqs{url:named}: count==1 ", "PASS  http_reqs{name:named}: count==1 ",
		"PASS  http_reqs{status:500}: count==2 ", "PASS  http_reqs{expected_response:false}: count==0 ",
		"PASS  http_req_failed: rate==0.5", "no values: k6 cannot judge a rate of nothing"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
