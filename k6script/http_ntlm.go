package k6script

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"

	"github.com/Azure/go-ntlmssp"

	"github.com/knee-dev/knee/request"
)

// params auth: 'ntlm', as k6 v1.8.1 does it (its httpext request wraps the
// VU's transport in go-ntlmssp v0.1.1's Negotiator): the credentials are
// the Basic ones net/http's client would send (the URL's user:password, or
// an Authorization: Basic header the script set); without them the
// request goes out as it is. With them it goes out first with no
// Authorization at all, in case the connection is already authenticated;
// a 401 asking for NTLM or Negotiate (WWW-Authenticate, NTLM preferred) is
// answered with a NEGOTIATE message, the 401 that brings the server's
// CHALLENGE with the AUTHENTICATE message (NTLMv2, the user's DOMAIN\ part
// as its domain), each on the VU's connection to the host, since NTLM
// authenticates the connection. Every step is a request in k6's metrics;
// the first is judged expected when it is the 401 (k6 widens the response
// callback for that hop alone); res is the last step's.

// ntlmCreds are the credentials the Negotiator would read: the script's
// Authorization if it is Basic, else the URL's user:password (net/http's
// client sets them as Basic only when there is no Authorization); ok is
// false without them, or under an Authorization of another scheme.
func ntlmCreds(call *request.Call) (user, pw string, ok bool) {
	if h := call.Header.Get("Authorization"); h != "" {
		r := http.Request{Header: http.Header{"Authorization": {h}}}
		return r.BasicAuth()
	}
	u, err := url.Parse(call.URL)
	if err != nil || u.User == nil {
		return "", "", false
	}
	pw, _ = u.User.Password()
	return u.User.Username(), pw, true
}

// ntlmAuth is a WWW-Authenticate challenge as the Negotiator picks it: of
// the headers, the one whose scheme comes first in NTLM, Negotiate,
// Basic; its scheme and its data.
func ntlmAuth(h http.Header) (scheme, data string) {
	best := -1
	for _, v := range h.Values("Www-Authenticate") {
		for i, s := range []string{"NTLM", "Negotiate", "Basic"} {
			if (v == s || strings.HasPrefix(v, s+" ")) && (best == -1 || i < best) {
				best = i
				scheme, data, _ = strings.Cut(v, " ")
				break
			}
		}
	}
	return scheme, data
}

func isNTLMScheme(s string) bool { return s == "NTLM" || s == "Negotiate" }

// sendNTLM sends b's call with the NTLM handshake, as sendCall's replies:
// every step's, in order, the response the last. Where k6's Negotiator
// gives back the first 401 (a later step failed, or its challenge could
// not be read), knee gives the last step's reply.
func (v *vu) sendNTLM(ctx context.Context, b *builtCall, conns *request.Conns) []request.Reply {
	user, pw, ok := ntlmCreds(&b.call)
	if !ok {
		return []request.Reply{v.s.caller.Do(ctx, b.call, b.jar, conns)}
	}
	step := b.call
	step.Header = b.call.Header.Clone()
	step.Header.Del("Authorization")
	if u, err := url.Parse(b.call.URL); err == nil && u.User != nil {
		u.User = nil // k6's tags and res.url never show them
		step.URL = u.String()
	}
	hops, onHop := 0, step.OnHop
	step.OnHop = func(h *request.Reply) {
		hops++
		if onHop != nil {
			onHop(h)
		}
	}
	reps := []request.Reply{v.s.caller.Do(ctx, step, b.jar, conns)}
	first := &reps[0]
	if first.Err != nil || first.Status != http.StatusUnauthorized {
		return reps
	}
	// The handshake goes to where the request ended up, the redirects so
	// far counted against the call's limit.
	step.URL = first.URL
	step.MaxRedirects = max(b.call.MaxRedirects-(hops-1), 0)
	scheme, _ := ntlmAuth(first.Headers())
	if !isNTLMScheme(scheme) {
		return reps
	}
	neg, err := ntlmssp.NewNegotiateMessage("", "")
	if err != nil {
		return reps
	}
	step.Header.Set("Authorization", scheme+" "+base64.StdEncoding.EncodeToString(neg))
	reps = append(reps, v.s.caller.Do(ctx, step, b.jar, conns))
	second := &reps[1]
	if second.Err != nil || second.Status != http.StatusUnauthorized {
		return reps
	}
	scheme, data := ntlmAuth(second.Headers())
	challenge, err := base64.StdEncoding.DecodeString(data)
	if !isNTLMScheme(scheme) || err != nil || len(challenge) == 0 {
		return reps
	}
	msg, err := ntlmssp.NewAuthenticateMessage(challenge, user, pw, nil)
	if err != nil {
		return reps
	}
	step.Header.Set("Authorization", scheme+" "+base64.StdEncoding.EncodeToString(msg))
	return append(reps, v.s.caller.Do(ctx, step, b.jar, conns))
}
