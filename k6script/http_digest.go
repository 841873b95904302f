package k6script

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/knee-dev/knee/request"
)

// params auth: 'digest', as k6 v1.x does it (its httpext digest transport
// over the Soontao/goHttpDigestClient library): the request goes out as
// it is (net/http's client adding the URL's user:password as Basic); a 401
// answer is read for its challenge and the request sent once more with
// the Authorization it gives, to the same URL without the credentials.
// Both are requests in k6's metrics, the first judged expected when it is
// the 401 (k6 swaps the response callback for its first hop); res is the
// second one's, its timings too. There is no nonce cache: every request
// is challenged again.

// sendCall sends b's call, with the digest or NTLM handshake when b asks
// for it. It returns the replies to record appended to dst, in order,
// the response the last. It may run on another goroutine than the VU's
// (http.batch).
func (v *vu) sendCall(ctx context.Context, b *builtCall, conns *request.Conns, dst []request.Reply) []request.Reply {
	switch b.auth {
	case "ntlm":
		return append(dst, v.sendNTLM(ctx, b, conns)...)
	case "digest":
		return append(dst, v.sendDigest(ctx, b, conns)...)
	}
	dst = append(dst, request.Reply{})
	v.s.caller.DoTo(ctx, &b.call, b.jar, conns, &dst[len(dst)-1])
	return dst
}

// sendDigest sends b's call with the digest handshake, as sendCall's replies.
func (v *vu) sendDigest(ctx context.Context, b *builtCall, conns *request.Conns) []request.Reply {
	// The credentials leave the URL before the first request (k6's tags
	// and res.url never show them) and go as Basic, as net/http's client
	// adds them, unless the script set its own Authorization.
	first := b.call
	first.Discard = false // the challenge's body is the library's "entity" (qop auth-int)
	var user, pw string
	if u, err := url.Parse(b.call.URL); err == nil && u.User != nil {
		user = u.User.Username()
		pw, _ = u.User.Password()
		if first.Header.Get("Authorization") == "" {
			first.Header = first.Header.Clone()
			first.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(user+":"+pw)))
		}
		u.User = nil
		first.URL = u.String()
	}
	hops, onHop := 0, first.OnHop
	first.OnHop = func(h *request.Reply) {
		hops++
		if onHop != nil {
			onHop(h)
		}
	}
	rep := v.s.caller.Do(ctx, first, b.jar, conns)
	if rep.Err != nil || rep.Status != http.StatusUnauthorized {
		if b.call.Discard {
			rep.Body = nil
		}
		return []request.Reply{rep}
	}
	u, err := url.Parse(rep.URL)
	if err != nil { // the URL the request went to
		return []request.Reply{rep}
	}
	// k6 has dropped the credentials from the URL it was given, so a
	// challenge met after a redirect is answered with an empty user and
	// password, as here.
	if hops > 1 {
		user, pw = "", ""
	}
	ch, err := parseDigestChallenge(rep.Headers().Get("WWW-Authenticate"))
	if err != nil {
		// k6's library panics on such a header (the test dies); knee gives
		// the 401 back with the error.
		rep.Err, rep.ErrClass = err, request.ClassOther
		return []request.Reply{rep}
	}
	authz := ch.authorization(b.call.Method, u.RequestURI(), string(rep.Body), user, pw, newCnonce)
	again := b.call
	again.URL = u.String()
	again.Header = b.call.Header.Clone()
	again.Header.Set("Authorization", authz)
	again.MaxRedirects = max(b.call.MaxRedirects-(hops-1), 0) // the chain's redirects so far count
	if b.call.Discard {
		rep.Body = nil
	}
	return []request.Reply{rep, v.s.caller.Do(ctx, again, b.jar, conns)}
}

// firstHopExpected is k6's judgement of the first hop of a request with
// auth (the callback it puts in place for that hop alone), given the
// callback's own (ok): for digest the 401 is expected and anything else
// (a 200 from a server that wanted no credentials, a redirect, an error)
// counts as failed; for NTLM the 401 is expected besides what the
// callback expects (the connection may be authenticated already).
func firstHopExpected(auth string, hop *request.Reply, ok bool) bool {
	switch auth {
	case "digest":
		return hop.Status == http.StatusUnauthorized
	case "ntlm":
		return ok || hop.Status == http.StatusUnauthorized
	}
	return ok
}

// verdictOf is the callback's verdict of the i-th reply sendCall returned.
func (b *builtCall) verdictOf(i int, rep *request.Reply) int8 {
	verdict := b.callback.verdict(rep)
	if b.auth != "" && i == 0 && (!b.callback.set || b.callback.statuses != nil) {
		ok := verdict > 0 || verdict == 0 && rep.Err == nil && rep.Status < 400
		if firstHopExpected(b.auth, rep, ok) {
			return 1
		}
		return -1
	}
	return verdict
}

// digestChallenge is a WWW-Authenticate header read as k6's library reads
// it, its parameters in order: commas dropped, the rest split at spaces,
// the first word the scheme (never checked), each other word key=value
// with the value up to a second '=' (a base64 nonce loses its padding) and
// its quotes kept until used. A value with a space or a comma is not read
// as RFC 7616 has it, and neither is a parameter list without spaces.
type digestChallenge struct {
	keys []string
	vals map[string]string
}

func parseDigestChallenge(h string) (*digestChallenge, error) {
	ch := &digestChallenge{vals: map[string]string{}}
	words := strings.Split(strings.ReplaceAll(h, ",", ""), " ")
	if len(words) < 2 {
		return ch, nil // no parameters (or no header): all empty
	}
	for _, w := range words[1:] {
		kv := strings.Split(w, "=")
		if len(kv) < 2 {
			return nil, fmt.Errorf("digest auth: cannot read the challenge %q (the word %q has no '='; k6's library fails on it too)", h, w)
		}
		ch.set(kv[0], kv[1])
	}
	return ch, nil
}

func (c *digestChallenge) set(k, v string) {
	if _, ok := c.vals[k]; !ok {
		c.keys = append(c.keys, k)
	}
	c.vals[k] = v
}

// pure is a parameter's value with every double quote removed.
func (c *digestChallenge) pure(k string) string { return strings.ReplaceAll(c.vals[k], `"`, "") }

// authorization is the Authorization header k6 sends back (RFC 2617 with
// MD5 whatever the algorithm asked): the challenge's parameters echoed,
// then username, uri, cnonce, nc and response; qop and nc unquoted, every
// other value quoted. k6 orders them at random (a Go map); here the
// challenge's order, then those five. A cnonce or nc the challenge carries
// is used as it is; else the cnonce is a fresh random UUID's 32 hex digits
// and nc 00000001 (no nonce is used twice). entity is the 401's body, the
// library's stand-in for the request body under qop auth-int.
func (c *digestChallenge) authorization(method, uri, entity, user, pw string, cnonce func() string) string {
	qop, realm, nonce := c.pure("qop"), c.pure("realm"), c.pure("nonce")
	nc, cn := c.pure("nc"), c.pure("cnonce")
	if cn == "" {
		cn = cnonce()
	}
	if nc == "" {
		nc = "00000001"
	}
	ha1 := md5Hex(user + ":" + realm + ":" + pw)
	ha2 := md5Hex(method + ":" + uri)
	if qop == "auth-int" {
		ha2 = md5Hex(method + ":" + uri + ":" + md5Hex(entity))
	}
	// A qop list ("auth,auth-int", its comma dropped) is neither: the
	// response is then RFC 2069's, though qop, nc and cnonce are sent.
	resp := md5Hex(ha1 + ":" + nonce + ":" + ha2)
	if qop == "auth" || qop == "auth-int" {
		resp = md5Hex(ha1 + ":" + nonce + ":" + nc + ":" + cn + ":" + qop + ":" + ha2)
	}
	c.set("username", user)
	c.set("uri", uri)
	c.set("cnonce", cn)
	c.set("nc", nc)
	c.set("response", resp)
	parts := make([]string, 0, len(c.keys))
	for _, k := range c.keys {
		v := c.pure(k)
		if k != "qop" && k != "nc" {
			v = `"` + v + `"`
		}
		parts = append(parts, k+"="+v)
	}
	return "Digest " + strings.Join(parts, ", ")
}

// newCnonce is a random (version 4) UUID's 32 hex digits, k6's cnonce.
func newCnonce() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return hex.EncodeToString(b[:])
}
