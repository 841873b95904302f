package k6script

import (
	"context"
	"crypto/tls"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/knee-dev/knee/load"
)

// received is what a loopback server was sent, request by request.
type received struct {
	mu   sync.Mutex
	reqs []receivedReq
}

type receivedReq struct {
	header http.Header
	body   string
	proto  string
}

func (rc *received) all() []receivedReq {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]receivedReq(nil), rc.reqs...)
}

// recordingServer answers 200 "ok" and keeps what each request carried.
func recordingServer(t *testing.T) (*httptest.Server, *received) {
	t.Helper()
	rc := &received{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.reqs = append(rc.reqs, receivedReq{header: r.Header.Clone(), body: string(body), proto: r.Proto})
		rc.mu.Unlock()
		w.Write([]byte("ok"))
	}))
	t.Cleanup(srv.Close)
	return srv, rc
}

// runHTTPOnce runs the script's default function once and fails the test on
// an iteration error (the scripts throw on a wrong value).
func runHTTPOnce(t *testing.T, src string, env map[string]string) {
	t.Helper()
	s := loadScript(t, src, env)
	it := s.Iteration("x", ScenarioPlan{Exec: "default"}, nil).(load.SelfRecording)
	var got samples
	it.DoRecord(context.Background(), load.Start{Scenario: "x", VU: 1, Iter: 0, Called: time.Now()}, &got)
	if n, first := s.IterationErrors(); n != 0 {
		t.Fatalf("iteration error: %s", first)
	}
}

// An object body is sent form-encoded as k6 sends it: an array value is
// the field repeated in order, other values printed; keys sorted (Go's
// url.Values.Encode, which k6 uses too).
func TestFormBodyArrayIsRepeatedFields(t *testing.T) {
	cases := []struct {
		name, body, want string
	}{
		{"array", `{topping: ['onion', 'bacon', 'cheese']}`, "topping=onion&topping=bacon&topping=cheese"},
		{"array beside a scalar", `{size: 'L', topping: ['onion', 'bacon'], n: 2}`, "n=2&size=L&topping=onion&topping=bacon"},
		{"empty array sends no field", `{a: [], b: 'x'}`, "b=x"},
		{"escaped", `{q: ['a b', 'c&d']}`, "q=a+b&q=c%26d"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv, rc := recordingServer(t)
			runHTTPOnce(t, `import http from 'k6/http';
export default function () { http.post(__ENV.BASE + '/', `+c.body+`); }`, map[string]string{"BASE": srv.URL})
			reqs := rc.all()
			if len(reqs) != 1 {
				t.Fatalf("server got %d requests, want 1", len(reqs))
			}
			if reqs[0].body != c.want {
				t.Errorf("body %q, want %q", reqs[0].body, c.want)
			}
			if ct := reqs[0].header.Get("Content-Type"); ct != "application/x-www-form-urlencoded" {
				t.Errorf("Content-Type %q", ct)
			}
		})
	}
}

// Credentials in the URL go as Basic auth, as k6 (net/http's Client) sends
// them, unless the script set its own Authorization header.
func TestURLCredentialsSentAsBasicAuth(t *testing.T) {
	cases := []struct {
		name, userinfo, params, want string
	}{
		{"user and password", "user:pw@", "", "Basic dXNlcjpwdw=="},
		{"escaped", "us%40r:p%3Aw@", "", "Basic dXNAcjpwOnc="},
		{"own header wins", "user:pw@", `, {headers: {Authorization: 'Bearer t'}}`, "Bearer t"},
		{"no credentials", "", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv, rc := recordingServer(t)
			runHTTPOnce(t, `import http from 'k6/http';
export default function () {
  const r = http.get(__ENV.BASE.replace('http://', 'http://`+c.userinfo+`') + '/'`+c.params+`);
  if (r.status !== 200) throw new Error('status ' + r.status + ' ' + r.error);
}`, map[string]string{"BASE": srv.URL})
			reqs := rc.all()
			if len(reqs) != 1 {
				t.Fatalf("server got %d requests, want 1", len(reqs))
			}
			if got := reqs[0].header.Get("Authorization"); got != c.want {
				t.Errorf("Authorization %q, want %q", got, c.want)
			}
		})
	}
}

// https:// negotiates HTTP/2 by ALPN as k6 does (res.proto "HTTP/2.0");
// a server that offers only HTTP/1.1 gets it, and http:// stays HTTP/1.1.
func TestHTTP2ByALPN(t *testing.T) {
	cases := []struct {
		name      string
		tls, h2   bool
		wantProto string
	}{
		{"https with h2", true, true, "HTTP/2.0"},
		{"https without h2", true, false, "HTTP/1.1"},
		{"http", false, false, "HTTP/1.1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rc := &received{}
			srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				rc.mu.Lock()
				rc.reqs = append(rc.reqs, receivedReq{proto: r.Proto})
				rc.mu.Unlock()
			}))
			srv.EnableHTTP2 = c.h2
			if c.tls {
				srv.StartTLS()
			} else {
				srv.Start()
			}
			t.Cleanup(srv.Close)
			runHTTPOnce(t, `import http from 'k6/http';
export const options = { insecureSkipTLSVerify: true };
export default function () {
  const r = http.get(__ENV.BASE + '/');
  if (r.proto !== __ENV.PROTO) throw new Error('res.proto ' + r.proto + ' ' + r.error);
}`, map[string]string{"BASE": srv.URL, "PROTO": c.wantProto})
			reqs := rc.all()
			if len(reqs) != 1 || reqs[0].proto != c.wantProto {
				t.Errorf("server got %+v, want one %s request", reqs, c.wantProto)
			}
		})
	}
}

// res.request is what was sent, as k6 has it: the headers as lists of
// values, the Cookie header as net/http wrote it (the server echoes the
// one it got), and the cookies by name with k6's {name, value, replace}.
func TestResponseRequestHeadersAndCookies(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(r.Header.Get("Cookie")))
	}))
	t.Cleanup(srv.Close)
	runHTTPOnce(t, `import http from 'k6/http';
export default function () {
  http.cookieJar().set(__ENV.BASE + '/', 'j', '2');
  const r = http.post(__ENV.BASE + '/', {a: 'b'}, {headers: {'X-A': 'v'}, cookies: {c: '1'}});
  const q = r.request;
  const want = {method: 'POST', url: __ENV.BASE + '/', body: 'a=b'};
  for (const k in want) if (q[k] !== want[k]) throw new Error(k + ': ' + q[k]);
  const h = JSON.stringify([q.headers['X-A'], q.headers['Content-Type']]);
  if (h !== '[["v"],["application/x-www-form-urlencoded"]]') throw new Error('headers ' + h);
  if (JSON.stringify(q.headers['Cookie']) !== JSON.stringify([r.body])) throw new Error('Cookie ' + q.headers['Cookie'] + ', server got ' + r.body);
  if (r.body.split('; ').sort().join('; ') !== 'c=1; j=2') throw new Error('server got ' + r.body);
  const c = JSON.stringify([q.cookies.c, q.cookies.j]);
  if (c !== '[[{"name":"c","value":"1","replace":false}],[{"name":"j","value":"2","replace":false}]]') throw new Error('cookies ' + c);
  if (r.tls_version !== '' || r.tls_cipher_suite !== '') throw new Error('tls over http: ' + r.tls_version + r.tls_cipher_suite);
}`, map[string]string{"BASE": srv.URL})
}

// res.tls_version and res.tls_cipher_suite in k6's words ("tls1.3", the
// suite's IANA name, k6's own for the TLS 1.2 ChaCha20 suites).
func TestResponseTLSVersionAndCipher(t *testing.T) {
	tls13 := "TLS_AES_128_GCM_SHA256|TLS_AES_256_GCM_SHA384|TLS_CHACHA20_POLY1305_SHA256"
	cases := []struct {
		name        string
		cfg         *tls.Config
		wantVersion string
		wantSuite   string // | between the names allowed
	}{
		{"tls 1.3, h2", nil, "tls1.3", tls13},
		{"tls 1.2 aes", &tls.Config{MaxVersion: tls.VersionTLS12, CipherSuites: []uint16{tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256}}, "tls1.2", "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"},
		{"tls 1.2 chacha", &tls.Config{MaxVersion: tls.VersionTLS12, CipherSuites: []uint16{tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256}}, "tls1.2", "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
			srv.EnableHTTP2 = true
			srv.TLS = c.cfg
			srv.StartTLS()
			t.Cleanup(srv.Close)
			runHTTPOnce(t, `import http from 'k6/http';
export const options = { insecureSkipTLSVerify: true };
export default function () {
  const r = http.get(__ENV.BASE + '/');
  if (r.tls_version !== __ENV.VERSION) throw new Error('tls_version ' + r.tls_version + ' ' + r.error);
  if (!__ENV.SUITE.split('|').includes(r.tls_cipher_suite)) throw new Error('tls_cipher_suite ' + r.tls_cipher_suite);
}`, map[string]string{"BASE": srv.URL, "VERSION": c.wantVersion, "SUITE": c.wantSuite})
		})
	}
}

// An auth scheme knee has no handshake for fails the request with what
// to do, instead of sending it with the URL's user:password as Basic.
func TestAuthUnknownFails(t *testing.T) {
	srv, rc := recordingServer(t)
	s := loadScript(t, `import http from 'k6/http';
const mode = ['kerberos'][0];
export default function () { http.get(__ENV.BASE.replace('http://', 'http://u:p@') + '/', { auth: mode }); }`, map[string]string{"BASE": srv.URL})
	it := s.Iteration("x", ScenarioPlan{Exec: "default"}, nil).(load.SelfRecording)
	var got samples
	it.DoRecord(context.Background(), load.Start{Scenario: "x", VU: 1, Iter: 0, Called: time.Now()}, &got)
	if n, first := s.IterationErrors(); n != 1 || !strings.Contains(first, `params auth "kerberos" is not supported`) {
		t.Errorf("%d iteration errors, first %q; want 1 naming params auth", n, first)
	}
	if reqs := rc.all(); len(reqs) != 0 {
		t.Errorf("server got %d requests, want none", len(reqs))
	}
}

// k6 empties the VU's cookie jar at each iteration (unless
// noCookiesReset): a cookie the server set, or the script set, in one
// iteration is not sent in the next; with noCookiesReset it stays. The
// server answers with the cookies it got, sorted.
func TestCookieJarEmptiedEachIteration(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/set" {
			http.SetCookie(w, &http.Cookie{Name: "s", Value: "1"})
		}
		var got []string
		for _, c := range r.Cookies() {
			got = append(got, c.Name+"="+c.Value)
		}
		slices.Sort(got)
		w.Write([]byte(strings.Join(got, "; ")))
	}))
	t.Cleanup(srv.Close)
	for _, c := range []struct {
		options string
		want    []string // what the first request of iterations 0 to 3 carries
	}{
		{"{}", []string{"", "", "", ""}},
		{"{ noCookiesReset: true }", []string{"", "s=1", "s=1", "j=2; s=1"}},
	} {
		t.Run(c.options, func(t *testing.T) {
			s := loadScript(t, `import http from 'k6/http';
export const options = `+c.options+`;
export default function () {
  const got = http.get(__ENV.BASE + '/').body;
  if (got !== __ENV['WANT' + __ITER]) throw new Error('iteration ' + __ITER + ': the server got "' + got + '"');
  if (__ITER === 0) http.get(__ENV.BASE + '/set');
  if (__ITER === 2) http.cookieJar().set(__ENV.BASE + '/', 'j', '2');
}`, map[string]string{"BASE": srv.URL, "WANT0": c.want[0], "WANT1": c.want[1], "WANT2": c.want[2], "WANT3": c.want[3]})
			it := s.Iteration("x", ScenarioPlan{Exec: "default"}, nil).(load.SelfRecording)
			for i := range uint64(4) {
				var got samples
				it.DoRecord(context.Background(), load.Start{Scenario: "x", VU: 1, Iter: i, Called: time.Now()}, &got)
			}
			if n, first := s.IterationErrors(); n != 0 {
				t.Fatalf("%d iteration errors, the first: %s", n, first)
			}
		})
	}
}
