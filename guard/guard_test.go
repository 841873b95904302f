package guard

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	neturl "net/url"
	"strings"
	"testing"
)

func TestIsLoopback(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:5080": true, "[::1]:80": true, "localhost:1": true, "127.1.2.3:9": true, "LOCALHOST": true,
		":5080": false, "0.0.0.0:5080": false, "[::]:80": false, "10.0.0.1:80": false, "example.com:80": false,
		"localhost.evil.test:80": false, "": false,
	} {
		if got := IsLoopback(addr); got != want {
			t.Errorf("IsLoopback(%q) = %v, want %v", addr, got, want)
		}
	}
}

func TestForTokenOnlyBeyondLoopback(t *testing.T) {
	g, err := For("127.0.0.1:0")
	if err != nil || g.Token() != "" {
		t.Fatalf("loopback: token %q, %v; want none", g.Token(), err)
	}
	a, err := For("0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := For(":0")
	if len(a.Token()) != 64 || a.Token() == b.Token() {
		t.Errorf("tokens %q and %q: want two different 64-hex-digit tokens", a.Token(), b.Token())
	}
}

// A real server on loopback, guarded as if it listened beyond it.
func TestHandlerToken(t *testing.T) {
	g := WithToken("s3cr3t-token")
	srv := httptest.NewServer(g.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "page") })))
	defer srv.Close()
	jar := &cookieJar{}
	client := &http.Client{Jar: jar}
	get := func(path, auth string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	for _, c := range []struct {
		path, auth string
		want       int
	}{
		{"/", "", http.StatusUnauthorized},
		{"/?token=wrong", "", http.StatusUnauthorized},
		{"/", "Bearer wrong", http.StatusUnauthorized},
		{"/", "Bearer s3cr3t-token", http.StatusOK},
		{"/metrics", "bearer s3cr3t-token", http.StatusOK},
	} {
		resp, body := get(c.path, c.auth)
		if resp.StatusCode != c.want {
			t.Errorf("GET %s (Authorization %q): %d %q, want %d", c.path, c.auth, resp.StatusCode, body, c.want)
		}
		if csp := resp.Header.Get("Content-Security-Policy"); csp != CSP {
			t.Errorf("GET %s: Content-Security-Policy %q, want %q", c.path, csp, CSP)
		}
		if resp.StatusCode != http.StatusOK && strings.Contains(body, "page") {
			t.Errorf("GET %s: refused but served the page", c.path)
		}
	}
	// The first visit with ?token= sets a cookie; later requests need nothing more.
	if resp, _ := get("/?token=s3cr3t-token", ""); resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /?token=: %d", resp.StatusCode)
	}
	if resp, body := get("/app.js", ""); resp.StatusCode != http.StatusOK || body != "page" {
		t.Errorf("GET /app.js with the cookie: %d %q", resp.StatusCode, body)
	}
	if c := jar.cookie; c == nil || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode {
		t.Errorf("cookie %+v: want HttpOnly, SameSite=Strict", c)
	}
}

// On loopback no token is needed, but a Host that is not a loopback name is
// refused: a page the user visits cannot reach the endpoint by DNS rebinding.
func TestHandlerLoopbackHost(t *testing.T) {
	g, _ := For("127.0.0.1:0")
	srv := httptest.NewServer(g.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "page") })))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	for host, want := range map[string]int{
		"127.0.0.1:" + port: http.StatusOK, "localhost:" + port: http.StatusOK, "[::1]:" + port: http.StatusOK,
		"rebind.attacker.test:" + port: http.StatusMisdirectedRequest,
	} {
		req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("Host %s: %d, want %d", host, resp.StatusCode, want)
		}
		if resp.Header.Get("Content-Security-Policy") != CSP || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("Host %s: security headers missing: %v", host, resp.Header)
		}
	}
}

func TestAnnounce(t *testing.T) {
	addr := &net.TCPAddr{IP: net.IPv4zero, Port: 5081}
	var b strings.Builder
	WithToken("abc123").Announce(&b, "dashboard", addr)
	if !strings.Contains(b.String(), "http://0.0.0.0:5081/?token=abc123") {
		t.Errorf("Announce: %q", b.String())
	}
}

// cookieJar keeps the one cookie the guard sets.
type cookieJar struct{ cookie *http.Cookie }

func (j *cookieJar) SetCookies(_ *neturl.URL, cs []*http.Cookie) {
	for _, c := range cs {
		if c.Name == CookieName {
			j.cookie = c
		}
	}
}

func (j *cookieJar) Cookies(*neturl.URL) []*http.Cookie {
	if j.cookie == nil {
		return nil
	}
	return []*http.Cookie{j.cookie}
}

// FuzzIsLoopback: never panics, and whatever it calls loopback is
// "localhost", an address of 127.0.0.0/8 or ::1, checked byte-wise.
func FuzzIsLoopback(f *testing.F) {
	for _, s := range []string{"127.0.0.1:80", "[::1]:1", "localhost", ":80", "[::ffff:127.0.0.1]:80", "0:0", "[", "a]:b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, addr string) {
		if !IsLoopback(addr) {
			return
		}
		host := addr
		if h, _, err := net.SplitHostPort(addr); err == nil {
			host = h
		}
		host = strings.Trim(host, "[]")
		ip := net.ParseIP(host)
		in127 := ip != nil && ip.To4() != nil && ip.To4()[0] == 127
		if !strings.EqualFold(host, "localhost") && !in127 && !ip.Equal(net.IPv6loopback) {
			t.Fatalf("IsLoopback(%q) = true for host %q", addr, host)
		}
	})
}

// Hashes computed with openssl dgst -sha256 -binary | base64.
func TestPolicyFor(t *testing.T) {
	p := PolicyFor([]string{"alert(1)"}, []string{"body{color:red}"})
	for _, want := range []string{
		"script-src 'self' 'sha256-bhHHL3z2vDgxUt0W3dWQOrprscmda2Y5pLsLg4GF+pI='",
		"style-src 'self' 'sha256-FcQqt3aNlV7AZnGV4zkQRVeCeJOxbMPnQSx258L803E='",
		"default-src 'none'", "frame-ancestors 'none'",
	} {
		if !strings.Contains(p, want) {
			t.Errorf("PolicyFor = %q; want it to contain %q", p, want)
		}
	}
	g := WithToken("t").WithPolicy(p)
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "/?token=t", nil)
	g.Handler(http.NotFoundHandler()).ServeHTTP(rec, req)
	if got := rec.Header().Get("Content-Security-Policy"); got != p {
		t.Errorf("served policy %q, want %q", got, p)
	}
}

// A page of another site can make a browser POST text/plain to a loopback
// endpoint without asking first; the guard refuses it by its Origin or
// Sec-Fetch-Site, and lets through the endpoint's own pages and clients
// that are not browsers (no such header). Reads are never refused for it.
func TestHandlerCrossSite(t *testing.T) {
	g, _ := For("127.0.0.1:0")
	srv := httptest.NewServer(g.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusCreated) })))
	defer srv.Close()
	self := srv.URL // http://127.0.0.1:PORT
	for _, tc := range []struct {
		name, method string
		header       map[string]string
		want         int
	}{
		{"no browser", http.MethodPost, nil, http.StatusCreated},
		{"own page", http.MethodPost, map[string]string{"Origin": self, "Sec-Fetch-Site": "same-origin"}, http.StatusCreated},
		{"foreign Origin", http.MethodPost, map[string]string{"Origin": "http://attacker.test", "Content-Type": "text/plain"}, http.StatusForbidden},
		{"null Origin", http.MethodPost, map[string]string{"Origin": "null"}, http.StatusForbidden},
		{"cross-site fetch", http.MethodDelete, map[string]string{"Sec-Fetch-Site": "cross-site"}, http.StatusForbidden},
		{"same-site, other port", http.MethodPut, map[string]string{"Origin": "http://127.0.0.1:1", "Sec-Fetch-Site": "same-site"}, http.StatusForbidden},
		{"cross-site read", http.MethodGet, map[string]string{"Origin": "http://attacker.test", "Sec-Fetch-Site": "cross-site"}, http.StatusCreated},
	} {
		req, _ := http.NewRequest(tc.method, self+"/api/orders", strings.NewReader(`{"isbn":"1"}`))
		for k, v := range tc.header {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, resp.StatusCode, tc.want)
		}
	}
}
