// Package guard protects the HTTP endpoints knee opens (the live dashboard,
// a metrics endpoint): on a loopback address they are open to the local
// machine only; on any other address every request must carry a random
// token that knee prints at start. Every response carries a strict
// Content-Security-Policy and no-sniff, no-referrer, no-framing headers.
//
// A loopback endpoint also checks the Host header, so a web page the user
// visits cannot reach it through DNS rebinding (a name of the attacker's
// that resolves to 127.0.0.1). Every endpoint refuses a request that may
// change state (any method but GET, HEAD, OPTIONS) sent by a page of
// another site: a browser sends such a form or text/plain POST without
// asking first, with its Origin or Sec-Fetch-Site saying where it came
// from.
//
// A page with inline scripts or styles (the live dashboard) lists them with
// PolicyFor and serves it with WithPolicy; the default CSP allows none.
//
// Usage:
//
//	g, err := guard.For(addr)            // token iff addr is not loopback
//	ln, err := net.Listen("tcp", addr)
//	g.Announce(stdout, "dashboard", ln.Addr())
//	http.Serve(ln, g.Handler(mux))
package guard

import (
	"cmp"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// DefaultHost is where endpoints listen unless told otherwise.
const DefaultHost = "127.0.0.1"

// CSP is the Content-Security-Policy of every response: the page's own
// scripts, styles, images and fetches only; no inline script, no framing,
// no forms, no plugins.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// CookieName is the cookie a browser gets after its first visit with
// ?token=, so the page's own requests need not repeat it.
const CookieName = "knee_token"

// PolicyFor is CSP that also allows exactly the given inline scripts and
// styles (the text between <script> and </script>, <style> and </style>),
// by their SHA-256 hashes: a page built once (the live dashboard's) keeps
// its inline code and nothing injected runs.
func PolicyFor(scripts, styles []string) string {
	hashes := func(list []string) string {
		var b strings.Builder
		for _, s := range list {
			sum := sha256.Sum256([]byte(s))
			b.WriteString(" 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'")
		}
		return b.String()
	}
	return strings.Replace(strings.Replace(CSP,
		"script-src 'self'", "script-src 'self'"+hashes(scripts), 1),
		"style-src 'self'", "style-src 'self'"+hashes(styles), 1)
}

// Guard checks requests to one endpoint. The zero value guards a loopback
// endpoint (no token, loopback Host only).
type Guard struct {
	token  string // "" on loopback
	policy string // Content-Security-Policy; "" means CSP
}

// WithPolicy returns g serving policy (see PolicyFor) instead of CSP.
func (g *Guard) WithPolicy(policy string) *Guard {
	c := *g
	c.policy = policy
	return &c
}

// For returns the guard of an endpoint listening on addr (host:port): with
// a fresh random token unless the host is a loopback address. An empty host
// ("" or ":8080") listens on every interface, so it needs the token too.
func For(addr string) (*Guard, error) {
	if IsLoopback(addr) {
		return &Guard{}, nil
	}
	tok, err := NewToken()
	if err != nil {
		return nil, err
	}
	return &Guard{token: tok}, nil
}

// WithToken returns a guard requiring token (e.g. one the user chose).
func WithToken(token string) *Guard { return &Guard{token: token} }

// Token is the token requests must carry; "" when none is required.
func (g *Guard) Token() string { return g.token }

// NewToken returns 32 random bytes in hex.
func NewToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("guard: no randomness for the access token: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// IsLoopback reports whether addr's host is a loopback address or
// "localhost". A host that is empty or unspecified (0.0.0.0, ::) is not.
func IsLoopback(addr string) bool {
	host := addr
	if h, _, err := net.SplitHostPort(addr); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Announce prints where the endpoint is and, when a token is required, the
// URL that carries it (and how to send it from a scraper).
func (g *Guard) Announce(w io.Writer, what string, addr net.Addr) {
	if g.token == "" {
		fmt.Fprintf(w, "%s: http://%s/ (loopback only)\n", what, addr)
		return
	}
	fmt.Fprintf(w, "%s: http://%s/?token=%s\n", what, addr, g.token)
	fmt.Fprintf(w, "%s: listening beyond loopback; every request needs the token (?token=, or header Authorization: Bearer %s)\n", what, g.token)
}

// Handler wraps next: security headers on every response, then the token
// (or, on loopback, a loopback Host) checked before next sees the request.
func (g *Guard) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", cmp.Or(g.policy, CSP))
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Cache-Control", "no-store")
		if crossSite(r) {
			http.Error(w, "a request from another site's page is refused: this endpoint takes state-changing requests from its own pages and from clients that are not browsers", http.StatusForbidden)
			return
		}
		if g.token == "" {
			if !IsLoopback(r.Host) {
				http.Error(w, "this endpoint answers loopback names only (127.0.0.1, ::1, localhost)", http.StatusMisdirectedRequest)
				return
			}
			next.ServeHTTP(w, r)
			return
		}
		tok, fromQuery := g.presented(r)
		if subtle.ConstantTimeCompare([]byte(tok), []byte(g.token)) != 1 {
			h.Set("WWW-Authenticate", `Bearer realm="knee"`)
			http.Error(w, "missing or wrong token: use the URL knee printed at start (?token=...) or send Authorization: Bearer TOKEN", http.StatusUnauthorized)
			return
		}
		if fromQuery {
			http.SetCookie(w, &http.Cookie{Name: CookieName, Value: g.token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
		}
		next.ServeHTTP(w, r)
	})
}

// crossSite reports a state-changing request a browser sent from a page
// of another origin: Sec-Fetch-Site says cross-site or same-site, or Origin
// names another host than the one asked (or is "null", a sandboxed page or
// a file). Clients that are not browsers send neither header.
func crossSite(r *http.Request) bool {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return false
	}
	switch r.Header.Get("Sec-Fetch-Site") {
	case "cross-site", "same-site":
		return true
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return false
	}
	u, err := url.Parse(origin)
	return err != nil || u.Host == "" || !strings.EqualFold(u.Host, r.Host)
}

// presented returns the token r carries: Authorization: Bearer, the
// cookie, or ?token= (reported by fromQuery).
func (g *Guard) presented(r *http.Request) (tok string, fromQuery bool) {
	if a := r.Header.Get("Authorization"); len(a) > 7 && strings.EqualFold(a[:7], "bearer ") {
		return strings.TrimSpace(a[7:]), false
	}
	if c, err := r.Cookie(CookieName); err == nil {
		return c.Value, false
	}
	if q := r.URL.Query().Get("token"); q != "" {
		return q, true
	}
	return "", false
}
