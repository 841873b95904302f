package load

import (
	"context"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// fdPacer sleeps on a timerfd read through the runtime's netpoller. The
// kernel's high-resolution timer makes the fd readable at the given
// nanosecond, and the netpoller wakes as soon as it is, where a runtime
// timer would wait for epoll's millisecond timeout: the VU goes out within
// microseconds of its intended start without spinning.
type fdPacer struct {
	f       *os.File
	stopped func() bool // stops the AfterFunc that closes f when stop ends
	buf     [8]byte
}

// newKernelPacer returns nil when the kernel refuses a timerfd (too many
// open files, a seccomp filter); the caller falls back to the runtime timer.
func newKernelPacer(stop context.Context) pacer {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return nil
	}
	// A non-blocking fd makes os.File park reads in the netpoller.
	p := &fdPacer{f: os.NewFile(uintptr(fd), "timerfd")}
	// Closing f wakes a blocked read at once: that is how stop reaches a
	// sleeping VU.
	p.stopped = context.AfterFunc(stop, func() { p.f.Close() })
	return p
}

func (p *fdPacer) wait(at time.Time, stop context.Context) bool {
	if stop.Err() != nil {
		return false
	}
	d := time.Until(at)
	if d <= 0 {
		return true
	}
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(int64(d))}
	rc, err := p.f.SyscallConn()
	if err != nil {
		return false
	}
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = unix.TimerfdSettime(int(fd), 0, &spec, nil) }); err != nil || serr != nil {
		return stop.Err() == nil && fallbackWait(at, stop)
	}
	if _, err := p.f.Read(p.buf[:]); err != nil {
		// Closed by stop, or a read error: let the runtime timer finish
		// the wait unless stop ended it.
		return stop.Err() == nil && fallbackWait(at, stop)
	}
	return stop.Err() == nil
}

func (p *fdPacer) close() {
	p.stopped()
	p.f.Close()
}

// fallbackWait finishes a wait on a runtime timer.
func fallbackWait(at time.Time, stop context.Context) bool {
	t := newStoppedTimer()
	defer t.Stop()
	return wait(t, at, stop)
}
