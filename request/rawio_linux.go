package request

import (
	"io"
	"net"
	"os"
	"syscall"
	"time"
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
//
// Reads take the kernel's receive time of the bytes, as the event loop's
// do: a VU that waits for its response is woken by the netpoller some
// 70–120 µs after the bytes came (on this project's machine), and its
// response is timed from their arrival instead (see arrivedAt).
type rawIO struct {
	rc           syscall.RawConn
	laddr, raddr net.Addr // for the errors, as net.Conn names them
	p            []byte
	n            int
	errno        syscall.Errno
	read, write  func(fd uintptr) bool
	recv         stampedRecv
	rx           int64 // the receive time of the last bytes read (Unix ns); 0 if the kernel gave none

	// A request written ahead of the next Read (writeAhead), inside it:
	// what is left to write (nil once written), how much was, when it
	// ended and its error.
	ahead    []byte
	aheadN   int
	aheadAt  time.Time
	aheadErr error
}

// stampedRecv reads a socket with recvmsg and room for the kernel's
// receive time of the bytes (SO_TIMESTAMPNS, set on the socket), all
// preallocated so that a read allocates nothing.
type stampedRecv struct {
	msg unix.Msghdr
	iov unix.Iovec
	oob [64]byte
}

// read reads fd into p (not empty) once; rx is the kernel's receive time
// (Unix ns) of the last bytes it took, 0 without any or without a stamp.
// Linux turns receive stamps on for the machine from a work queue once the
// first socket asks for them, so a process's first replies may come
// without.
func (s *stampedRecv) read(fd int, p []byte) (n int, rx int64, errno syscall.Errno) {
	s.iov.Base = &p[0]
	s.iov.SetLen(len(p))
	s.msg.Iov, s.msg.Iovlen = &s.iov, 1
	s.msg.Control = &s.oob[0]
	s.msg.SetControllen(len(s.oob))
	r, _, e := unix.RawSyscall(unix.SYS_RECVMSG, uintptr(fd), uintptr(unsafe.Pointer(&s.msg)), 0)
	if e != 0 || r == 0 {
		return 0, 0, e
	}
	return int(r), s.rxTime(), 0
}

// rxTime is the receive time (Unix ns) from the last recvmsg's
// SCM_TIMESTAMPNS control message; 0 without one.
func (s *stampedRecv) rxTime() int64 {
	b := s.oob[:min(int(s.msg.Controllen), len(s.oob))]
	for len(b) >= unix.SizeofCmsghdr {
		h := (*unix.Cmsghdr)(unsafe.Pointer(&b[0]))
		size := int(h.Len)
		if size < unix.SizeofCmsghdr || size > len(b) {
			return 0
		}
		if h.Level == unix.SOL_SOCKET && h.Type == unix.SCM_TIMESTAMPNS && size >= unix.CmsgLen(int(unsafe.Sizeof(unix.Timespec{}))) {
			return (*unix.Timespec)(unsafe.Pointer(&b[unix.CmsgLen(0)])).Nano()
		}
		b = b[min(unix.CmsgSpace(size-unix.CmsgLen(0)), len(b)):]
	}
	return 0
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
	rc.Control(func(fd uintptr) { //nolint:errcheck // without stamps, responses are timed when read
		unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1) //nolint:errcheck // the same
	})
	r.read = func(fd uintptr) bool {
		if r.ahead != nil {
			if !r.writeAheadNow(fd) {
				return true // a full send buffer or an error: Read goes on
			}
			return false // the reply cannot be in before its request: wait
		}
		for {
			n, rx, e := r.recv.read(int(fd), r.p)
			switch e {
			case unix.EINTR:
				continue
			case unix.EAGAIN:
				return false // wait until readable
			}
			r.n, r.errno = n, e
			if n > 0 {
				r.rx = rx
			}
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

// writeAhead makes the next Read write p first, inside its read, before
// it waits for the reply: a request's reply is never in just after it is
// written (on loopback, 1.96 reads a request found 1 reply), so the read
// that found nothing, a system call per request, goes. The runtime clears
// the socket's readiness as the read begins, so a reply that comes after
// the write wakes the wait. written reports the write.
func (r *rawIO) writeAhead(p []byte) {
	r.ahead, r.aheadN, r.aheadAt, r.aheadErr = p, 0, time.Time{}, nil
	if len(p) == 0 {
		r.ahead = nil
	}
}

// written is what writeAhead's write did: the bytes written, when it
// ended (zero if it did not) and its error; the request is dropped if the
// read never came.
func (r *rawIO) written() (int, time.Time, error) {
	if r.ahead != nil && r.aheadErr == nil {
		r.aheadErr = r.opError("write", io.ErrShortWrite)
	}
	r.ahead = nil
	return r.aheadN, r.aheadAt, r.aheadErr
}

// writeAheadNow writes what is left of r.ahead; false when it could not
// write it all (a full send buffer, or an error in r.aheadErr).
func (r *rawIO) writeAheadNow(fd uintptr) bool {
	for r.aheadN < len(r.ahead) {
		n, _, e := unix.RawSyscall(unix.SYS_WRITE, fd, uintptr(unsafe.Pointer(&r.ahead[r.aheadN])), uintptr(len(r.ahead)-r.aheadN))
		switch e {
		case 0:
			r.aheadN += int(n)
		case unix.EINTR:
		case unix.EAGAIN:
			return false
		default:
			r.aheadErr = r.opError("write", os.NewSyscallError("write", e))
			r.ahead = nil
			return false
		}
	}
	r.ahead, r.aheadAt = nil, time.Now()
	return true
}

func (r *rawIO) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	r.p, r.n, r.errno = p, 0, 0
	err := r.rc.Read(r.read)
	if err == nil && r.ahead != nil && r.aheadErr == nil {
		// The send buffer was full: the rest as any write, then the read.
		n, werr := r.Write(r.ahead[r.aheadN:])
		r.aheadN += n
		r.ahead, r.aheadAt, r.aheadErr = nil, time.Now(), werr
		if werr == nil {
			r.p, r.n, r.errno = p, 0, 0
			err = r.rc.Read(r.read)
		}
	}
	r.p = nil
	if r.aheadErr != nil {
		return 0, r.aheadErr
	}
	if err != nil && r.ahead != nil {
		// the deadline, or Close, before the request was written: its error
		r.aheadErr = r.opError("write", err)
		r.ahead = nil
		return 0, r.aheadErr
	}
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

// received is the kernel's receive time of the last bytes read (Unix ns),
// 0 if it gave none.
func (r *rawIO) received() int64 { return r.rx }

// opError is err as the connection's Read or Write reports it: RawConn
// names its own operation "raw-read" or "raw-write", which is replaced.
func (r *rawIO) opError(op string, err error) error {
	if oe, ok := err.(*net.OpError); ok {
		err = oe.Err
	}
	return &net.OpError{Op: op, Net: "tcp", Source: r.laddr, Addr: r.raddr, Err: err}
}
