package request

import (
	"context"
	"io"
	"net"
	"net/http/httptrace"
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
// request's are the change of its connection's counts while it ran.
type countConn struct {
	net.Conn
	in, out atomic.Int64
}

func (c *countConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.in.Add(int64(n))
	return n, err
}

func (c *countConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.out.Add(int64(n))
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
	if info.Reused {
		m.in0, m.out0 = c.in.Load(), c.out.Load()
	}
}

// bytes are the request's bytes so far: received and sent.
func (m *wireMeter) bytes() (in, out int64) {
	if m.c == nil {
		return 0, 0
	}
	return m.c.in.Load() - m.in0, m.c.out.Load() - m.out0
}
