package request

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/knee-dev/knee/load"
	"github.com/knee-dev/knee/request/internal/reactor"
)

// The states of a loop connection.
const (
	stIdle       = iota // kept for its VU, nothing in flight
	stConnecting        // non-blocking connect under way
	stWriting           // the request is partly written
	stReading           // the request is written; reading the response
)

const (
	loopEvents  = 256
	loopReadBuf = 2 * loopMaxInLoop // a tail below loopMaxInLoop leaves room for a read as large
)

// eventLoop is the Linux Loop: the HTTP/1.1 exchanges of the lean client
// on non-blocking sockets that Go's netpoller never sees, in a reactor's
// epoll set (request/internal/reactor: the waits, their timing and the
// runtime tuning are its), whose eventfd Wake and the goroutines of
// fallbacks and hand-offs signal. See load.Loop for the contract.
type eventLoop struct {
	s *Sender
	r *reactor.Reactor

	recv stampedRecv // reads that also take the kernel's receive time

	// Scratch shared by every connection: the loop parses one response
	// at a time.
	rbuf    []byte
	rd      tailReader
	br      *bufio.Reader
	scratch scratch
	lb      leanBuf
	peek    [1]byte
	// peerEnded: the event being handled says the peer closed or failed.
	peerEnded bool

	vus     map[uint64]*loopConn // each VU's connection, busy or kept idle
	vusPeak int                  // the most entries vus has had since it was made (see compact)
	byFD    []*loopConn
	timers  reactor.Timers[*loopConn] // the exchanges in flight by deadline
	targets map[string]*loopTarget
	ready   []load.Ended

	// Requests that goroutines finish (fallbacks, hand-offs, resolution).
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex // guards posted, back and closed
	posted []load.Ended
	back   []loopBack
	npost  atomic.Int32
	woken  atomic.Bool
	closed bool

	done bool // Close ran
}

// sleepThrough (the reactor's SleepThrough): a wait that ends this soon
// (at the next intended start, a deadline, or the caller's until) ends
// only then or on Wake, not when a response arrives, and Wait returns at
// until before it reads what came meanwhile, so that the caller's starts
// go first; the next Wait reads it.
// The loop then wakes once per start rather than twice (once more for the
// response): at 5,000/s 50.2 → 34.2 µs of CPU per request (bench/README.md
// (d)). A response is timed from the kernel's receive time of its last
// bytes, so reading it later changes nothing of its latency; its VU is
// free again after the starts of that wake-up rather than before them.
// Reading first made the starts ~30 µs later at the median.
const sleepThrough = reactor.SleepThrough

// loopTarget is one authority the loop dials.
type loopTarget struct {
	authority string
	host      string // a name to resolve; "" for an IP literal
	port      int
	addrs     atomic.Pointer[[]loopAddr] // nil until resolved
	resolving atomic.Bool
	retry     time.Time // after a failed lookup, the next one waits till then
	// idle are kept connections to it that are in no VU's slot, for a
	// VU whose own is to another authority (leanPool's overflow).
	idle []*loopConn
}

type loopAddr struct {
	sa     unix.Sockaddr
	family int
	addr   *net.TCPAddr // for errors
}

// loopConn is one connection of the loop and the exchange in flight on it.
type loopConn struct {
	fd       int
	gen      uint32 // the reactor's generation of fd
	state    int
	t        *loopTarget
	addrs    []loopAddr
	ai       int   // the address being dialled
	dialErr  error // the first address's error, as Go's dialer reports it
	vu       uint64
	owned    bool // it is vus[vu]
	pooled   bool // it is in t.idle
	reused   bool // it has carried a response before
	release  bool // close it when its exchange ends (Release ran)
	missedIn bool // readable while still connecting or writing

	// The exchange in flight.
	rx       int64 // the kernel's receive time of the response's last bytes read (Unix ns); 0 if none
	c        *compiled
	iter     uint64
	res      load.Result
	timer    reactor.Timer // the deadline, in eventLoop.timers while the exchange is in flight
	fresh    bool          // the retry on a new connection after a reused one failed
	out      []byte
	outOwned bool   // out is pend, not the plan's or the loop's buffer
	pend     []byte // the rest of a request the socket did not take at once
	tail     []byte // a response's bytes so far, when a read did not end it
	parses   int
}

func newLoop(s *Sender) (load.Loop, error) {
	r, err := reactor.New(loopEvents, false)
	if err != nil {
		return nil, err
	}
	l := &eventLoop{
		s: s, r: r,
		rbuf:    make([]byte, loopReadBuf),
		vus:     make(map[uint64]*loopConn),
		targets: make(map[string]*loopTarget),
		lb:      leanBuf{parts: make([]byte, 0, 512), out: make([]byte, 0, 512)},
	}
	l.br = bufio.NewReaderSize(&l.rd, leanReadBuffer)
	l.ctx, l.cancel = context.WithCancel(context.Background())
	return l, nil
}

// Timer is lc's place among the loop's deadlines.
func (lc *loopConn) Timer() *reactor.Timer { return &lc.timer }

// Start begins iteration iter of vu: in the loop when the lean client
// would send it, else on a goroutine through Do.
func (l *eventLoop) Start(vu, iter uint64) {
	c := l.s.choose(vu, iter)
	if c.plan == nil {
		l.fallback(vu, iter)
		return
	}
	authority, out, _, ok := l.s.renderLean(c, vu, iter, &l.lb)
	if !ok || len(out) > concurrentWriteAbove {
		// A large request is written while the response is read, as
		// roundTrip does; Do does that.
		l.fallback(vu, iter)
		return
	}
	t := l.target(authority)
	addrs := t.addrs.Load()
	if addrs == nil {
		// Do resolves this one; the loop sends the next ones once the
		// name is resolved.
		l.resolve(t, c.timeout)
		l.fallback(vu, iter)
		return
	}
	res := load.Result{Name: c.name, Sent: time.Now()} // BytesOut: as send writes
	lc := l.kept(vu, t, c.plan.replayable)
	if lc == nil {
		lc = l.newConn(vu, t, *addrs)
	}
	lc.c, lc.iter, lc.res, lc.fresh, lc.parses = c, iter, res, false, 0
	lc.timer.At = res.Sent.Add(c.timeout)
	l.timers.Add(lc)
	l.begin(lc, out)
}

// begin sends out on lc, now or once it is connected.
func (l *eventLoop) begin(lc *loopConn, out []byte) {
	lc.out, lc.outOwned, lc.missedIn, lc.rx = out, false, false, 0
	lc.tail = lc.tail[:0]
	if lc.state == stIdle {
		l.send(lc)
		return
	}
	l.hold(lc)
	if lc.fd < 0 {
		l.connect(lc)
	}
}

// hold copies the unsent request into lc's own buffer: the loop's is
// rendered into again by the next Start.
func (l *eventLoop) hold(lc *loopConn) {
	if !lc.outOwned {
		lc.pend = append(lc.pend[:0], lc.out...)
		lc.out, lc.outOwned = lc.pend, true
	}
}

// fallback runs the iteration through Do on a goroutine of its own.
func (l *eventLoop) fallback(vu, iter uint64) {
	ctx := l.ctx
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		l.post(vu, l.s.Do(ctx, vu, iter), loopBack{fd: -1})
	}()
}

// post hands a goroutine's result to the loop, with the connection it
// gives back if any, and wakes it.
func (l *eventLoop) post(vu uint64, res load.Result, back loopBack) {
	l.mu.Lock()
	if back.fd >= 0 {
		l.back = append(l.back, back)
	}
	l.posted = append(l.posted, load.Ended{VU: vu, Result: res})
	l.npost.Add(1)
	l.signal()
	l.mu.Unlock()
}

// signal wakes the loop's wait; l.mu is held, so the reactor is open.
func (l *eventLoop) signal() {
	if !l.closed {
		l.r.Signal()
	}
}

// Wake makes a blocked Wait return, or the next one at once.
func (l *eventLoop) Wake() {
	l.woken.Store(true)
	l.mu.Lock()
	l.signal()
	l.mu.Unlock()
}

// WakeOnEnds makes every later Wait return once an iteration has ended,
// however near until is (see sleepThrough): the closed model's next start
// is the end of the VU's last iteration.
func (l *eventLoop) WakeOnEnds() { l.r.WakeOnEvents() }

// Wait runs the loop until an iteration has ended, until passes, or Wake.
func (l *eventLoop) Wait(until time.Time, ended []load.Ended) []load.Ended {
	polled := false
	for {
		if l.r.Unread() {
			if polled && !until.IsZero() && !time.Now().Before(until) {
				// Back to the caller for its starts first; the next Wait
				// reads what came in meanwhile (timed from its arrival).
				return ended
			}
			l.readUnread()
		}
		if l.npost.Load() > 0 {
			l.mu.Lock()
			for _, b := range l.back {
				l.adopt(b) // before the VU's next Start
			}
			clear(l.back)
			l.back = l.back[:0]
			l.ready = append(l.ready, l.posted...)
			clear(l.posted)
			l.posted = l.posted[:0]
			l.npost.Store(0)
			l.mu.Unlock()
		}
		now := time.Now()
		for lc, ok := l.timers.Due(now); ok; lc, ok = l.timers.Due(now) {
			l.expire(lc)
		}
		if len(l.ready) > 0 {
			ended = append(ended, l.ready...)
			clear(l.ready)
			l.ready = l.ready[:0]
			return ended
		}
		if l.woken.Swap(false) {
			return ended
		}
		wake := until
		if lc, ok := l.timers.First(); ok && (wake.IsZero() || lc.timer.At.Before(wake)) {
			wake = lc.timer.At
		}
		if !until.IsZero() && !now.Before(until) {
			if polled {
				return ended
			}
			wake = now // one look at what is ready before returning
		}
		evs := l.r.Poll(wake, now)
		polled = true
		for _, ev := range evs {
			l.event(ev)
		}
	}
}

// readUnread handles the events a wait slept through (see sleepThrough).
func (l *eventLoop) readUnread() {
	if l.r.Unread() {
		for _, ev := range l.r.PollNow() {
			l.event(ev)
		}
	}
}

// event handles one socket's readiness.
func (l *eventLoop) event(ev reactor.Event) {
	if ev.FD >= len(l.byFD) {
		return
	}
	lc := l.byFD[ev.FD]
	if lc == nil || lc.gen != ev.Gen {
		return // a socket closed earlier in this batch
	}
	switch lc.state {
	case stIdle:
		if ev.Events&reactor.In != 0 {
			l.drop(lc) // closed by the server, or unasked bytes: out of step
		}
	case stConnecting:
		if ev.Events&reactor.In != 0 {
			lc.missedIn = true
		}
		if ev.Events&reactor.Out != 0 {
			l.connected(lc)
		}
	case stWriting:
		if ev.Events&reactor.In != 0 {
			lc.missedIn = true
		}
		if ev.Events&reactor.Out != 0 {
			l.send(lc)
		}
	case stReading:
		if ev.Events&reactor.In != 0 {
			l.read(lc, ev.Events&reactor.End != 0)
		}
	}
}

// target is the loop's record of authority, made at its first use.
func (l *eventLoop) target(authority []byte) *loopTarget {
	if t := l.targets[string(authority)]; t != nil {
		return t
	}
	t := &loopTarget{authority: string(authority)}
	l.targets[t.authority] = t
	host, port, err := net.SplitHostPort(dialAddr(authority))
	if err == nil {
		t.port, err = strconv.Atoi(port)
	}
	if err != nil {
		return t // never resolved: every request goes through Do, which reports why
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		addrs := []loopAddr{makeAddr(ip, t.port)}
		t.addrs.Store(&addrs)
	} else {
		t.host = host
	}
	return t
}

func makeAddr(ip netip.Addr, port int) loopAddr {
	a := loopAddr{addr: net.TCPAddrFromAddrPort(netip.AddrPortFrom(ip, uint16(port)))}
	if ip.Is4() || ip.Is4In6() {
		a.sa, a.family = &unix.SockaddrInet4{Port: port, Addr: ip.Unmap().As4()}, unix.AF_INET
	} else {
		a.sa, a.family = &unix.SockaddrInet6{Port: port, Addr: ip.As16()}, unix.AF_INET6
	}
	return a
}

// resolveAgain is how long after a failed lookup of a name the loop looks
// it up again; meanwhile Do sends its requests, and looks it up itself.
// Looking up at every request as well would double the queries of a name
// that fails, and a resolver that limits them then times some out.
const resolveAgain = 5 * time.Second

// resolve looks t's name up on a goroutine, once at a time, and keeps the
// addresses for the loop's life.
func (l *eventLoop) resolve(t *loopTarget, timeout time.Duration) {
	if t.host == "" || t.resolving.Load() || time.Now().Before(t.retry) {
		return
	}
	t.resolving.Store(true)
	t.retry = time.Now().Add(resolveAgain) // read and written by the loop's goroutine only
	ctx := l.ctx
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		defer t.resolving.Store(false)
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", t.host)
		if err != nil || len(ips) == 0 {
			return // Do reports it; the loop tries again after resolveAgain
		}
		// Go's dialer tries the addresses of the first one's family
		// first, then the others.
		addrs := make([]loopAddr, 0, len(ips))
		v4 := ips[0].Unmap().Is4()
		for _, sameFamily := range []bool{true, false} {
			for _, ip := range ips {
				if (ip.Unmap().Is4() == v4) == sameFamily {
					addrs = append(addrs, makeAddr(ip, t.port))
				}
			}
		}
		t.addrs.Store(&addrs)
	}()
}

// kept is an idle connection to t for vu: its own, else one another VU
// left (as leanPool.idle); nil when there is none. A request that may not
// be sent twice takes one only when the server has not closed it.
func (l *eventLoop) kept(vu uint64, t *loopTarget, replayable bool) *loopConn {
	if lc := l.vus[vu]; lc != nil && lc.state == stIdle {
		switch {
		case lc.t != t:
			l.pool(lc)
		case replayable || !l.peerClosed(lc.fd):
			return lc
		default:
			l.drop(lc)
		}
	}
	for len(t.idle) > 0 {
		lc := t.idle[len(t.idle)-1]
		t.idle[len(t.idle)-1] = nil
		t.idle = t.idle[:len(t.idle)-1]
		lc.pooled = false
		switch {
		case lc.fd < 0:
			continue // closed while idle
		case !replayable && l.peerClosed(lc.fd):
			l.drop(lc)
			continue
		}
		lc.vu = vu
		l.own(lc)
		return lc
	}
	return nil
}

// own puts lc in its VU's slot when that is free.
func (l *eventLoop) own(lc *loopConn) {
	if !lc.owned && l.vus[lc.vu] == nil {
		l.vus[lc.vu], lc.owned = lc, true
		l.vusPeak = max(l.vusPeak, len(l.vus))
	}
}

// pool moves idle lc out of its VU's slot into its target's idle list,
// or closes it when the list is full.
func (l *eventLoop) pool(lc *loopConn) {
	if lc.owned {
		delete(l.vus, lc.vu)
		lc.owned = false
	}
	t := lc.t
	if len(t.idle) >= maxIdlePerAddr {
		live := t.idle[:0]
		for _, c := range t.idle {
			if c.fd >= 0 {
				live = append(live, c)
			}
		}
		clear(t.idle[len(live):])
		t.idle = live
	}
	if len(t.idle) >= maxIdlePerAddr {
		l.drop(lc)
		return
	}
	t.idle = append(t.idle, lc)
	lc.pooled = true
}

// peerClosed peeks at an idle socket without blocking (see aliveCheck).
func (l *eventLoop) peerClosed(fd int) bool { return peekNotIdle(fd, &l.peek) }

// loopBack is a kept connection that a hand-off's goroutine gives back.
type loopBack struct {
	fd    int
	vu    uint64
	t     *loopTarget
	addrs []loopAddr
	ai    int
}

// newConn is a connection to t for vu, not yet dialled.
func (l *eventLoop) newConn(vu uint64, t *loopTarget, addrs []loopAddr) *loopConn {
	lc := &loopConn{fd: -1, state: stConnecting, t: t, addrs: addrs, vu: vu}
	l.own(lc)
	return lc
}

// connect dials lc's next address; it ends the exchange when none is left.
func (l *eventLoop) connect(lc *loopConn) {
	for ; lc.ai < len(lc.addrs); lc.ai++ {
		a := lc.addrs[lc.ai]
		err := l.socket(lc, a.family)
		if err == nil {
			err = unix.Connect(lc.fd, a.sa)
		}
		switch err {
		case nil:
			lc.state = stIdle
			l.send(lc)
			return
		case unix.EINPROGRESS, unix.EINTR, unix.EALREADY:
			lc.state = stConnecting
			return // connected() goes on when it is writable
		}
		l.dialFailed(lc, err, "connect")
	}
	l.fail(lc, lc.dialErr)
}

// connected goes on with lc once its connect has finished.
func (l *eventLoop) connected(lc *loopConn) {
	errno, err := unix.GetsockoptInt(lc.fd, unix.SOL_SOCKET, unix.SO_ERROR)
	if err == nil && errno != 0 {
		err = syscall.Errno(errno)
	}
	if err == nil {
		lc.state = stIdle
		l.send(lc)
		return
	}
	l.dialFailed(lc, err, "connect")
	lc.ai++
	l.connect(lc)
}

// dialFailed closes lc's socket after a failed connect, keeping the first
// error as Go's dialer reports it.
func (l *eventLoop) dialFailed(lc *loopConn, err error, call string) {
	if lc.dialErr == nil {
		var se *os.SyscallError
		if !errors.As(err, &se) {
			err = os.NewSyscallError(call, err)
		}
		lc.dialErr = &net.OpError{Op: "dial", Net: "tcp", Addr: lc.addrs[lc.ai].addr, Err: err}
	}
	l.closeFD(lc)
}

// socket opens lc's non-blocking socket, in the reactor's set.
func (l *eventLoop) socket(lc *loopConn, family int) error {
	fd, err := unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, unix.IPPROTO_TCP)
	if err != nil {
		return os.NewSyscallError("socket", err)
	}
	// As Go's dialer with the lean client's 30 s keep-alive.
	unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)    //nolint:errcheck
	unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_KEEPALIVE, 1)    //nolint:errcheck
	unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_KEEPIDLE, 30)  //nolint:errcheck
	unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_KEEPINTVL, 15) //nolint:errcheck
	unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_KEEPCNT, 9)    //nolint:errcheck
	return l.register(lc, fd)
}

// register puts fd in the reactor's set as lc's socket, or closes it.
func (l *eventLoop) register(lc *loopConn, fd int) error {
	// Reads take the kernel's receive time of the bytes: a response is
	// timed from its arrival, not from when the loop woke to read it.
	unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1) //nolint:errcheck // without it, responses are timed when read
	gen, err := l.r.Add(fd)
	if err != nil {
		unix.Close(fd)
		return err
	}
	lc.fd, lc.gen = fd, gen
	for fd >= len(l.byFD) {
		l.byFD = append(l.byFD, nil)
	}
	l.byFD[fd] = lc
	return nil
}

// send writes what is left of lc's request, then reads.
func (l *eventLoop) send(lc *loopConn) {
	lc.state = stWriting
	for len(lc.out) > 0 {
		n, _, e := unix.RawSyscall(unix.SYS_WRITE, uintptr(lc.fd), uintptr(unsafe.Pointer(&lc.out[0])), uintptr(len(lc.out)))
		switch e {
		case 0:
			lc.out = lc.out[n:]
			lc.res.BytesOut += int64(n)
		case unix.EINTR:
		case unix.EAGAIN:
			l.hold(lc)
			return // on EPOLLOUT
		default:
			l.fail(lc, lc.opError("write", os.NewSyscallError("write", e)))
			return
		}
	}
	lc.state = stReading
	if lc.missedIn {
		lc.missedIn = false
		l.read(lc, true)
	}
}

// opError is err as the lean client's connection reports it (rawIO): the
// operation with both addresses, the local one looked up now (errors only).
func (lc *loopConn) opError(op string, err error) error {
	var local net.Addr
	if lc.fd >= 0 {
		switch sa, _ := unix.Getsockname(lc.fd); sa := sa.(type) {
		case *unix.SockaddrInet4:
			local = &net.TCPAddr{IP: net.IP(sa.Addr[:]).To16(), Port: sa.Port}
		case *unix.SockaddrInet6:
			local = &net.TCPAddr{IP: net.IP(sa.Addr[:]), Port: sa.Port}
		}
	}
	return &net.OpError{Op: op, Net: "tcp", Source: local, Addr: lc.addr(), Err: err}
}

func (lc *loopConn) addr() net.Addr {
	if lc.ai >= len(lc.addrs) {
		return nil
	}
	return lc.addrs[lc.ai].addr
}

// read takes what the socket holds and parses the response so far. Edge
// triggered: a short read has taken all there was, and more bytes bring
// another event; but the peer's close seen in this event (drain) brings
// none, so then it reads on to the end.
func (l *eventLoop) read(lc *loopConn, drain bool) {
	for {
		n0 := copy(l.rbuf, lc.tail)
		n, rx, e := l.recv.read(lc.fd, l.rbuf[n0:])
		var final error
		switch e {
		case 0:
			if n == 0 {
				final = io.EOF
			} else {
				lc.rx = rx // the last bytes', as rawIO keeps it
			}
		case unix.EINTR:
			continue
		case unix.EAGAIN:
			return
		default:
			n, final = 0, lc.opError("read", os.NewSyscallError("read", e))
		}
		data := l.rbuf[:n0+n]
		l.peerEnded = drain
		if l.parse(lc, data, final) {
			return
		}
		if len(data) > loopMaxInLoop || lc.parses > loopMaxParses {
			l.handoff(lc, data)
			return
		}
		lc.tail = append(lc.tail[:0], data...)
		if !drain && n0+n < len(l.rbuf) {
			return // short: all there was
		}
	}
}

// parse reads the response in data, whose connection ends with final
// (nil: still open). It reports false when the response goes on past data.
func (l *eventLoop) parse(lc *loopConn, data []byte, final error) bool {
	l.rd = tailReader{data: data, err: final}
	l.br.Reset(&l.rd)
	r, err := readResponse(l.br, lc.c.method == http.MethodHead, &l.scratch, nil)
	r.wireIn = int64(len(data)) // the response's bytes from its start, as received
	l.scratch.trim()
	lc.parses++
	if l.rd.short {
		return false
	}
	if err == nil && (l.rd.off < len(data) || l.br.Buffered() > 0 || l.peerEnded) {
		// Unasked bytes: out of step, as leanConn finds them; or the
		// peer has closed already, and no event would say so.
		r.keepAlive = false
	}
	l.end(lc, r, err)
	return true
}

// expire ends lc's exchange at its deadline.
func (l *eventLoop) expire(lc *loopConn) {
	op := "read"
	switch lc.state {
	case stConnecting:
		op = "dial"
	case stWriting:
		op = "write"
	}
	var err error = lc.opError(op, os.ErrDeadlineExceeded)
	if op == "dial" {
		err = &net.OpError{Op: op, Net: "tcp", Addr: lc.addr(), Err: os.ErrDeadlineExceeded} // no local address yet
	}
	if lc.state == stReading {
		l.parseFinal(lc, err)
		return
	}
	l.fail(lc, err)
}

// parseFinal ends lc's exchange with err as the connection's end, after
// the bytes received: the parser's verdict counts the body read so far.
func (l *eventLoop) parseFinal(lc *loopConn, err error) {
	if !l.parse(lc, lc.tail, err) {
		l.end(lc, response{}, err) // cannot be: the parse had the final error
	}
}

// fail ends lc's exchange with err before any byte of the response.
func (l *eventLoop) fail(lc *loopConn, err error) { l.end(lc, response{}, err) }

// end ends lc's exchange: a result, or once more on a new connection when
// a reused one turned out closed before the response began (as exchange).
func (l *eventLoop) end(lc *loopConn, r response, err error) {
	done := time.Now()
	if err == nil {
		done = arrivedAt(lc.rx, lc.res.Sent, done)
	}
	l.untime(lc)
	res := lc.res
	res.BytesIn += r.wireIn
	keep := err == nil && r.keepAlive && !lc.c.plan.wantClose && !lc.release
	if err != nil && !lc.fresh && lc.reused && !r.started && lc.c.plan.replayable && !isTimeout(err) {
		l.retry(lc)
		return
	}
	res.Done = done
	if err != nil {
		res.Err, res.ErrClass = err, Classify(err)
	} else {
		res.Status = r.status
	}
	l.ready = append(l.ready, load.Ended{VU: lc.vu, Result: res})
	lc.c, lc.out, lc.tail = nil, nil, lc.tail[:0]
	if cap(lc.pend) > maxRetainedBuf {
		lc.pend = nil
	}
	if cap(lc.tail) > leanReadBuffer {
		lc.tail = nil // an idle connection keeps little
	}
	if !keep {
		l.drop(lc)
		return
	}
	lc.reused = true
	lc.state = stIdle
	if l.own(lc); !lc.owned {
		l.pool(lc) // the VU has another (it sent two at once)
	}
}

// retry sends lc's request again on a new connection, by the same deadline.
func (l *eventLoop) retry(old *loopConn) {
	c, iter, res, deadline, vu := old.c, old.iter, old.res, old.timer.At, old.vu
	l.drop(old)
	lc := l.newConn(vu, old.t, old.addrs)
	lc.c, lc.iter, lc.res, lc.timer.At, lc.fresh = c, iter, res, deadline, true
	l.timers.Add(lc)
	_, out, _, _ := l.s.renderLean(c, vu, iter, &l.lb) // as the first time
	l.begin(lc, out)
}

// handoff gives lc's exchange to a goroutine that finishes the response
// with the blocking client's code, data first: a large body or a slow
// server costs the loop nothing more and the loop keeps no large buffer.
func (l *eventLoop) handoff(lc *loopConn, data []byte) {
	l.untime(lc)
	res, deadline, head, vu := lc.res, lc.timer.At, lc.c.method == http.MethodHead, lc.vu
	keepable := !lc.c.plan.wantClose && !lc.release
	back := loopBack{fd: -1, vu: vu, t: lc.t, addrs: lc.addrs, ai: lc.ai}
	// Out of the set first: the dup below would keep it there.
	l.r.Remove(lc.fd)
	f := os.NewFile(uintptr(lc.fd), "")
	conn, err := net.FileConn(f) // a dup, in Go's netpoller
	l.byFD[lc.fd], lc.fd = nil, -1
	f.Close()
	lc.c = nil
	l.drop(lc)
	if err != nil {
		res.Done = time.Now()
		res.Err, res.ErrClass = err, Classify(err)
		l.ready = append(l.ready, load.Ended{VU: vu, Result: res})
		return
	}
	got := bytes.Clone(data)
	ctx := l.ctx
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		defer conn.Close()
		var interrupted atomic.Bool
		stop := context.AfterFunc(ctx, func() {
			interrupted.Store(true)
			conn.SetDeadline(pastDeadline) //nolint:errcheck // the conn is given up anyway
		})
		defer stop()
		var r response
		err := conn.SetDeadline(deadline)
		if err == nil {
			var s scratch
			early := bytes.NewReader(got)
			raw := newRawIO(conn)
			cr := countReader{r: raw}
			br := bufio.NewReaderSize(io.MultiReader(early, &cr), leanReadBuffer)
			r, err = readResponse(br, head, &s, nil)
			r.wireIn = int64(len(got)) + cr.n
			if err == nil && r.keepAlive && keepable && early.Len() == 0 && br.Buffered() == 0 {
				back.fd = dupConn(conn) // the loop keeps the connection, as Do would
			}
			if err == nil {
				r.rx = receivedBy(raw) // 0, timed now, if it ended in what the loop had read
			}
		}
		res.Done = arrivedAt(r.rx, res.Sent, time.Now())
		res.BytesIn += r.wireIn
		switch {
		case err != nil && interrupted.Load():
			res.Err, res.ErrClass = fmt.Errorf("%w: %w: %w", ErrInterrupted, context.Canceled, err), ClassOther
		case err != nil:
			res.Err, res.ErrClass = err, Classify(err)
		default:
			res.Status = r.status
		}
		l.post(vu, res, back)
	}()
}

// dupConn is a duplicate of conn's socket, to outlive conn's Close (which
// takes the socket out of Go's netpoller), or -1.
func dupConn(conn net.Conn) int {
	fd := -1
	if sc, ok := conn.(syscall.Conn); ok {
		if rc, err := sc.SyscallConn(); err == nil {
			rc.Control(func(s uintptr) { //nolint:errcheck // fd stays -1
				fd, _ = unix.FcntlInt(s, unix.F_DUPFD_CLOEXEC, 0)
			})
		}
	}
	return fd
}

// adopt makes a connection given back by a hand-off a kept one of the loop.
func (l *eventLoop) adopt(b loopBack) {
	lc := &loopConn{fd: -1, state: stIdle, t: b.t, addrs: b.addrs, ai: b.ai, vu: b.vu, reused: true}
	if l.register(lc, b.fd) != nil {
		return
	}
	if l.own(lc); !lc.owned {
		l.pool(lc)
	}
}

// untime takes lc out of the deadline heap.
func (l *eventLoop) untime(lc *loopConn) {
	l.timers.Remove(lc)
}

// closeFD closes lc's socket (which leaves the epoll set with it).
func (l *eventLoop) closeFD(lc *loopConn) {
	if lc.fd >= 0 {
		l.byFD[lc.fd] = nil
		unix.Close(lc.fd)
		lc.fd = -1
	}
}

// drop closes lc and forgets it.
func (l *eventLoop) drop(lc *loopConn) {
	l.closeFD(lc)
	if lc.owned {
		delete(l.vus, lc.vu)
		lc.owned = false
	}
}

// Cancel ends every iteration in flight as interrupted; those on
// goroutines end through their context and come back in a later Wait.
func (l *eventLoop) Cancel() {
	l.readUnread() // what has come in has ended, not been interrupted
	l.cancel()
	l.ctx, l.cancel = context.WithCancel(context.Background())
	err := fmt.Errorf("%w: %w", ErrInterrupted, context.Canceled)
	for lc, ok := l.timers.First(); ok; lc, ok = l.timers.First() {
		if lc.state == stReading {
			lc.res.BytesIn += int64(len(lc.tail)) // the bytes so far count, as in Do
		}
		l.untime(lc)
		res := lc.res
		res.Done = time.Now()
		res.Err, res.ErrClass = err, ClassOther
		l.ready = append(l.ready, load.Ended{VU: lc.vu, Result: res})
		lc.c = nil
		l.drop(lc)
	}
}

// Release closes vu's connections: the loop's, now or when its exchange
// ends, and the lean client's that a fallback left.
func (l *eventLoop) Release(vu uint64) {
	if lc := l.vus[vu]; lc != nil {
		if lc.state == stIdle {
			l.drop(lc)
		} else {
			lc.release = true
		}
	}
	l.s.ReleaseVU(vu)
	l.compact()
}

// compactAbove is the size below which the loop's tables are left as they are.
const compactAbove = 64

// compact lets go of the room a stall's thousands of connections needed
// once they are gone (load releases retired VUs): Go's maps never shrink
// and the slices keep their capacity, so the VU map is made again, the fd
// table cut after its last connection and the timer heap's array copied,
// each when it holds under a quarter of its peak. The factor keeps a pool
// that oscillates from copying at every change.
func (l *eventLoop) compact() {
	if n := len(l.vus); l.vusPeak > compactAbove && n < l.vusPeak/4 {
		vus := make(map[uint64]*loopConn, 2*n)
		for vu, lc := range l.vus {
			vus[vu] = lc
		}
		l.vus, l.vusPeak = vus, 2*n
	}
	if len(l.byFD) > compactAbove {
		last := len(l.byFD) - 1
		for last >= 0 && l.byFD[last] == nil {
			last--
		}
		if last+1 < len(l.byFD)/4 {
			l.byFD = append(make([]*loopConn, 0, 2*(last+1)), l.byFD[:last+1]...)
		}
	}
	l.timers.Compact(compactAbove)
}

// Close ends what is in flight, waits for the goroutines and closes every
// socket and descriptor of the loop.
func (l *eventLoop) Close() error {
	if l.done {
		return nil
	}
	l.done = true
	l.Cancel()
	l.cancel()
	l.wg.Wait()
	l.mu.Lock()
	l.closed = true
	for _, b := range l.back {
		unix.Close(b.fd)
	}
	l.back = nil
	l.mu.Unlock()
	for _, lc := range l.byFD {
		if lc != nil {
			l.drop(lc)
		}
	}
	l.r.Close()
	l.ready, l.byFD = nil, nil
	return nil
}
