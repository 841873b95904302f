package request

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Conns are one VU's own keep-alive connections for plain http:// Calls:
// the request is written and the response read on the VU's goroutine,
// without net/http's per-connection goroutines, with raw system calls
// where it can (rawio_linux.go), as the lean client does. Not safe for
// concurrent use: each VU has its own.
type Conns struct {
	idle   map[string]*callConn // by authority (host:port); a connection stays here while it is used
	out    []byte
	dialer net.Dialer
	last   parsedURL // the last URL parsed: a script often sends the same one
}

// parsedURL is a URL string, parsed, rendered back (Reply.URL) and its
// request line's target. The *url.URL is shared by the requests that send
// it, so it is only read.
type parsedURL struct {
	raw, str, uri string
	u             *url.URL
}

// parse is url.Parse(raw), from the last call's work when raw is the same.
func (cs *Conns) parse(raw string) (*url.URL, error) {
	if cs.last.u != nil && cs.last.raw == raw {
		return cs.last.u, nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, err
	}
	cs.last = parsedURL{raw: raw, str: u.String(), uri: u.RequestURI(), u: u}
	return u, nil
}

// urlString is u.String().
func (cs *Conns) urlString(u *url.URL) string {
	if u == cs.last.u {
		return cs.last.str
	}
	return u.String()
}

// requestURI is u.RequestURI().
func (cs *Conns) requestURI(u *url.URL) string {
	if u == cs.last.u {
		return cs.last.uri
	}
	return u.RequestURI()
}

// NewConns returns an empty set of connections.
func NewConns() *Conns {
	return &Conns{idle: map[string]*callConn{}, dialer: net.Dialer{KeepAlive: 30 * time.Second}}
}

// Close closes every idle connection.
func (cs *Conns) Close() {
	for k, c := range cs.idle {
		c.close()
		delete(cs.idle, k)
	}
}

type callConn struct {
	conn net.Conn
	rw   io.ReadWriter // conn's reads and writes: raw system calls where they can be
	br   *bufio.Reader // reads cr
	cr   countReader   // rw's reads, counted
	s    scratch       // the response parser's space
	ctxWatch
}

// watch makes ctx's end interrupt c; false when ctx already has.
func (c *callConn) watch(ctx context.Context) bool {
	return c.follow(ctx, c.conn) && ctx.Err() == nil
}

func (c *callConn) close() {
	c.unfollow()
	c.conn.Close()
}

// aheadWriter writes a request inside the read of its reply (rawIO).
type aheadWriter interface {
	writeAhead(p []byte)
	written() (n int, at time.Time, err error)
}

// leanAuthority is u's host:port when a VU connection can send to it.
func leanAuthority(u *url.URL) (string, bool) {
	if u.Scheme != "http" || u.Host == "" || u.User != nil {
		return "", false
	}
	host, port := u.Hostname(), u.Port()
	if port == "" {
		port = "80"
	} else if u.Host[0] != '[' && strings.Count(u.Host, ":") == 1 {
		return u.Host, true // already host:port, as net.JoinHostPort would write it
	}
	return net.JoinHostPort(host, port), true
}

// once sends one request on a connection of cs and reads its response.
func (cs *Conns) once(ctx context.Context, authority, method string, u *url.URL, h http.Header, body []byte, discard bool, jar http.CookieJar, extra []*http.Cookie, timeout time.Duration) Reply {
	rep := Reply{URL: cs.urlString(u)}
	start := time.Now()
	deadline := start.Add(timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	out, sentCookies := cs.render(method, u, h, body, jar, extra)
	rep.SentCookies = sentCookies
	var cookies []*http.Cookie
	for attempt := 0; ; attempt++ {
		c, reused := cs.idle[authority], true
		var t Timings
		if c == nil {
			reused = false
			dctx, cancel := context.WithDeadline(ctx, deadline)
			connStart := time.Now()
			conn, err := cs.dialer.DialContext(dctx, "tcp", authority)
			cancel()
			t.Connecting = time.Since(connStart)
			if err != nil {
				rep.Sent, rep.Done = connStart, time.Now()
				rep.Err, rep.ErrClass = err, Classify(err)
				rep.Timings = t
				return rep
			}
			rw := newRawIO(conn)
			c = &callConn{conn: conn, rw: rw, cr: countReader{r: rw}}
			c.br = bufio.NewReaderSize(&c.cr, 4096)
		}
		rep.RemoteAddr = c.conn.RemoteAddr()
		err := c.conn.SetDeadline(deadline)
		if !c.watch(ctx) {
			err = context.Cause(ctx)
		}
		rep.Sent = time.Now()
		from := c.cr.n // a kept connection has nothing buffered
		// On a raw connection the request is written inside the read
		// that waits for its reply (rawIO.writeAhead).
		ahead, _ := c.rw.(aheadWriter)
		if c.br.Buffered() > 0 {
			ahead = nil // the read would not come
		}
		if err == nil {
			if ahead != nil {
				ahead.writeAhead(out)
			} else {
				var n int
				n, err = c.rw.Write(out)
				rep.BytesOut += int64(n) // over every attempt
			}
		}
		wrote := time.Now()
		var firstByte time.Time
		started := false
		keep := false
		if err == nil {
			_, err = c.br.Peek(1)
			if ahead != nil {
				n, at, werr := ahead.written()
				rep.BytesOut += int64(n)
				if !at.IsZero() {
					wrote = at
				}
				if werr != nil {
					err = werr
				}
			}
			if err == nil {
				started = true
				firstByte = arrivedAt(receivedBy(c.rw), wrote, time.Now())
				k := kept{keepBody: !discard}
				var r response
				r, err = readResponse(c.br, method == http.MethodHead, &c.s, &k)
				c.s.trim()
				if k.proto != "" { // the head arrived; the body may have been cut short
					rep.Status, rep.Proto, rep.fields, rep.Body = r.status, k.proto, k.fields, k.body
					keep = err == nil && r.keepAlive
					if jar != nil && k.fields.setCookie {
						cookies = (&http.Response{Header: rep.Headers()}).Cookies()
					}
				}
			}
		}
		rep.Done = time.Now()
		if err == nil {
			// Timed as the lean client times a reply: from the kernel's
			// receive time of its last bytes (see arrivedAt). Never before
			// firstByte: one stamp carried onto the monotonic clock at two
			// reads of the clocks can come out a few ns apart.
			if rep.Done = arrivedAt(receivedBy(c.rw), wrote, rep.Done); rep.Done.Before(firstByte) {
				rep.Done = firstByte
			}
		}
		rep.BytesIn += c.cr.n - from
		if err != nil || !keep || c.interrupted.Load() {
			c.close()
			if reused {
				delete(cs.idle, authority)
			}
		} else if !reused {
			cs.idle[authority] = c
		}
		if err != nil && reused && !started && attempt == 0 && ctx.Err() == nil && !isTimeout(err) {
			continue // the server closed the idle connection: once more on a new one
		}
		if err != nil {
			if ctx.Err() != nil {
				err = fmt.Errorf("%w: %w", context.Cause(ctx), err)
			}
			rep.Err, rep.ErrClass = err, Classify(err) // a deadline is ClassTimeout
		}
		// k6's phases: a new connection's dial is blocked and connecting
		// time, never part of the duration.
		t.Blocked = t.Connecting
		t.Sending = wrote.Sub(rep.Sent)
		if !firstByte.IsZero() {
			t.Waiting = firstByte.Sub(wrote)
			t.Receiving = rep.Done.Sub(firstByte)
		} else {
			t.Waiting = rep.Done.Sub(wrote) // no reply: waited until it failed
		}
		t.Duration = t.Sending + t.Waiting + t.Receiving
		rep.Timings = t
		if jar != nil && len(cookies) > 0 {
			jar.SetCookies(u, cookies)
		}
		return rep
	}
}

// render writes the request as sent: request line, Host, the headers, the
// jar's cookies, Content-Length, body.
func (cs *Conns) render(method string, u *url.URL, h http.Header, body []byte, jar http.CookieJar, extra []*http.Cookie) ([]byte, []*http.Cookie) {
	cks := cookiesToSend(jar, u, extra)
	host := u.Host
	if hv := h.Get("Host"); hv != "" {
		host = hv
	}
	b := appendRequestHead(cs.out[:0], method, cs.requestURI(u), host)
	for k, vs := range h {
		if k == "Host" || k == "Content-Length" || k == "Cookie" && len(cks) > 0 {
			continue
		}
		for _, v := range vs {
			b = appendField(b, k, v)
		}
	}
	if len(cks) > 0 {
		// One Cookie line (RFC 6265): the header's own pairs first.
		b = append(b, "Cookie: "...)
		hc := h.Get("Cookie")
		b = append(b, hc...)
		for i, ck := range cks {
			if i > 0 || hc != "" {
				b = append(b, "; "...)
			}
			b = append(b, ck.Name...)
			b = append(b, '=')
			b = append(b, ck.Value...)
		}
		b = append(b, "\r\n"...)
	}
	b = appendContentLength(b, method, body)
	b = appendBody(b, body)
	cs.out = b
	return b, cks
}

// validCallHeaders reports whether every header name and value can be
// written as they are (no CR or LF that would split the request).
func validCallHeaders(h http.Header) bool {
	for k, vs := range h {
		if !validHeaderValue(k) || k == "" || bytes.ContainsAny([]byte(k), ": ") {
			return false
		}
		for _, v := range vs {
			if !validHeaderValue(v) {
				return false
			}
		}
	}
	return true
}
