package request

import (
	"bufio"
	"context"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Sizes of the lean client's per-connection state.
const (
	leanReadBuffer = 4096
	maxVUSlots     = 1 << 16 // VUs numbered above share the overflow pool
	maxIdlePerAddr = 1024    // overflow connections kept idle per address
)

// pastDeadline fails every pending read and write of a connection at once.
var pastDeadline = time.Unix(1, 0)

// leanConn is one keep-alive HTTP/1.1 connection of the lean client.
type leanConn struct {
	conn      net.Conn
	rw        io.ReadWriter // conn's reads and writes; raw syscalls where they can be (rawio_linux.go)
	br        *bufio.Reader // reads cr
	cr        countReader   // rw's reads, counted
	authority string        // the URL authority it was dialled for
	reused    bool          // it has carried a response before
	scratch   scratch       // long header lines, folded fields
	alive     *aliveCheck   // built at the first check
	ctxWatch
}

// ctxWatch makes a context's end interrupt a connection (the lean
// client's and Conns'): one context.AfterFunc per connection and context
// (a VU's iterations share one), not per request. It sets interrupted,
// then a past deadline that fails the connection's pending reads and
// writes.
type ctxWatch struct {
	done        <-chan struct{}
	stopAfter   func() bool
	interrupted atomic.Bool
}

// follow makes ctx's end interrupt conn. It reports false when ctx already
// interrupted conn, which then cannot be used.
func (w *ctxWatch) follow(ctx context.Context, conn net.Conn) bool {
	done := ctx.Done()
	if done == w.done {
		return !w.interrupted.Load()
	}
	if w.stopAfter != nil && !w.stopAfter() {
		return false // the previous context ended while this one began
	}
	w.done, w.stopAfter = done, nil
	if done != nil {
		w.stopAfter = context.AfterFunc(ctx, func() {
			w.interrupted.Store(true)
			conn.SetDeadline(pastDeadline) //nolint:errcheck // the conn is given up anyway
		})
	}
	return true
}

// unfollow stops following the last context.
func (w *ctxWatch) unfollow() {
	if w.stopAfter != nil {
		w.stopAfter()
	}
}

// watch makes ctx's end interrupt c. It reports false when ctx already
// interrupted c, which then cannot be used.
func (c *leanConn) watch(ctx context.Context) bool { return c.follow(ctx, c.conn) }

// peerClosed reports whether the server closed idle c (see aliveCheck).
func (c *leanConn) peerClosed() bool {
	if c.alive == nil {
		c.alive = newAliveCheck(c.conn)
	}
	return c.alive.peerClosed()
}

func (c *leanConn) close() {
	c.unfollow()
	c.conn.Close()
}

// vuSlot holds the idle connection of one VU.
type vuSlot struct{ c atomic.Pointer[leanConn] }

// leanPool keeps one idle connection per VU, without locks on the way in
// or out, and an overflow pool per address for VUs that send several
// requests at once or to several hosts.
type leanPool struct {
	slots    atomic.Pointer[[]*vuSlot]
	mu       sync.Mutex // guards growing slots, overflow and closed
	overflow map[string][]*leanConn
	closed   atomic.Bool // set under mu, read without it
	dialer   net.Dialer
}

func newLeanPool() *leanPool {
	p := &leanPool{overflow: make(map[string][]*leanConn), dialer: net.Dialer{KeepAlive: 30 * time.Second}}
	p.slots.Store(new([]*vuSlot))
	return p
}

// slot is vu's slot, nil when vu is too large for one.
func (p *leanPool) slot(vu uint64) *vuSlot {
	if s := *p.slots.Load(); vu < uint64(len(s)) {
		return s[vu]
	}
	if vu >= maxVUSlots {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	old := *p.slots.Load()
	if vu < uint64(len(old)) {
		return old[vu]
	}
	grown := make([]*vuSlot, max(int(vu)+1, 2*len(old)))
	copy(grown, old)
	for i := len(old); i < len(grown); i++ {
		grown[i] = new(vuSlot)
	}
	p.slots.Store(&grown)
	return grown[vu]
}

// idle takes an idle connection to authority for vu, or nil.
func (p *leanPool) idle(vu uint64, authority []byte) *leanConn {
	s := p.slot(vu)
	if s != nil {
		if c := s.c.Swap(nil); c != nil {
			if c.authority == string(authority) {
				return c
			}
			p.putOverflow(c)
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	list := p.overflow[string(authority)]
	if len(list) == 0 {
		return nil
	}
	c := list[len(list)-1]
	p.overflow[string(authority)] = list[:len(list)-1]
	return c
}

// put returns c to vu's slot, else to the overflow pool.
func (p *leanPool) put(vu uint64, c *leanConn) {
	if s := p.slot(vu); s != nil && s.c.CompareAndSwap(nil, c) {
		if p.closed.Load() && s.c.CompareAndSwap(c, nil) {
			c.close() // Close ran meanwhile and may have missed c
		}
		return
	}
	p.putOverflow(c)
}

func (p *leanPool) putOverflow(c *leanConn) {
	p.mu.Lock()
	list := p.overflow[c.authority]
	keep := !p.closed.Load() && len(list) < maxIdlePerAddr
	if keep {
		p.overflow[c.authority] = append(list, c)
	}
	p.mu.Unlock()
	if !keep {
		c.close()
	}
}

// dial opens a connection to authority by deadline, cut short when ctx ends.
func (p *leanPool) dial(ctx context.Context, authority []byte, deadline time.Time) (*leanConn, error) {
	d := p.dialer
	d.Deadline = deadline
	conn, err := d.DialContext(ctx, "tcp", dialAddr(authority))
	if err != nil {
		return nil, err
	}
	rw := newRawIO(conn)
	lc := &leanConn{conn: conn, rw: rw, cr: countReader{r: rw}, authority: string(authority)}
	lc.br = bufio.NewReaderSize(&lc.cr, leanReadBuffer)
	return lc, nil
}

// close closes every idle connection. Connections in use are closed when
// they are returned, so a request after close still works, on a new
// connection of its own.
func (p *leanPool) close() {
	p.mu.Lock()
	p.closed.Store(true)
	var idle []*leanConn
	for _, list := range p.overflow {
		idle = append(idle, list...)
	}
	clear(p.overflow)
	p.mu.Unlock()
	for _, s := range *p.slots.Load() {
		if c := s.c.Swap(nil); c != nil {
			idle = append(idle, c)
		}
	}
	for _, c := range idle {
		c.close()
	}
}
