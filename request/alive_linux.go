package request

import (
	"net"
	"syscall"
	"unsafe"
)

// aliveCheck peeks at an idle connection without blocking. It is built once
// per connection, so that a check allocates nothing.
type aliveCheck struct {
	rc     syscall.RawConn
	peek   func(fd uintptr) bool
	buf    [1]byte
	closed bool
}

func newAliveCheck(conn net.Conn) *aliveCheck {
	a := new(aliveCheck)
	if sc, ok := conn.(syscall.Conn); ok {
		a.rc, _ = sc.SyscallConn()
	}
	a.peek = func(fd uintptr) bool {
		a.closed = peekNotIdle(int(fd), &a.buf)
		return true
	}
	return a
}

// peekNotIdle peeks at idle socket fd without blocking: true when the
// peer's FIN (0 bytes), unasked data or an error is there; false only for
// "nothing yet", a connection idle and clean. The event loop's sockets are
// checked with it too.
func peekNotIdle(fd int, buf *[1]byte) bool {
	_, _, e := syscall.RawSyscall6(syscall.SYS_RECVFROM, uintptr(fd), uintptr(unsafe.Pointer(&buf[0])), 1,
		syscall.MSG_PEEK|syscall.MSG_DONTWAIT, 0, 0)
	return e != syscall.EAGAIN
}

// peerClosed reports whether the peer of an idle conn has closed it (or
// sent something unasked), with one non-blocking peek: a request that may
// not be sent twice must not be written into a connection the server has
// already given up. false when it cannot tell.
func (a *aliveCheck) peerClosed() bool {
	if a.rc == nil {
		return false
	}
	a.closed = false
	err := a.rc.Read(a.peek)
	return err == nil && a.closed
}
