package request

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/knee-dev/knee/load"
)

// leanBuf is the scratch space of one lean request: parts holds the
// rendered URL, header values, Host and body; out the request as sent.
type leanBuf struct {
	parts, out []byte
	values     [][]byte
}

// maxRetainedBuf bounds the buffers kept for reuse (a large body's are dropped).
const maxRetainedBuf = 64 << 10

// doLean sends c through the lean HTTP/1.1 client into res. It reports
// false, having sent nothing, when this rendering of c needs net/http.
func (s *Sender) doLean(ctx context.Context, c *compiled, vu, iter uint64, res *load.Result) bool {
	b := s.leanBufs.Get().(*leanBuf)
	defer func() {
		if cap(b.parts) <= maxRetainedBuf && cap(b.out) <= maxRetainedBuf {
			s.leanBufs.Put(b)
		}
	}()
	authority, out, _, ok := s.renderLean(c, vu, iter, b)
	if !ok {
		return false
	}
	res.Sent = time.Now()
	deadline := res.Sent.Add(c.timeout)
	r, err := s.exchange(ctx, c, vu, authority, out, deadline)
	res.Done = arrivedAt(r.rx, res.Sent, time.Now())
	res.BytesIn, res.BytesOut = r.wireIn, r.wireOut
	if err != nil {
		if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
			err = fmt.Errorf("%w: %w", context.Cause(ctx), err) // as net/http reports it
		}
		res.Err, res.ErrClass = s.failure(ctx, err)
		return true
	}
	res.Status = r.status
	return true
}

// renderLean renders c, in b, into the request as sent (out), returning
// the authority to send it to and the body. ok is false when the rendering
// needs net/http.
func (s *Sender) renderLean(c *compiled, vu, iter uint64, b *leanBuf) (authority, out, body []byte, ok bool) {
	p := c.plan
	if p.wire != nil {
		return p.static.authority, p.wire, c.staticBody, true // never b.out: it is reused
	}
	parts := b.parts[:0]
	var uri []byte
	if p.static != nil {
		authority, uri = p.static.authority, p.static.uri
	} else {
		parts = c.url.Append(parts, s.vars, s.seed, vu, iter)
		if authority, uri, ok = splitURL(parts); !ok {
			return nil, nil, nil, false
		}
	}
	// Each rendered piece is sliced out of parts by offsets, since parts
	// may move while it grows.
	type span struct{ from, to int }
	var spans [16]span
	offs := spans[:0]
	values := b.values[:0]
	if c.staticHeader == nil {
		for _, h := range c.headers {
			from := len(parts)
			parts = h.val.Append(parts, s.vars, s.seed, vu, iter)
			offs = append(offs, span{from, len(parts)})
		}
	}
	host := authority
	hostAt := len(parts)
	if c.host != nil {
		parts = c.host.Append(parts, s.vars, s.seed, vu, iter)
	}
	bodyAt := len(parts)
	body = c.staticBody
	if !c.body.Static() {
		parts = c.body.Append(parts, s.vars, s.seed, vu, iter)
		body = parts[bodyAt:]
	}
	if c.host != nil {
		host = parts[hostAt:bodyAt]
	}
	for _, o := range offs {
		values = append(values, parts[o.from:o.to])
	}
	if c.staticHeader == nil {
		b.values = values
	} else {
		values = nil
	}
	b.parts = parts
	if c.host != nil {
		if host, ok = leanHost(host); !ok {
			return nil, nil, nil, false
		}
	}
	b.out, ok = appendRequest(b.out[:0], c, p, host, uri, values, body)
	return authority, b.out, body, ok
}

// exchange writes the request out on a connection of vu's to authority and
// reads the response, once more on a new connection when a reused one
// turns out closed before the response began.
func (s *Sender) exchange(ctx context.Context, c *compiled, vu uint64, authority, out []byte, deadline time.Time) (response, error) {
	fresh := false
	var wireIn, wireOut int64 // over every attempt
	for {
		lc, err := s.leanConn(ctx, vu, authority, deadline, fresh, c.plan.replayable)
		if err != nil {
			return response{wireIn: wireIn, wireOut: wireOut}, err
		}
		var r response
		if err = lc.conn.SetDeadline(deadline); err == nil && lc.interrupted.Load() {
			err = ended(ctx) // ctx ended between watch and SetDeadline
		}
		if err == nil {
			from := lc.cr.n // nothing buffered: an idle connection has none
			r, err = lc.roundTrip(out, c.method == http.MethodHead)
			r.wireIn = lc.cr.n - from
		}
		wireIn += r.wireIn
		wireOut += r.wireOut
		r.wireIn, r.wireOut = wireIn, wireOut
		if err == nil {
			r.rx = receivedBy(lc.rw)
		}
		lc.scratch.trim()
		if err != nil {
			lc.close()
			if !fresh && lc.reused && !r.started && c.plan.replayable && ctx.Err() == nil && !isTimeout(err) {
				fresh = true
				continue
			}
			return r, err
		}
		lc.reused = true
		if r.keepAlive && !c.plan.wantClose {
			s.lean.put(vu, lc)
		} else {
			lc.close()
		}
		return r, nil
	}
}

// leanConn is an idle connection of vu's to authority (unless fresh), or a
// new one, watched by ctx. A request that is not replayable gets an idle
// connection only when it is still open.
func (s *Sender) leanConn(ctx context.Context, vu uint64, authority []byte, deadline time.Time, fresh, replayable bool) (*leanConn, error) {
	for !fresh {
		lc := s.lean.idle(vu, authority)
		if lc == nil {
			break
		}
		// Unasked bytes mean the connection is out of step; a request
		// that cannot be retried checks the server did not close it idle.
		if lc.br.Buffered() == 0 && (replayable || !lc.peerClosed()) && lc.watch(ctx) {
			return lc, nil
		}
		lc.close() // unusable: closed, out of step, or its earlier run's context ended
	}
	lc, err := s.lean.dial(ctx, authority, deadline)
	if err != nil {
		return nil, err
	}
	if !lc.watch(ctx) {
		lc.close()
		return nil, ended(ctx)
	}
	return lc, nil
}

// concurrentWriteAbove: a request longer than this is written by a
// goroutine of its own while the response is read, so that the response of
// a server that answers early (413, 401) and closes during a large upload
// is read, as net/http reads it, rather than lost to the write's "reset".
// A shorter one fits a socket's send buffer and is written at once.
const concurrentWriteAbove = 16 << 10

// receiveTimer is a connection's reader that knows the kernel's receive
// time of the bytes it read last (Unix ns, 0 if unknown): rawIO on Linux.
type receiveTimer interface{ received() int64 }

// receivedBy is the receive time of the bytes r read last, if r knows it
// (a receiveTimer); else 0.
func receivedBy(r io.Reader) int64 {
	if rt, ok := r.(receiveTimer); ok {
		return rt.received()
	}
	return 0
}

// arrivedAt is when a response sent at sent and read by now arrived, by
// rx, the kernel's receive time of its last bytes (Unix ns), carried onto
// the monotonic clock through now; now itself when rx is 0 or a step of the
// wall clock put it before sent or after now.
func arrivedAt(rx int64, sent, now time.Time) time.Time {
	if rx == 0 {
		return now
	}
	age := time.Duration(now.UnixNano() - rx)
	if t := now.Add(-age); age >= 0 && !t.Before(sent) {
		return t
	}
	return now
}

// roundTrip writes out on c and reads the response.
func (c *leanConn) roundTrip(out []byte, head bool) (response, error) {
	if len(out) <= concurrentWriteAbove {
		n, err := c.rw.Write(out)
		if err != nil {
			return response{wireOut: int64(n)}, err
		}
		r, err := readResponse(c.br, head, &c.scratch, nil)
		r.wireOut = int64(n)
		return r, err
	}
	type written struct {
		n   int
		err error
	}
	wrote := make(chan written, 1)
	go func() {
		n, err := c.conn.Write(out)
		wrote <- written{n, err}
	}()
	r, err := readResponse(c.br, head, &c.scratch, nil)
	var w written
	select {
	case w = <-wrote:
	default:
		// The server answered before it took the whole request: stop
		// writing (the next request sets the deadline again). out must
		// not be reused before the writer is done.
		c.conn.SetWriteDeadline(pastDeadline) //nolint:errcheck // the write fails then, and the conn is closed
		w = <-wrote
	}
	r.wireOut = int64(w.n)
	werr := w.err
	switch {
	case err != nil && !r.started && werr != nil:
		return r, werr // nothing came back: the write's error says why
	case err != nil:
		return r, err
	case werr != nil:
		r.keepAlive = false // the rest of the request is lost on this connection
	}
	return r, nil
}

// ended is the error of a request cut short because ctx ended; Do's
// failure wraps it in ErrInterrupted.
func ended(ctx context.Context) error {
	if err := context.Cause(ctx); err != nil {
		return err
	}
	return context.Canceled
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
