package cli

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/knee-dev/knee/record"
	"github.com/knee-dev/knee/rundir"
)

// countingServer counts requests per path and echoes the query's "who".
func countingServer(t *testing.T) (*httptest.Server, func(path string) int64) {
	t.Helper()
	var mu sync.Mutex
	counts := map[string]*atomic.Int64{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		c, ok := counts[r.URL.Path]
		if !ok {
			c = &atomic.Int64{}
			counts[r.URL.Path] = c
		}
		mu.Unlock()
		c.Add(1)
		if r.URL.Path == "/broken" {
			w.WriteHeader(http.StatusInternalServerError)
		}
		w.Write([]byte("who=" + r.URL.Query().Get("who")))
	}))
	t.Cleanup(srv.Close)
	return srv, func(path string) int64 {
		mu.Lock()
		defer mu.Unlock()
		if c, ok := counts[path]; ok {
			return c.Load()
		}
		return 0
	}
}

func writeJS(t *testing.T, src string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "script.js")
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// A script without options runs 1 VU for 1 iteration, as k6 does; setup's
// data reaches the default function and teardown; checks are counted.
func TestScriptDefaultsSetupAndChecks(t *testing.T) {
	srv, count := countingServer(t)
	script := writeJS(t, `import http from 'k6/http';
import { check } from 'k6';
export function setup() { http.get(__ENV.BASE + '/setup'); return { who: 'from-setup' }; }
export default function (data) {
  const res = http.get(__ENV.BASE + '/it?who=' + data.who + '-' + __VU + '-' + __ITER);
  check(res, { 'echoes setup data': (r) => r.body === 'who=from-setup-1-0', 'is 404': (r) => r.status === 404 });
}
export function teardown(data) { http.get(__ENV.BASE + '/teardown?who=' + data.who); }
`)
	code, out, stderr := runKnee(t, "run", script, "-e", "BASE="+srv.URL, "--out", t.TempDir(), "--quiet")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	for path, want := range map[string]int64{"/setup": 1, "/it": 1, "/teardown": 1} {
		if got := count(path); got != want {
			t.Errorf("%s requested %d times; want %d", path, got, want)
		}
	}
	for _, want := range []string{"checks: 50.00% of 2 passed", "✓ echoes setup data", "1 passed, 0 failed", "✗ is 404", "0 passed, 1 failed", "requests            1 in"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// --iterations and --vus override the script (k6's precedence): exactly that
// many iterations run, and the run is complete, not interrupted.
func TestScriptIterationsOverride(t *testing.T) {
	srv, count := countingServer(t)
	script := writeJS(t, `import http from 'k6/http';
export const options = { vus: 1, duration: '1h' };
export default function () { http.get(__ENV.BASE + '/x'); }
`)
	code, out, stderr := runKnee(t, "run", script, "-e", "BASE="+srv.URL, "--vus", "3", "--iterations", "7", "--out", t.TempDir(), "--quiet")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	if got := count("/x"); got != 7 {
		t.Errorf("%d requests; want exactly 7 iterations of one request", got)
	}
	if strings.Contains(out, "interrupted") {
		t.Errorf("a completed iteration count reads as interrupted:\n%s", out)
	}
}

// The script's thresholds are judged on the run: a failing one exits 99.
func TestScriptThresholdsExit99(t *testing.T) {
	srv, _ := countingServer(t)
	script := writeJS(t, `import http from 'k6/http';
export const options = { iterations: 4, thresholds: { http_req_failed: ['rate<0.5'], 'http_req_duration{name:ok}': ['p(99)<60000'] } };
export default function () {
  http.get(__ENV.BASE + (__ITER % 4 == 0 ? '/ok' : '/broken'), { tags: { name: __ITER % 4 == 0 ? 'ok' : 'missing' } });
}
`)
	code, out, stderr := runKnee(t, "run", script, "-e", "BASE="+srv.URL, "--out", t.TempDir(), "--quiet")
	if code != ExitThresholds {
		t.Fatalf("exit %d; want %d (3 of 4 requests got a 500)\n%s\n%s", code, ExitThresholds, out, stderr)
	}
	if !strings.Contains(out, "FAIL  http_req_failed: rate<0.5") || !strings.Contains(out, "PASS  http_req_duration{name:ok}: p(99)<60000") {
		t.Errorf("threshold lines missing:\n%s", out)
	}
}

// Bad scripts exit 2 before anything runs, naming the place.
func TestScriptBadInputExitsTwo(t *testing.T) {
	cases := map[string]string{
		"export default function () {\n  let = 1;\n}\n":                                                    "script.js:2:",
		"import { Blob } from 'k6/websockets';\nexport default function () { new Blob([]).stream(); }\n":   "script.js:2:42: Blob.stream() (k6/websockets) is not supported",
		"export const options = { vus: 'x' };\nexport default function () {}\n":                            "vus is a string",
		"export const options = { thresholds: { vus: ['max<5'] } };\nexport default function () {}\n":      "a gauge has no aggregate \"max\"",
		"export const options = { thresholds: { checks: ['p(95)<1'] } };\nexport default function () {}\n": "a rate has no aggregate \"p\"",
	}
	for src, want := range cases {
		code, out, stderr := runKnee(t, "run", writeJS(t, src), "--out", t.TempDir(), "--quiet")
		if code != 2 || !strings.Contains(stderr, want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q (stdout %q)", src, code, stderr, want, out)
		}
	}
	code, _, stderr := runKnee(t, "run", writeJS(t, "export default function () {}\n"), "--rate", "5")
	if code != 2 || !strings.Contains(stderr, "--rate cannot be used with a k6 script") {
		t.Errorf("--rate with a script: exit %d, %q; want 2 and the flag named", code, stderr)
	}
}

// --out csv=FILE (json=FILE) writes k6's CSV (JSON lines) beside the run
// directory; knee analyze of it (k6's http_req_duration: service time)
// gives back the run's request count, errors and service-time percentiles.
func TestScriptK6OutputRoundTrip(t *testing.T) {
	srv, _ := countingServer(t)
	dir := t.TempDir()
	script := writeJS(t, `import http from 'k6/http';
export const options = { vus: 2, iterations: 60 };
export default function () {
  http.get(__ENV.BASE + '/a', { tags: { name: 'a' } });
  http.get(__ENV.BASE + '/broken', { tags: { name: 'b' } });
}
`)
	for _, format := range []string{"csv", "json"} {
		t.Run(format, func(t *testing.T) { k6OutputRoundTrip(t, srv.URL, script, format) })
	}
	code, _, stderr := runKnee(t, "run", "--url", srv.URL, "--duration", "1s", "--vus", "1", "--out", "csv="+filepath.Join(dir, "x.csv"))
	if code != 2 || !strings.Contains(stderr, "k6 outputs are written for k6 scripts") {
		t.Errorf("--out csv= without a script: exit %d, %q; want 2 and why", code, stderr)
	}
	// k6 reads a bare --out csv as its output to file.csv, --out json as
	// its output to stdout: with a script, neither is a directory.
	for _, o := range []string{"csv", "json"} {
		code, _, stderr = runKnee(t, "run", script, "-e", "BASE="+srv.URL, "--out", o)
		if code != 2 || !strings.Contains(stderr, "--out "+o+"=FILE") {
			t.Errorf("--out %s with a script: exit %d, %q; want 2 and how to give the file", o, code, stderr)
		}
	}
}

func k6OutputRoundTrip(t *testing.T, base, script, format string) {
	dir := t.TempDir()
	csvPath := filepath.Join(dir, "k6."+format)
	runExport := filepath.Join(dir, "run.json")
	code, out, stderr := runKnee(t, "run", script, "-e", "BASE="+base, "--out", filepath.Join(dir, "runs"), "--out", format+"="+csvPath,
		"--summary-export", runExport, "--quiet")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	var run struct {
		Requests int64 `json:"requests"`
		Errors   int64 `json:"errors"`
		Service  struct {
			P50 float64 `json:"p50"`
			P99 float64 `json:"p99"`
			Max float64 `json:"max"`
		} `json:"service_ms"`
	}
	readKneeExport(t, runExport, &run)
	aExport := filepath.Join(dir, "a.json")
	code, aout, stderr := runKnee(t, "analyze", csvPath, "--summary-export", aExport)
	if code != 0 {
		t.Fatalf("knee analyze %s: exit %d\n%s\n%s", csvPath, code, aout, stderr)
	}
	var imp struct {
		Requests int64 `json:"requests"`
		Errors   int64 `json:"errors"`
		Latency  struct {
			P50 float64 `json:"p50"`
			P99 float64 `json:"p99"`
			Max float64 `json:"max"`
		} `json:"latency_ms"`
	}
	readJSON(t, aExport, &imp)
	if run.Requests != 120 || imp.Requests != run.Requests {
		t.Errorf("requests: run %d, imported %d; want 120 in both", run.Requests, imp.Requests)
	}
	if run.Errors != 60 || imp.Errors != run.Errors {
		t.Errorf("errors: run %d, imported %d; want the 60 500s in both", run.Errors, imp.Errors)
	}
	if imp.Latency.P50 != run.Service.P50 || imp.Latency.P99 != run.Service.P99 || imp.Latency.Max != run.Service.Max {
		t.Errorf("imported http_req_duration p50/p99/max %v/%v/%v ms; want the run's service time %v/%v/%v ms",
			imp.Latency.P50, imp.Latency.P99, imp.Latency.Max, run.Service.P50, run.Service.P99, run.Service.Max)
	}
}

// loginServer: POST /login with user and pass (form) answers
// {"token": "tok-USER"} and a session cookie; GET /profile wants
// "Authorization: Bearer tok-USER" and the cookie.
func loginServer(t *testing.T) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var profiles atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/login":
			if r.Method != http.MethodPost || r.ParseForm() != nil || r.PostForm.Get("pass") != "pw-"+r.PostForm.Get("user") {
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			http.SetCookie(w, &http.Cookie{Name: "session", Value: "s-" + r.PostForm.Get("user"), Path: "/"})
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"token":"tok-` + r.PostForm.Get("user") + `","user":{"roles":["reader","writer"]}}`))
		case "/profile":
			user := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer tok-")
			ck, err := r.Cookie("session")
			if err != nil || ck.Value != "s-"+user || user == "" {
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			profiles.Add(1)
			w.Write([]byte(`{"name":"` + user + `"}`))
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &profiles
}

// A login flow as teams write it: users from a CSV through SharedArray,
// POST the credentials, the token from res.json('token') in a header on the
// next request, the session cookie kept by the VU's jar, checks, a custom
// Trend with a threshold, k6/execution and k6/encoding.
func TestScriptLoginFlow(t *testing.T) {
	srv, profiles := loginServer(t)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "users.csv"), []byte("user,pass\nann,pw-ann\nbob,pw-bob\ncid,pw-cid\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "flow.js"), []byte(`import http from 'k6/http';
import { check, group, fail } from 'k6';
import { SharedArray } from 'k6/data';
import { Trend, Counter, Rate } from 'k6/metrics';
import exec from 'k6/execution';
import encoding from 'k6/encoding';
import { pick } from './lib/pick.js';

const users = new SharedArray('users', () => open('./users.csv').split('\n').slice(1).filter((l) => l).map((l) => {
  const [user, pass] = l.split(',');
  return { user, pass };
}));
const loginTime = new Trend('login_time', true);
const logins = new Counter('logins');
const roles = new Rate('has_writer_role');

export const options = {
  vus: 3,
  iterations: 9,
  thresholds: {
    login_time: ['p(95)<60000', 'max>=0'],
    logins: ['count==9'],
    checks: ['rate==1'],
    'http_req_duration{name:POST /login}': ['p(99)<60000'],
  },
};

export default function () {
  const u = pick(users, exec.scenario.iterationInTest);
  group('login', () => {
    const res = http.post(__ENV.BASE + '/login', { user: u.user, pass: u.pass }, { tags: { name: 'POST /login' } });
    loginTime.add(res.timings.duration);
    logins.add(1);
    roles.add(res.json('user.roles.1') === 'writer');
    if (!check(res, { 'logged in': (r) => r.status === 200 && r.json('token') === 'tok-' + u.user })) {
      fail('login failed for ' + u.user);
    }
    const profile = http.get(__ENV.BASE + '/profile', { headers: { Authorization: 'Bearer ' + res.json('token') }, tags: { name: 'GET /profile' } });
    check(profile, {
      'profile 200': (r) => r.status === 200,
      'profile is mine': (r) => r.json().name === u.user,
      'b64 round trip': () => encoding.b64decode(encoding.b64encode(u.user), 'std', 's') === u.user,
    });
  });
}
`), 0o644)
	os.MkdirAll(filepath.Join(dir, "lib"), 0o755)
	os.WriteFile(filepath.Join(dir, "lib", "pick.js"), []byte("export function pick(list, i) { return list[i % list.length]; }\n"), 0o644)
	code, out, stderr := runKnee(t, "run", filepath.Join(dir, "flow.js"), "-e", "BASE="+srv.URL, "--out", t.TempDir(), "--quiet")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	if got := profiles.Load(); got != 9 {
		t.Errorf("%d authorised profile requests; want 9 (one per iteration)", got)
	}
	for _, want := range []string{
		"checks: 100.00% of 36 passed", "::login :: logged in", "9 passed, 0 failed",
		"logins                           9 ", "has_writer_role                  100.00% 9 out of 9", "login_time                       avg=",
		"PASS  login_time: p(95)<60000", "PASS  logins: count==9", "PASS  checks: rate==1",
		"PASS  http_req_duration{name:POST /login}: p(99)<60000",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// options.minIterationDuration pads each iteration to at least that long
// (3 iterations of a fast request: the run lasts at least 3 x 150 ms, and
// the closed model's iteration interval is at least 150 ms); options.throw
// makes a failed request throw (an iteration error with the request's
// failure), after it was recorded.
func TestScriptMinIterationDurationAndThrow(t *testing.T) {
	srv, _ := countingServer(t)
	script := writeJS(t, `import http from 'k6/http';
export const options = { vus: 1, iterations: 3, minIterationDuration: '150ms', throw: true };
export default function () {
  http.get(__ENV.BASE + '/fast');
  if (__ITER === 2) { http.get('http://127.0.0.1:1/refused'); }
}
`)
	runs := t.TempDir()
	start := time.Now()
	code, out, stderr := runKnee(t, "run", script, "-e", "BASE="+srv.URL, "--out", runs, "--quiet")
	took := time.Since(start)
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	if took < 450*time.Millisecond {
		t.Errorf("3 iterations of at least 150 ms took %v", took)
	}
	dirs, _ := filepath.Glob(filepath.Join(runs, "*"))
	r, err := rundir.Open(dirs[0])
	if err != nil {
		t.Fatal(err)
	}
	iv := r.Merged(func(k record.Key) bool { return k.Metric == record.Interval }, 0, 0)
	if iv.Count() == 0 || iv.Min() < 150*time.Millisecond {
		t.Errorf("closed-model iteration intervals: %d, min %v; want each at least 150 ms", iv.Count(), iv.Min())
	}
	if c := r.Meta.Counters; c.Requests != 4 || c.ErrorsByClass["refused"] != 1 {
		t.Errorf("counters %+v: want 4 requests, the refused one recorded", c)
	}
	if notes := strings.Join(r.Meta.Notes, "\n"); !strings.Contains(notes, "1 iterations ended in an exception; the first: ") ||
		!strings.Contains(notes, "script.js:5:") || !strings.Contains(notes, "GoError: request to http://127.0.0.1:1/refused failed") {
		t.Errorf("notes %q: want the thrown failure", r.Meta.Notes)
	}
}

// An object body holding an http.file is sent as multipart/form-data, as k6
// sends it: the server reads the file's name, type and bytes and the field.
func TestScriptFileUpload(t *testing.T) {
	var got atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseMultipartForm(1 << 20); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		f, fh, err := r.FormFile("doc")
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		data, _ := io.ReadAll(f)
		got.Store(fmt.Sprintf("%s|%s|%s|%s", fh.Filename, fh.Header.Get("Content-Type"), data, r.FormValue("title")))
	}))
	t.Cleanup(srv.Close)
	script := writeJS(t, `import http from 'k6/http';
import { check } from 'k6';
export default function () {
  const r = http.post(__ENV.BASE + '/upload', { doc: http.file('hello, file', 'a "b".txt', 'text/plain'), title: 'T1' });
  check(r, { 'uploaded': (r) => r.status === 200 });
}
`)
	code, out, stderr := runKnee(t, "run", script, "-e", "BASE="+srv.URL, "--out", t.TempDir(), "--quiet")
	if code != ExitOK || !strings.Contains(out, "checks: 100.00% of 1 passed") {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	if s, _ := got.Load().(string); s != `a "b".txt|text/plain|hello, file|T1` {
		t.Errorf("the server read %q", s)
	}
}

// An async default function awaiting http.asyncRequest runs as k6 runs it:
// both requests are sent and checked; an exception after an await is the
// iteration's error, as a synchronous one is.
func TestScriptAsyncRequest(t *testing.T) {
	srv, count := countingServer(t)
	script := writeJS(t, `import http from 'k6/http';
import { check } from 'k6';
export const options = { vus: 1, iterations: 2 };
export default async function () {
  const a = await http.asyncRequest('GET', __ENV.BASE + '/a');
  const [b, c] = await Promise.all([http.asyncRequest('GET', __ENV.BASE + '/b'), http.asyncRequest('GET', __ENV.BASE + '/b')]);
  check(a, { 'a 200': (r) => r.status === 200 });
  check(b, { 'b 200': (r) => r.status === 200 && c.status === 200 });
  if (__ITER === 1) { throw new Error('after the awaits'); }
}
`)
	runs := t.TempDir()
	code, out, stderr := runKnee(t, "run", script, "-e", "BASE="+srv.URL, "--out", runs, "--quiet")
	if code != ExitOK || !strings.Contains(out, "checks: 100.00% of 4 passed") {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	if count("/a") != 2 || count("/b") != 4 {
		t.Errorf("the server saw /a %d and /b %d times; want 2 and 4", count("/a"), count("/b"))
	}
	dirs, _ := filepath.Glob(filepath.Join(runs, "*"))
	r, err := rundir.Open(dirs[0])
	if err != nil {
		t.Fatal(err)
	}
	if notes := strings.Join(r.Meta.Notes, "\n"); !strings.Contains(notes, "1 iterations ended in an exception") || !strings.Contains(notes, "after the awaits") {
		t.Errorf("notes %q: want the rejected iteration", notes)
	}
}

// A login page's CSRF token read with res.html() and k6/html, as everyday
// k6 scripts do, then posted back; the traversal methods give what the page
// holds.
func TestScriptHTML(t *testing.T) {
	var posted atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			r.ParseForm()
			posted.Store(r.Form.Get("csrf") + "|" + r.Form.Get("user"))
			return
		}
		w.Write([]byte(`<html><body><form id="login" action="/login">
<input type="hidden" name="csrf" value="tok-123"><input name="user" value="">
<select name="lang"><option value="en">en</option><option value="fr" selected>fr</option></select>
</form><ul><li class="b">one</li><li class="b">two</li><li>three</li></ul></body></html>`))
	}))
	t.Cleanup(srv.Close)
	script := writeJS(t, `import http from 'k6/http';
import { parseHTML } from 'k6/html';
import { check } from 'k6';
export default function () {
  const page = http.get(__ENV.BASE + '/login');
  const token = page.html().find('input[name=csrf]').attr('value');
  const doc = parseHTML(page.body);
  const lis = doc.find('li');
  check(doc, {
    'three items': () => lis.size() === 3,
    'texts': () => lis.map((i, el) => el.text()).join(',') === 'one,two,three',
    'filter': () => lis.filter('.b').size() === 2 && lis.last().text() === 'three' && lis.eq(1).text() === 'two',
    'select': () => doc.find('select').val() === 'fr',
    'form': () => page.html('form').attr('id') === 'login' && doc.find('input').first().closest('form').attr('action') === '/login',
    'element': () => lis.get(0).textContent() === 'one' && lis.get(0).nodeName() === 'li' && lis.get(5) === undefined,
    'missing attr': () => doc.find('ul').attr('id', 'none') === 'none',
  });
  http.post(__ENV.BASE + '/login', { csrf: token, user: 'ann' });
}
`)
	code, out, stderr := runKnee(t, "run", script, "-e", "BASE="+srv.URL, "--out", t.TempDir(), "--quiet")
	if code != ExitOK || !strings.Contains(out, "checks: 100.00% of 7 passed") {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	if s, _ := posted.Load().(string); s != "tok-123|ann" {
		t.Errorf("posted %q, want the page's token and the user", s)
	}
}
