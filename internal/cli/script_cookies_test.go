package cli

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/knee-dev/knee/record"
	"github.com/knee-dev/knee/rundir"
)

// cookieServer sets a session cookie on /login, tells on /check which
// cookie came, and answers /bin with four bytes 0, 1, 128, 255.
func cookieServer(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/login":
			http.SetCookie(w, &http.Cookie{Name: "sid", Value: "abc", Path: "/", HttpOnly: true})
		case r.URL.Path == "/check":
			if c, err := r.Cookie("sid"); err == nil {
				w.Write([]byte("sid=" + c.Value))
			} else {
				w.Write([]byte("none"))
			}
		case r.URL.Path == "/bin":
			w.Write([]byte{0, 1, 128, 255})
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// The VU's jar is emptied at each iteration (k6's default), res.cookies
// has the Set-Cookie cookies, jar.delete and jar.clear remove them,
// responseType 'binary' gives an ArrayBuffer, and a request to an http.url
// template is named by the template, so one name covers every id.
func TestScriptCookiesBinaryAndURLTemplate(t *testing.T) {
	srv := cookieServer(t)
	script := writeJS(t, `import http from 'k6/http';
import { check } from 'k6';
export const options = { vus: 1, iterations: 3 };
export default function () {
  const B = __ENV.BASE;
  const jar = http.cookieJar();
  check(http.get(B + '/check'), { 'jar empty at iteration start': (r) => r.body === 'none' });
  const login = http.get(B + '/login');
  check(login, {
    'res.cookies': (r) => r.cookies.sid.length === 1 && r.cookies.sid[0].value === 'abc' && r.cookies.sid[0].http_only === true,
  });
  check(http.get(B + '/check'), { 'cookie sent': (r) => r.body === 'sid=abc' });
  check(null, { 'cookiesForURL': () => jar.cookiesForURL(B + '/').sid[0] === 'abc' });
  jar.delete(B + '/', 'sid');
  check(http.get(B + '/check'), { 'jar.delete': (r) => r.body === 'none' });
  jar.set(B + '/', 'sid', 'xyz');
  jar.clear(B + '/');
  check(http.get(B + '/check'), { 'jar.clear': (r) => r.body === 'none' });
  const bin = http.get(B + '/bin', { responseType: 'binary' });
  check(bin, { 'binary body': (r) => r.body instanceof ArrayBuffer && r.body.byteLength === 4 && new Uint8Array(r.body)[3] === 255 });
  const id = __ITER + 7;
  check(http.get(http.url`+"`${B}/item/${id}`"+`), { 'url template sends the URL': (r) => r.url === B + '/item/' + id });
}
`)
	dir := filepath.Join(t.TempDir(), "run")
	code, out, stderr := runKnee(t, "run", script, "-e", "BASE="+srv.URL, "--out", dir, "--quiet")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	if !strings.Contains(out, "checks: 100.00% of 24 passed") {
		t.Errorf("want all 24 checks (8 an iteration, 3 iterations) to pass:\n%s\n%s", out, stderr)
	}
	found, _ := filepath.Glob(filepath.Join(dir, "*", "run.json"))
	if len(found) != 1 {
		t.Fatalf("want one run directory in %s, found %v", dir, found)
	}
	r, err := rundir.Open(filepath.Dir(found[0]))
	if err != nil {
		t.Fatal(err)
	}
	if n := r.Merged(func(k record.Key) bool { return k.Metric == record.Latency && k.Name == "${}/item/${}" }, 0, 0).Count(); n != 3 {
		t.Errorf("%d requests named ${}/item/${}; want the 3 http.url requests under their template", n)
	}
}

// With noCookiesReset the VU's cookies outlive the iteration.
func TestScriptNoCookiesReset(t *testing.T) {
	srv := cookieServer(t)
	script := writeJS(t, `import http from 'k6/http';
import { check } from 'k6';
export const options = { vus: 1, iterations: 2, noCookiesReset: true };
export default function () {
  if (__ITER === 0) { http.get(__ENV.BASE + '/login'); return; }
  check(http.get(__ENV.BASE + '/check'), { 'cookie kept': (r) => r.body === 'sid=abc' });
}
`)
	code, out, stderr := runKnee(t, "run", script, "-e", "BASE="+srv.URL, "--out", t.TempDir(), "--quiet")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	if !strings.Contains(out, "checks: 100.00% of 1 passed") {
		t.Errorf("the cookie did not outlive the iteration:\n%s\n%s", out, stderr)
	}
}
