package request

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"sync/atomic"
	"time"
)

// Call is one fully rendered request, as a script builds it at run time
// (package k6script): no templates, no weights.
type Call struct {
	Method  string
	URL     string
	Header  http.Header
	Body    []byte
	Timeout time.Duration // 0 means DefaultTimeout
	// MaxRedirects is how many redirects to follow; 0 follows none.
	MaxRedirects int
	// Discard drops the response body (counted, not kept).
	Discard bool
	// Cookies are sent with every request of the call, before the jar's
	// (k6's order, lib/netext/httpext/request.go SetRequestCookies).
	Cookies []*http.Cookie
	// OnHop, when set, is given every request of the redirect chain (the
	// last one too) with its own timings and bytes, as k6 counts each hop
	// as a request.
	OnHop func(hop *Reply)
}

// Timings are k6's phases of one request (k6's Response.timings), measured
// with net/http's client trace as k6's httpext tracer does: Blocked is from
// asking for a connection to having one (a new one's connect and TLS
// handshake included), Sending from the connection being ready (after the
// handshake) to the request written, Waiting to the first response byte,
// Receiving to the body's end. Duration is Sending+Waiting+Receiving, never
// the connect or handshake.
type Timings struct {
	Blocked, Connecting, TLSHandshaking, Sending, Waiting, Receiving, Duration time.Duration
}

// Reply is what a Call got back. Err is nil for any HTTP status.
type Reply struct {
	Status int
	Proto  string
	URL    string // the final URL, after redirects
	// header is the response's header fields, read with Headers: a
	// Reply of Conns has it made from fields on the first call.
	header http.Header
	fields fields // the fields as Conns read them, until header is made
	Body   []byte // nil when the Call discarded it
	// SentCookies are the cookies the first request of the chain carried:
	// the call's own, then the jar's.
	SentCookies []*http.Cookie
	// TLSVersion and TLSCipherSuite are the connection's (crypto/tls
	// constants); 0 over plain http://.
	TLSVersion, TLSCipherSuite uint16
	BytesIn                    int64
	BytesOut                   int64
	Timings                    Timings
	Sent                       time.Time // the first byte of the request is about to be written
	Done                       time.Time // the whole response arrived (see the package doc's receive times)
	Err                        error
	ErrClass                   string // see Classify; "" when Err is nil

	// OCSP is the OCSP response the server stapled to its certificate
	// (DER; nil when none, or over plain http://).
	OCSP []byte
	// RemoteAddr is the connection's peer (nil when none was had).
	RemoteAddr net.Addr
}

// Headers is the response's header fields, made on the first call when
// Conns read the response: most scripts never ask.
func (r *Reply) Headers() http.Header {
	if r.fields.head {
		r.header, r.fields = r.fields.header(), fields{}
	}
	return r.header
}

// Caller sends Calls through one transport (request.NewTransport), shared
// by every VU of a script. It is safe for concurrent use.
type Caller struct {
	rt    http.RoundTripper
	owned *http.Transport
}

// NewCaller returns a Caller over a transport built from o.
func NewCaller(o TransportOptions) *Caller {
	t := NewTransport(o)
	return &Caller{rt: t, owned: t}
}

// Close closes the idle connections of the Caller's transport.
func (c *Caller) Close() {
	if c.owned != nil {
		c.owned.CloseIdleConnections()
	}
}

// Do sends call, following up to call.MaxRedirects redirects, and reads the
// whole response. Sent and Done bound the last request of the redirect
// chain's send and its response's end; the service time is Done-Sent of the
// first request to the last response (what k6 counts as one request's
// duration is per hop; here the chain is one Reply). jar, when not nil,
// gives and takes the cookies. conns, when not nil, are the calling VU's
// own connections: plain http:// requests go through them, on the caller's
// goroutine; the rest through the shared net/http transport.
func (c *Caller) Do(ctx context.Context, call Call, jar http.CookieJar, conns *Conns) Reply {
	var rep Reply
	c.DoTo(ctx, &call, jar, conns, &rep)
	return rep
}

// DoTo is Do with the Reply written to rep, which the caller may keep in
// an object of its own: a script's request then allocates no Reply.
func (c *Caller) DoTo(ctx context.Context, call *Call, jar http.CookieJar, conns *Conns, rep *Reply) {
	timeout := call.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	method := call.Method
	if method == "" {
		method = http.MethodGet
	}
	var u *url.URL
	var err error
	if conns != nil {
		u, err = conns.parse(call.URL)
	} else {
		u, err = url.Parse(call.URL)
	}
	if err == nil && u.Scheme != "http" && u.Scheme != "https" {
		// net/http's Transport refuses it once the client has handed it
		// over, so a k6 script's transport counts it as a request
		// (k6's lib/netext/httpext/transport.go RoundTrip): a hop.
		now := time.Now()
		*rep = Reply{URL: call.URL, Sent: now, Done: now, Err: &SchemeError{Scheme: u.Scheme}, ErrClass: ClassOther}
		if call.OnHop != nil {
			call.OnHop(rep)
		}
		return
	}
	if err != nil {
		now := time.Now()
		*rep = Reply{URL: call.URL, Sent: now, Done: now, Err: err, ErrClass: ClassOther}
		return
	}
	body := call.Body
	var sent time.Time // the chain's first send
	var sentCookies []*http.Cookie
	var bytesOut, bytesIn int64 // the hops' before this one
	for hop := 0; ; hop++ {
		// Each hop is written to rep itself, handed to OnHop as it came,
		// then given the chain's first send and its bytes so far.
		if authority, ok := leanAuthority(u); ok && conns != nil && validCallHeaders(call.Header) {
			*rep = conns.once(ctx, authority, method, u, call.Header, body, call.Discard, jar, call.Cookies, timeout)
		} else {
			rctx, cancel := context.WithTimeout(ctx, timeout)
			*rep = c.once(rctx, method, u, urlCredentials(u, call.Header), body, call.Discard, jar, call.Cookies)
			cancel()
		}
		if call.OnHop != nil {
			call.OnHop(rep)
		}
		if hop == 0 {
			sent, sentCookies = rep.Sent, rep.SentCookies
		} else {
			rep.Sent, rep.SentCookies = sent, sentCookies
			rep.BytesOut += bytesOut
			rep.BytesIn += bytesIn
		}
		bytesOut, bytesIn = rep.BytesOut, rep.BytesIn
		if rep.Err != nil {
			if ctx.Err() != nil {
				rep.Err = fmt.Errorf("%w: %w", ErrInterrupted, rep.Err)
				rep.ErrClass = ClassOther
			}
			return
		}
		if hop >= call.MaxRedirects || !isRedirect(rep.Status) {
			return
		}
		loc := rep.Headers().Get("Location")
		if loc == "" {
			return
		}
		next, err := u.Parse(loc)
		if err != nil {
			return
		}
		u = next
		if rep.Status == http.StatusSeeOther || ((rep.Status == http.StatusMovedPermanently || rep.Status == http.StatusFound) && method == http.MethodPost) {
			method, body = http.MethodGet, nil
		}
	}
}

// urlCredentials is h with the URL's user:password as Basic auth, as
// net/http's Client (and so k6) sends them: only when h has no
// Authorization of its own. The Transport alone would drop them.
func urlCredentials(u *url.URL, h http.Header) http.Header {
	if u.User == nil || h.Get("Authorization") != "" {
		return h
	}
	pw, _ := u.User.Password()
	h = h.Clone()
	if h == nil {
		h = http.Header{}
	}
	h.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(u.User.Username()+":"+pw)))
	return h
}

func isRedirect(status int) bool {
	switch status {
	case 301, 302, 303, 307, 308:
		return true
	}
	return false
}

// once sends one request and reads its response.
func (c *Caller) once(ctx context.Context, method string, u *url.URL, h http.Header, body []byte, discard bool, jar http.CookieJar, extra []*http.Cookie) Reply {
	rep := Reply{URL: u.String()}
	// The client trace as k6's httpext tracer keeps it: the hooks may run
	// on the transport's dialing goroutine (atomics), a phase's first
	// report wins, and a connection handed over from the pool resets the
	// connect and handshake marks (a dial this request started may finish
	// later for another).
	//
	// Every mark is on the monotonic clock, as nanoseconds since base (plus
	// one, so that 0 means unset): the wall clock may be slewed between two
	// marks, and a phase from wall-clock marks could then outgrow the
	// monotonic blocked time that holds it.
	var (
		base                  = time.Now()
		start                 = time.Now()
		gotConn               time.Time
		connStart, connDone   atomic.Int64
		tlsStartNs, tlsDoneNs atomic.Int64
		wroteNs, firstByteNs  atomic.Int64
		wire                  wireMeter
		remote                net.Addr
	)
	mono := func(t time.Time) int64 { return int64(t.Sub(base)) + 1 }
	first := func(a *atomic.Int64) { a.CompareAndSwap(0, mono(time.Now())) }
	trace := &httptrace.ClientTrace{
		GetConn:      func(string) { start = time.Now() },
		ConnectStart: func(string, string) { first(&connStart) },
		ConnectDone: func(_, _ string, err error) {
			if err == nil {
				first(&connDone)
			}
		},
		TLSHandshakeStart: func() { first(&tlsStartNs) },
		TLSHandshakeDone: func(_ tls.ConnectionState, err error) {
			if err == nil {
				first(&tlsDoneNs)
			}
		},
		GotConn: func(info httptrace.GotConnInfo) {
			wire.gotConn(info)
			remote = info.Conn.RemoteAddr()
			gotConn = time.Now()
			now := mono(gotConn)
			_, isTLS := info.Conn.(*tls.Conn)
			set := func(a *atomic.Int64) { a.CompareAndSwap(0, now) }
			if info.Reused {
				set = func(a *atomic.Int64) { a.Store(now) }
			}
			set(&connStart)
			set(&connDone)
			if isTLS {
				set(&tlsStartNs)
				set(&tlsDoneNs)
			}
		},
		WroteRequest: func(info httptrace.WroteRequestInfo) {
			if info.Err == nil {
				wroteNs.Store(mono(time.Now()))
			}
		},
		GotFirstResponseByte: func() { first(&firstByteNs) },
	}
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), method, u.String(), bytes.NewReader(body))
	if err != nil {
		rep.Sent = time.Now()
		rep.Done = rep.Sent
		rep.Err, rep.ErrClass = err, ClassOther
		return rep
	}
	if len(body) == 0 {
		req.Body, req.GetBody = http.NoBody, nil
		req.ContentLength = 0
	}
	for k, vs := range h {
		if http.CanonicalHeaderKey(k) == "Host" && len(vs) > 0 {
			req.Host = vs[0]
			continue
		}
		req.Header[k] = vs
	}
	cks := cookiesToSend(jar, u, extra)
	for _, ck := range cks {
		req.AddCookie(ck)
	}
	rep.SentCookies = cks
	rep.Sent = time.Now()
	resp, err := c.rt.RoundTrip(req)
	rep.RemoteAddr = remote
	if err == nil {
		_, rep.Body, err = readBody(resp.Body, discard, resp.ContentLength)
		if cerr := resp.Body.Close(); err == nil {
			err = cerr
		}
		rep.Status, rep.Proto, rep.header = resp.StatusCode, resp.Proto, resp.Header
		if resp.TLS != nil {
			rep.TLSVersion, rep.TLSCipherSuite = resp.TLS.Version, resp.TLS.CipherSuite
			rep.OCSP = resp.TLS.OCSPResponse
		}
		if jar != nil {
			if cks := resp.Cookies(); len(cks) > 0 {
				jar.SetCookies(u, cks)
			}
		}
	}
	rep.Done = time.Now()
	rep.BytesIn, rep.BytesOut = wire.bytes()
	if err != nil {
		rep.Err, rep.ErrClass = err, Classify(err) // a deadline is ClassTimeout
	}
	t := &rep.Timings
	if !gotConn.IsZero() && gotConn.After(start) {
		t.Blocked = gotConn.Sub(start)
	}
	ns := func(a *atomic.Int64) time.Duration { return time.Duration(a.Load()) }
	if connStart.Load() != 0 && connDone.Load() != 0 {
		t.Connecting = ns(&connDone) - ns(&connStart)
	}
	if tlsStartNs.Load() != 0 && tlsDoneNs.Load() != 0 {
		t.TLSHandshaking = ns(&tlsDoneNs) - ns(&tlsStartNs)
	}
	done := time.Duration(mono(rep.Done))
	if wrote := ns(&wroteNs); wrote != 0 {
		switch { // sending counts from the handshake's end, else the connect's
		case tlsDoneNs.Load() != 0:
			t.Sending = wrote - ns(&tlsDoneNs)
		case connDone.Load() != 0:
			t.Sending = wrote - ns(&connDone)
		case !gotConn.IsZero():
			t.Sending = wrote - time.Duration(mono(gotConn))
		}
		if fb := ns(&firstByteNs); fb == 0 {
			t.Waiting = done - wrote // no reply: waited until it failed
		} else if fb > wrote {
			t.Waiting = fb - wrote
		}
	}
	if fb := ns(&firstByteNs); fb != 0 {
		t.Receiving = done - fb
	}
	t.Duration = t.Sending + t.Waiting + t.Receiving
	return rep
}

// Buffers for a kept body: one of its Content-Length up to sizedBodyMax (a
// HEAD's or a lying server's length must not cost more), else grown from
// minBodyBuf as it is read.
const (
	sizedBodyMax = 1 << 20
	minBodyBuf   = 512
)

// readBody reads a response body whole: counted and dropped when discard
// is set, else kept (never nil then). size is the body's Content-Length,
// -1 when unknown.
func readBody(body io.Reader, discard bool, size int64) (n int64, kept []byte, err error) {
	if discard {
		n, err = io.Copy(io.Discard, body)
		return n, nil, err
	}
	if body == http.NoBody {
		return 0, []byte{}, nil
	}
	c := minBodyBuf
	if size >= 0 && size < sizedBodyMax {
		c = int(size) + 1 // one byte more: the read that finds the end needs no growth
	}
	b := make([]byte, 0, c)
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)] // room for the next read
		}
		m, rerr := body.Read(b[len(b):cap(b)])
		b = b[:len(b)+m]
		if rerr != nil {
			if rerr == io.EOF {
				rerr = nil
			}
			return int64(len(b)), b, rerr
		}
	}
}

// cookiesToSend are a request's cookies: the call's own, then the jar's
// for u, as k6 adds them (a server reading the first of a name gets the
// call's).
func cookiesToSend(jar http.CookieJar, u *url.URL, own []*http.Cookie) []*http.Cookie {
	if jar == nil {
		return own
	}
	fromJar := jar.Cookies(u)
	if len(own) == 0 {
		return fromJar
	}
	return append(append(make([]*http.Cookie, 0, len(own)+len(fromJar)), own...), fromJar...)
}

// SchemeError is a URL whose scheme is neither http nor https (a relative
// URL too: no scheme), in net/http Transport's words.
type SchemeError struct{ Scheme string }

func (e *SchemeError) Error() string { return fmt.Sprintf("unsupported protocol scheme %q", e.Scheme) }
