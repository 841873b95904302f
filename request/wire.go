package request

import (
	"bytes"
	"fmt"
	"net/http"
	"net/netip"
	"strconv"
	"unicode/utf8"

	"golang.org/x/net/http/httpguts"
)

// defaultUserAgent is what net/http sends when no User-Agent header is
// given; the lean client sends the same so both paths look alike to a target.
const defaultUserAgent = "Go-http-client/1.1"

// target is where a plain http:// URL sends: the authority as written (the
// Host header), the address to dial, and the request-target of the request
// line.
type target struct {
	authority, uri []byte
}

// leanPlan is what the lean client precomputes for one compiled request.
type leanPlan struct {
	static    *target // non-nil when the URL has no placeholders
	wire      []byte  // the whole request when nothing in it varies
	skip      []bool  // per header: net/http never sends it from Header
	hasUA     bool    // a User-Agent header replaces the default
	wantClose bool    // a Connection: close header: close after the response
	// replayable requests are sent again, once, when a reused connection
	// turns out closed before any byte of the response (as net/http does).
	replayable bool
}

// planLean prepares c for the lean client. ok is false when c must always
// go through net/http (its static URL or headers are unusual).
func planLean(c *compiled) (p leanPlan, ok bool) {
	p.skip = make([]bool, len(c.headers))
	switch c.method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		p.replayable = true
	}
	for i, h := range c.headers {
		switch h.key {
		case "Idempotency-Key", "X-Idempotency-Key":
			p.replayable = true
		case "Content-Length", "Transfer-Encoding", "Trailer":
			p.skip[i] = true // net/http writes these from the request's fields only
		case "User-Agent":
			p.hasUA = true
		case "Connection":
			p.wantClose = p.wantClose || hasCloseToken([]byte(h.val.Text()))
		}
	}
	if c.staticURL != nil {
		auth, uri, ok := splitURL([]byte(c.url.Text()))
		if !ok {
			return p, false
		}
		p.static = &target{authority: auth, uri: uri}
	}
	if p.static != nil && c.staticHeader != nil && c.host == nil && c.body.Static() {
		wire, ok := appendRequest(nil, c, &p, p.static.authority, p.static.uri, nil, c.staticBody)
		if !ok {
			return p, false
		}
		p.wire = wire
	}
	return p, true
}

// appendRequest renders the request head and body onto dst. values are the
// rendered header values in c.headers order; nil means the static ones.
// ok is false when a header value holds bytes net/http would refuse.
func appendRequest(dst []byte, c *compiled, p *leanPlan, host, uri []byte, values [][]byte, body []byte) ([]byte, bool) {
	dst = appendRequestHead(dst, c.method, uri, host)
	if !p.hasUA {
		dst = appendField(dst, "User-Agent", defaultUserAgent)
	}
	dst = appendContentLength(dst, c.method, body)
	sawUA := false
	for i, h := range c.headers {
		if p.skip[i] {
			continue
		}
		var v []byte
		if values != nil {
			v = values[i]
		} else {
			v = []byte(h.val.Text())
		}
		v = trimSpace(v)
		if !validHeaderValue(v) {
			return dst, false
		}
		if h.key == "User-Agent" {
			// net/http sends only the first User-Agent, and none when it is empty.
			if sawUA || len(v) == 0 {
				sawUA = true
				continue
			}
			sawUA = true
		}
		dst = appendField(dst, h.key, v)
	}
	return appendBody(dst, body), true
}

// The request-rendering core of the lean client (appendRequest, for Do
// and the event loop) and of Conns (Conns.render): each writes its own
// fields in its own order through these.

// appendRequestHead appends the request line and the Host field.
func appendRequestHead[U, H string | []byte](dst []byte, method string, uri U, host H) []byte {
	dst = append(dst, method...)
	dst = append(dst, ' ')
	dst = append(dst, uri...)
	dst = append(dst, " HTTP/1.1\r\nHost: "...)
	dst = append(dst, host...)
	return append(dst, "\r\n"...)
}

// appendField appends one header field.
func appendField[V string | []byte](dst []byte, key string, value V) []byte {
	dst = append(dst, key...)
	dst = append(dst, ": "...)
	dst = append(dst, value...)
	return append(dst, "\r\n"...)
}

// appendContentLength appends Content-Length where net/http sends it:
// with a body, and for POST, PUT and PATCH even without one.
func appendContentLength(dst []byte, method string, body []byte) []byte {
	if len(body) > 0 || method == http.MethodPost || method == http.MethodPut || method == http.MethodPatch {
		dst = append(dst, "Content-Length: "...)
		dst = strconv.AppendInt(dst, int64(len(body)), 10)
		dst = append(dst, "\r\n"...)
	}
	return dst
}

// appendBody ends the head and appends the body.
func appendBody(dst, body []byte) []byte {
	dst = append(dst, "\r\n"...)
	return append(dst, body...)
}

// splitURL splits a rendered plain http:// URL into its authority and its
// request-target. ok is false for anything the lean client leaves to
// net/http: another scheme, user info, a fragment, bytes that net/url would
// escape or reject. For what it accepts, the request-target is exactly what
// net/http would send.
func splitURL(u []byte) (authority, uri []byte, ok bool) {
	const scheme = "http://"
	if len(u) < len(scheme) || string(u[:len(scheme)]) != scheme {
		return nil, nil, false
	}
	rest := u[len(scheme):]
	end := 0
	for end < len(rest) && rest[end] != '/' && rest[end] != '?' {
		end++
	}
	authority, uri = rest[:end], rest[end:]
	if !validAuthority(authority) {
		return nil, nil, false
	}
	if len(uri) == 0 {
		return authority, []byte("/"), true
	}
	inQuery := false
	for i := 0; i < len(uri); i++ {
		ch := uri[i]
		switch {
		case ch == '?':
			inQuery = true
		case ch <= ' ' || ch >= 0x7f || ch == '#':
			return nil, nil, false
		case inQuery:
		case ch == '%':
			if i+2 >= len(uri) || !isHex(uri[i+1]) || !isHex(uri[i+2]) {
				return nil, nil, false
			}
		case !pathByte(ch):
			return nil, nil, false
		}
	}
	if uri[0] == '?' {
		return authority, append([]byte("/"), uri...), true
	}
	return authority, uri, true
}

// pathByte reports whether net/url leaves ch in a path as written.
func pathByte(ch byte) bool {
	if isNameChar(ch) {
		return true
	}
	switch ch {
	case '-', '.', '~', '!', '$', '&', '\'', '(', ')', '*', '+', ',', ';', '=', ':', '@', '/', '[', ']':
		return true
	}
	return false
}

// validAuthority accepts host[:port] with an ASCII name, an IPv4 address or
// a bracketed IPv6 address, and a numeric port.
func validAuthority(a []byte) bool {
	host, port := a, []byte(nil)
	if i := lastColonOutsideBrackets(a); i >= 0 {
		host, port = a[:i], a[i+1:]
		if len(port) == 0 || len(port) > 5 {
			return false
		}
		for _, ch := range port {
			if ch < '0' || ch > '9' {
				return false
			}
		}
	}
	if len(host) == 0 {
		return false
	}
	if host[0] == '[' {
		if len(host) < 3 || host[len(host)-1] != ']' {
			return false
		}
		ip, err := netip.ParseAddr(string(host[1 : len(host)-1]))
		return err == nil && ip.Is6() && ip.Zone() == ""
	}
	for _, ch := range host {
		if !isNameChar(ch) && ch != '-' && ch != '.' {
			return false
		}
	}
	return true
}

func lastColonOutsideBrackets(a []byte) int {
	for i := len(a) - 1; i >= 0; i-- {
		switch a[i] {
		case ':':
			return i
		case ']':
			return -1
		}
	}
	return -1
}

// dialAddr is the authority with the default port added when it has none.
func dialAddr(authority []byte) string {
	if lastColonOutsideBrackets(authority) >= 0 {
		return string(authority)
	}
	return string(authority) + ":80"
}

// leanHost is the Host header net/http would send for a rendered Host
// header: non-ASCII names in punycode (IDNA). ok is false when net/http
// must handle it: a name IDNA refuses or an invalid Host (Do then reports
// the error), or an IPv6 zone, which net/http removes.
func leanHost(host []byte) ([]byte, bool) {
	for _, ch := range host {
		if ch >= utf8.RuneSelf {
			h, err := httpguts.PunycodeHostPort(string(host))
			if err != nil {
				return nil, false
			}
			host = []byte(h)
			break
		}
	}
	if !httpguts.ValidHostHeader(string(host)) || bytes.IndexByte(host, '%') >= 0 && bytes.IndexByte(host, '[') >= 0 {
		return nil, false
	}
	return host, true
}

// checkHost returns the Host header net/http sends for host, or why it is
// refused: a name IDNA cannot convert, or bytes a Host header cannot hold
// (net/http would send an empty Host instead; a load test must not).
func checkHost(host string) (string, error) {
	h, err := httpguts.PunycodeHostPort(host)
	if err != nil {
		return "", fmt.Errorf("Host header %q: %w", host, err)
	}
	if !httpguts.ValidHostHeader(h) {
		return "", fmt.Errorf("Host header %q is not a valid host[:port]", host)
	}
	return h, nil
}

func isHex(ch byte) bool {
	return '0' <= ch && ch <= '9' || 'a' <= ch && ch <= 'f' || 'A' <= ch && ch <= 'F'
}

// validHeaderValue reports whether v has no control bytes but tab, as
// net/http requires of header values (the lean client's rendered values,
// Conns' header names and values).
func validHeaderValue[T string | []byte](v T) bool {
	for i := 0; i < len(v); i++ {
		if ch := v[i]; ch < ' ' && ch != '\t' || ch == 0x7f {
			return false
		}
	}
	return true
}

func trimSpace(v []byte) []byte {
	for len(v) > 0 && (v[0] == ' ' || v[0] == '\t') {
		v = v[1:]
	}
	for len(v) > 0 && (v[len(v)-1] == ' ' || v[len(v)-1] == '\t') {
		v = v[:len(v)-1]
	}
	return v
}

// hasCloseToken reports whether a Connection header value lists "close".
func hasCloseToken(v []byte) bool { return hasToken(v, "close") }

// equalFold compares b to the lower-case ASCII s, ignoring b's case.
func equalFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range b {
		ch := b[i]
		if 'A' <= ch && ch <= 'Z' {
			ch += 'a' - 'A'
		}
		if ch != s[i] {
			return false
		}
	}
	return true
}
