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
// holding's bytes end.
type countConn struct {
	net.Conn
	in, out atomic.Int64

	mu     sync.Mutex
	holder *holding // the request that got the connection last
}

// holding is one request's time on one connection: where its counts
// began and, once the next request claims the connection, where they
// ended.
type holding struct {
	c         *countConn
	in0, out0 int64
	// set by the next claim, under c.mu
	ended         bool
	inEnd, outEnd int64
}

// claim hands the connection to a new holding: the previous one's bytes
// end where the new one's begin. A new connection's begin at 0, so its
// first request also takes its handshake.
func (c *countConn) claim() *holding {
	c.mu.Lock()
	defer c.mu.Unlock()
	h := &holding{c: c}
	if prev := c.holder; prev != nil {
		in, out := c.in.Load(), c.out.Load()
		prev.ended, prev.inEnd, prev.outEnd = true, in, out
		h.in0, h.out0 = in, out
	}
	c.holder = h
	return h
}

// bytes are the holding's bytes: to where the next holding began, or now.
func (h *holding) bytes() (in, out int64) {
	h.c.mu.Lock()
	defer h.c.mu.Unlock()
	if h.ended {
		return h.inEnd - h.in0, h.outEnd - h.out0
	}
	return h.c.in.Load() - h.in0, h.c.out.Load() - h.out0
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

// wireMeter measures one net/http request's bytes on the connections
// httptrace's GotConn names: more than one when net/http finds a reused
// connection dead and sends the request again on a new one, and what went
// over each counts. Over HTTP/2 the streams that share a connection at
// once share its counts.
type wireMeter struct {
	held []*holding
}

func (m *wireMeter) gotConn(info httptrace.GotConnInfo) {
	conn := info.Conn
	if nc, ok := conn.(interface{ NetConn() net.Conn }); ok {
		conn = nc.NetConn() // TLS
	}
	if c, ok := conn.(*countConn); ok {
		m.held = append(m.held, c.claim())
	}
}

// bytes are the request's bytes so far: received and sent.
func (m *wireMeter) bytes() (in, out int64) {
	for _, h := range m.held {
		i, o := h.bytes()
		in, out = in+i, out+o
	}
	return in, out
}
