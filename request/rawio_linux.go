package request

import (
	"io"
	"net"
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// rawIO reads and writes a TCP connection of the lean client with raw
// system calls, through its RawConn. The runtime's syscall entry wakes its
// monitor thread when the process was idle, and at a moderate request rate
// a load generator is idle between every two requests: that wake-up (a
// futex, then 20 µs sleeps until the process is idle again) cost more CPU
// than the request's own read and write. A non-blocking socket's read and
// write never block, so a raw call is safe; waiting for readiness, the
// deadline and Close stay with the netpoller, through RawConn. Its errors
// are the ones the connection's own Read and Write return.
type rawIO struct {
	rc           syscall.RawConn
	laddr, raddr net.Addr // for the errors, as net.Conn names them
	p            []byte
	n            int
	errno        syscall.Errno
	read, write  func(fd uintptr) bool
}

// newRawIO returns conn's raw reader and writer, or conn itself where it
// has no RawConn.
func newRawIO(conn net.Conn) io.ReadWriter {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return conn
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return conn
	}
	r := &rawIO{rc: rc, laddr: conn.LocalAddr(), raddr: conn.RemoteAddr()}
	r.read = func(fd uintptr) bool {
		for {
			n, _, e := unix.RawSyscall(unix.SYS_READ, fd, uintptr(unsafe.Pointer(&r.p[0])), uintptr(len(r.p)))
			switch e {
			case unix.EINTR:
				continue
			case unix.EAGAIN:
				return false // wait until readable
			}
			r.n, r.errno = int(n), e
			return true
		}
	}
	r.write = func(fd uintptr) bool {
		for r.n < len(r.p) {
			n, _, e := unix.RawSyscall(unix.SYS_WRITE, fd, uintptr(unsafe.Pointer(&r.p[r.n])), uintptr(len(r.p)-r.n))
			switch e {
			case 0:
				r.n += int(n)
			case unix.EINTR:
			case unix.EAGAIN:
				return false // wait until writable
			default:
				r.errno = e
				return true
			}
		}
		return true
	}
	return r
}

func (r *rawIO) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	r.p, r.n, r.errno = p, 0, 0
	err := r.rc.Read(r.read)
	r.p = nil
	switch {
	case err != nil: // the deadline, or Close
		return 0, r.opError("read", err)
	case r.errno != 0:
		return 0, r.opError("read", os.NewSyscallError("read", r.errno))
	case r.n == 0:
		return 0, io.EOF
	}
	return r.n, nil
}

func (r *rawIO) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	r.p, r.n, r.errno = p, 0, 0
	err := r.rc.Write(r.write)
	r.p = nil
	switch {
	case err != nil:
		return r.n, r.opError("write", err)
	case r.errno != 0:
		return r.n, r.opError("write", os.NewSyscallError("write", r.errno))
	}
	return r.n, nil
}

// opError is err as the connection's Read or Write reports it: RawConn
// names its own operation "raw-read" or "raw-write", which is replaced.
func (r *rawIO) opError(op string, err error) error {
	if oe, ok := err.(*net.OpError); ok {
		err = oe.Err
	}
	return &net.OpError{Op: op, Net: "tcp", Source: r.laddr, Addr: r.raddr, Err: err}
}
