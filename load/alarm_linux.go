package load

import (
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// fdTimer is a timerfd in the runtime's netpoller: a non-blocking fd given
// to os.NewFile is registered with epoll, so its expiry wakes an idle
// netpoller at once. It is never read: arming it again resets its count.
type fdTimer struct {
	f  *os.File
	rc syscall.RawConn
}

// newKernelTimer is nil when the kernel refuses a timerfd (too many open
// files, a seccomp filter).
func newKernelTimer() kernelTimer {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return nil
	}
	t := &fdTimer{f: os.NewFile(uintptr(fd), "timerfd")}
	if t.rc, err = t.f.SyscallConn(); err != nil {
		t.f.Close()
		return nil
	}
	return t
}

func (t *fdTimer) set(d time.Duration) error {
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(int64(d))}
	var serr error
	if err := t.rc.Control(func(fd uintptr) { serr = unix.TimerfdSettime(int(fd), 0, &spec, nil) }); err != nil {
		return err
	}
	return serr
}

func (t *fdTimer) close() { t.f.Close() }
