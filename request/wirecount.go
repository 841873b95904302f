package request

import (
	"context"
	"io"
	"net"
	"net/http/httptrace"
	"sync"
	"sync/atomic"
)

// Bytes on the wire: every client counts what it wrote of the request
// (request line, headers, body) and what it read of the response (status
// lines, headers, body as framed), as k6's data_sent and data_received do.

// countReader counts the bytes read through it: received, whether or not
// the parser took them (a connection with bytes left over is not reused).
type countReader struct {
	r io.Reader
	n int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// countConn is a connection of net/http's that counts its bytes: a
// request's are the change of its connection's counts while it held it.
// net/http hands the connection to the next request as soon as the body
// ends, before the one that read it takes its figures, so each hand-over
// (a claim) notes the counts it started at: that is where the previous
// request's bytes end.
type countConn struct {
	net.Conn
	in, out atomic.Int64

	mu     sync.Mutex
	holder *wireMeter // the request that got the connection last
}

// claim hands the connection to m: the previous holder's bytes end where
// m's begin.
func (c *countConn) claim(m *wireMeter) (first bool, in, out int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	in, out = c.in.Load(), c.out.Load()
	if prev := c.holder; prev != nil {
		prev.ended, prev.inEnd, prev.outEnd = true, in, out
	}
	first = c.holder == nil
	c.holder = m
	return first, in, out
}

// until is where m's bytes end: where the next holder's began, or now.
func (c *countConn) until(m *wireMeter) (in, out int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if m.ended {
		return m.inEnd, m.outEnd
	}
	return c.in.Load(), c.out.Load()
}

func (c *countConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.in.Add(int64(n))
	return n, err
}

// Write counts p before it sends it: net/http writes from a goroutine of
// its own, and a reply can arrive (and its request end) before that
// goroutine would have counted a write it had finished. What is not sent
// is taken back.
func (c *countConn) Write(p []byte) (int, error) {
	c.out.Add(int64(len(p)))
	n, err := c.Conn.Write(p)
	if n < len(p) {
		c.out.Add(int64(n - len(p)))
	}
	return n, err
}

// countingDial wraps dial's connections in countConns.
func countingDial(dial func(ctx context.Context, network, addr string) (net.Conn, error)) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &countConn{Conn: c}, nil
	}
}

// wireMeter measures one net/http request's bytes on its connection,
// which httptrace's GotConn names. A new connection's counts start at 0,
// so its TLS handshake counts with its first request. Over HTTP/2 the
// streams that share a connection at once share its counts.
type wireMeter struct {
	c         *countConn
	in0, out0 int64
	// set by the next request that gets the connection, under c.mu
	ended         bool
	inEnd, outEnd int64
}

func (m *wireMeter) gotConn(info httptrace.GotConnInfo) {
	conn := info.Conn
	if nc, ok := conn.(interface{ NetConn() net.Conn }); ok {
		conn = nc.NetConn() // TLS
	}
	c, ok := conn.(*countConn)
	if !ok {
		return
	}
	m.c = c
	first, in, out := c.claim(m)
	if !first { // the connection's first request also takes its handshake
		m.in0, m.out0 = in, out
	}
}

// bytes are the request's bytes so far: received and sent.
func (m *wireMeter) bytes() (in, out int64) {
	if m.c == nil {
		return 0, 0
	}
	in, out = m.c.until(m)
	return in - m.in0, out - m.out0
}
