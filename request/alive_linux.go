package request

import (
	"net"
	"syscall"
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
		n, _, err := syscall.Recvfrom(int(fd), a.buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		// 0 bytes is the peer's FIN; data or an error other than "nothing
		// yet" means the connection is not idle and clean either.
		a.closed = n >= 0 && err == nil || err != nil && err != syscall.EAGAIN
		return true
	}
	return a
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
