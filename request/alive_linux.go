package request

import (
	"net"
	"syscall"
)

// peerClosed reports whether the peer of an idle conn has closed it (or
// sent something unasked), with one non-blocking peek: a request that may
// not be sent twice must not be written into a connection the server has
// already given up. false when it cannot tell.
func peerClosed(conn net.Conn) bool {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	var buf [1]byte
	closed := false
	err = rc.Read(func(fd uintptr) bool {
		n, _, rerr := syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		// 0 bytes is the peer's FIN; data or an error other than "nothing
		// yet" means the connection is not idle and clean either.
		closed = n >= 0 && rerr == nil || rerr != nil && rerr != syscall.EAGAIN
		return true
	})
	return err == nil && closed
}
