package k6script

import (
	"crypto/md5"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/knee-dev/knee/k6metric"
)

// digestParams reads an Authorization: Digest header's parameters (k6
// orders them at random, so tests compare them as a map).
func digestParams(h string) map[string]string {
	out := map[string]string{}
	rest, ok := strings.CutPrefix(h, "Digest ")
	if !ok {
		return nil
	}
	for _, p := range strings.Split(rest, ", ") {
		k, v, _ := strings.Cut(p, "=")
		out[k] = v
	}
	return out
}

func hexMD5(s string) string {
	sum := md5.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

// The RFC 2617 §3.5 example: HA1 and HA2 as the RFC's own worked values.
const (
	rfc2617HA1   = "939e7578ed9e3c518a452acee763bce9" // MD5("Mufasa:testrealm@host.com:Circle Of Life")
	rfc2617HA2   = "39aff3a2bab6126f332b942af96d3366" // MD5("GET:/dir/index.html")
	rfc2617Nonce = "dcd98b7102dd2f0e8b11d0f600bfb0c093"
)

// The Authorization k6's library sends: the challenge's parameters echoed
// (quotes on all but qop and nc), username, uri, cnonce, nc and response
// added; the response by RFC 2617 (MD5), with the example's values. A
// cnonce in the challenge is taken as the client's, so the RFC's examples
// come out exactly.
func TestDigestAuthorizationRFCExamples(t *testing.T) {
	fixed := func() string { return "fresh" }
	cases := []struct {
		name, challenge, user, pw, entity string
		want                              map[string]string
	}{
		{"RFC 2617 3.5", `Digest realm="testrealm@host.com", qop="auth", nonce="` + rfc2617Nonce + `", opaque="5ccc069c403ebaf9f0171e9517f40e41", cnonce="0a4f113b"`,
			"Mufasa", "Circle Of Life", "", map[string]string{
				"realm": `"testrealm@host.com"`, "qop": "auth", "nonce": `"` + rfc2617Nonce + `"`, "opaque": `"5ccc069c403ebaf9f0171e9517f40e41"`,
				"cnonce": `"0a4f113b"`, "username": `"Mufasa"`, "uri": `"/dir/index.html"`, "nc": "00000001",
				"response": `"6629fae49393a05397450978507c4ef1"`}},
		// RFC 7616 3.9.1's MD5 response (nonce and cnonce without '=').
		{"RFC 7616 3.9.1 MD5", `Digest realm="http-auth@example.org", qop="auth", algorithm=MD5, nonce="7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", cnonce="f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ"`,
			"Mufasa", "Circle of Life", "", map[string]string{
				"realm": `"http-auth@example.org"`, "qop": "auth", "algorithm": `"MD5"`, "nonce": `"7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v"`,
				"cnonce": `"f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ"`, "username": `"Mufasa"`, "uri": `"/dir/index.html"`, "nc": "00000001",
				"response": `"8ca523f5e9506fed4657c9700eebdbec"`}},
		// No qop: RFC 2069's MD5(HA1:nonce:HA2) = 670fd8c2..., though the
		// library still sends a cnonce and nc.
		{"no qop", `Digest realm="testrealm@host.com", nonce="` + rfc2617Nonce + `"`,
			"Mufasa", "Circle Of Life", "", map[string]string{
				"realm": `"testrealm@host.com"`, "nonce": `"` + rfc2617Nonce + `"`, "cnonce": `"fresh"`, "username": `"Mufasa"`,
				"uri": `"/dir/index.html"`, "nc": "00000001", "response": `"670fd8c2df070c60b045671b8b24ff02"`}},
		// auth-int hashes the 401's body as the entity: HA2 =
		// MD5("GET:/dir/index.html:" + MD5("no credentials")).
		{"auth-int hashes the challenge's body", `Digest realm="testrealm@host.com", qop="auth-int", nonce="` + rfc2617Nonce + `", cnonce="0a4f113b"`,
			"Mufasa", "Circle Of Life", "no credentials", map[string]string{
				"realm": `"testrealm@host.com"`, "qop": "auth-int", "nonce": `"` + rfc2617Nonce + `"`, "cnonce": `"0a4f113b"`,
				"username": `"Mufasa"`, "uri": `"/dir/index.html"`, "nc": "00000001", "response": `"7a53f6caa5d64204192d4ff91c99d09e"`}},
		// A qop list loses its comma and is neither auth nor auth-int: the
		// RFC 2069 response, with qop echoed as the library read it.
		{"qop list", `Digest realm="testrealm@host.com", qop="auth,auth-int", nonce="` + rfc2617Nonce + `"`,
			"Mufasa", "Circle Of Life", "", map[string]string{
				"realm": `"testrealm@host.com"`, "qop": "authauth-int", "nonce": `"` + rfc2617Nonce + `"`, "cnonce": `"fresh"`,
				"username": `"Mufasa"`, "uri": `"/dir/index.html"`, "nc": "00000001", "response": `"670fd8c2df070c60b045671b8b24ff02"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ch, err := parseDigestChallenge(c.challenge)
			if err != nil {
				t.Fatal(err)
			}
			got := digestParams(ch.authorization("GET", "/dir/index.html", c.entity, c.user, c.pw, fixed))
			if len(got) != len(c.want) {
				t.Errorf("got %d parameters %v, want %d", len(got), got, len(c.want))
			}
			for k, w := range c.want {
				if got[k] != w {
					t.Errorf("%s = %s, want %s", k, got[k], w)
				}
			}
		})
	}
}

// The challenge read as k6's library reads it: commas dropped, words at
// spaces, a value cut at its second '='; a word without '=' fails.
func TestParseDigestChallengeQuirks(t *testing.T) {
	cases := []struct {
		name, header string
		want         map[string]string // pure values; nil: an error
	}{
		{"spaces after commas", `Digest realm="r", nonce="n"`, map[string]string{"realm": "r", "nonce": "n"}},
		{"base64 padding lost", `Digest nonce="YWJjZA==", realm="r"`, map[string]string{"nonce": "YWJjZA", "realm": "r"}},
		{"no spaces: one word", `Digest realm="r",nonce="n"`, map[string]string{"realm": "rnonce"}},
		{"no header", ``, map[string]string{}},
		{"a value with a space", `Digest realm="my realm", nonce="n"`, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ch, err := parseDigestChallenge(c.header)
			if c.want == nil {
				if err == nil {
					t.Fatalf("read %v; want an error", ch.vals)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(ch.keys) != len(c.want) {
				t.Errorf("keys %v, want %v", ch.keys, c.want)
			}
			for k, w := range c.want {
				if got := ch.pure(k); got != w {
					t.Errorf("%s = %q, want %q", k, got, w)
				}
			}
		})
	}
}

// digestServer answers /dir/index.html as a digest-protected page: 401
// with challenge (body "no credentials") unless the Authorization is a
// Digest whose response is want's; open answers everything 200.
type digestServer struct {
	challenge string
	want      func(p map[string]string) string // the response expected, quoted
	open      bool
	mu        sync.Mutex
	authz     []string // each request's Authorization
}

func (d *digestServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a := r.Header.Get("Authorization")
	d.mu.Lock()
	d.authz = append(d.authz, a)
	d.mu.Unlock()
	if p := digestParams(a); d.open || p != nil && p["uri"] == `"`+r.URL.RequestURI()+`"` && p["response"] == d.want(p) {
		w.Write([]byte("welcome"))
		return
	}
	w.Header().Set("WWW-Authenticate", d.challenge)
	w.WriteHeader(http.StatusUnauthorized)
	w.Write([]byte("no credentials"))
}

// auth: 'digest' end to end, as k6 runs it: the first request goes
// without digest (the URL's credentials as Basic, by net/http's client),
// the 401 is answered once; both are http_reqs, the 401 judged expected,
// and res is the second request's. A server that wants no credentials
// answers the first request: one request, counted failed (k6 expects the
// 401 there). A wrong password: the second 401 fails, and is res.
func TestDigestAuthEndToEnd(t *testing.T) {
	const basic = "Basic TXVmYXNhOkNpcmNsZSBPZiBMaWZl" // base64("Mufasa:Circle Of Life")
	rfc := func(map[string]string) string { return `"6629fae49393a05397450978507c4ef1"` }
	fresh := func(p map[string]string) string { // RFC 2617 with the client's own cnonce
		return `"` + hexMD5(rfc2617HA1+":"+rfc2617Nonce+":00000001:"+strings.Trim(p["cnonce"], `"`)+":auth:"+rfc2617HA2) + `"`
	}
	cases := []struct {
		name, pw  string
		srv       *digestServer
		status    int
		reqs      int64   // http_reqs
		failed    float64 // http_req_failed's sum (count = reqs)
		firstAuth string  // the first request's Authorization
	}{
		{"RFC 2617 example", "Circle%20Of%20Life", &digestServer{challenge: `Digest realm="testrealm@host.com", qop="auth", nonce="` + rfc2617Nonce + `", opaque="5ccc069c403ebaf9f0171e9517f40e41", cnonce="0a4f113b"`, want: rfc},
			200, 2, 0, basic},
		{"fresh cnonce", "Circle%20Of%20Life", &digestServer{challenge: `Digest realm="testrealm@host.com", qop="auth", nonce="` + rfc2617Nonce + `"`, want: fresh},
			200, 2, 0, basic},
		{"no challenge", "Circle%20Of%20Life", &digestServer{open: true}, 200, 1, 1, basic},
		{"wrong password", "lion", &digestServer{challenge: `Digest realm="testrealm@host.com", qop="auth", nonce="` + rfc2617Nonce + `"`, want: fresh},
			401, 2, 1, "Basic TXVmYXNhOmxpb24="},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(c.srv)
			t.Cleanup(srv.Close)
			s := loadScript(t, `import http from 'k6/http';
export default function () {
  const r = http.get(__ENV.BASE.replace('http://', 'http://Mufasa:' + __ENV.PW + '@') + '/dir/index.html', { auth: 'digest' });
  if (r.status !== Number(__ENV.STATUS)) throw new Error('status ' + r.status + ' ' + r.error);
  if (r.url !== __ENV.BASE + '/dir/index.html') throw new Error('url ' + r.url);
  if (r.status === 200 && r.body !== 'welcome') throw new Error('body ' + r.body);
}`, map[string]string{"BASE": srv.URL, "PW": c.pw, "STATUS": strconv.Itoa(c.status)})
			runWS(t, s, 1)
			c.srv.mu.Lock()
			authz := append([]string(nil), c.srv.authz...)
			c.srv.mu.Unlock()
			if int64(len(authz)) != c.reqs {
				t.Fatalf("server got %d requests %q, want %d", len(authz), authz, c.reqs)
			}
			if authz[0] != c.firstAuth {
				t.Errorf("first Authorization %q, want %q", authz[0], c.firstAuth)
			}
			if n, _ := k6Count(t, s, k6metric.HTTPReqs); n != c.reqs {
				t.Errorf("http_reqs %d, want %d", n, c.reqs)
			}
			if n, sum := k6Count(t, s, k6metric.HTTPReqFailed); n != c.reqs || sum != c.failed {
				t.Errorf("http_req_failed %v of %d, want %v of %d", sum, n, c.failed, c.reqs)
			}
		})
	}
}

// http.batch answers the challenge too: two requests for the one asked,
// res the second's.
func TestDigestAuthInBatch(t *testing.T) {
	d := &digestServer{challenge: `Digest realm="testrealm@host.com", qop="auth", nonce="` + rfc2617Nonce + `", cnonce="0a4f113b"`,
		want: func(map[string]string) string { return `"6629fae49393a05397450978507c4ef1"` }}
	srv := httptest.NewServer(d)
	t.Cleanup(srv.Close)
	s := loadScript(t, `import http from 'k6/http';
export default function () {
  const [r] = http.batch([{ method: 'GET', url: __ENV.BASE.replace('http://', 'http://Mufasa:Circle%20Of%20Life@') + '/dir/index.html', params: { auth: 'digest' } }]);
  if (r.status !== 200) throw new Error('status ' + r.status + ' ' + r.error);
}`, map[string]string{"BASE": srv.URL})
	runWS(t, s, 1)
	if n, _ := k6Count(t, s, k6metric.HTTPReqs); n != 2 {
		t.Errorf("http_reqs %d, want 2", n)
	}
	if n, sum := k6Count(t, s, k6metric.HTTPReqFailed); n != 2 || sum != 0 {
		t.Errorf("http_req_failed %v of %d, want 0 of 2", sum, n)
	}
}
