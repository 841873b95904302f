package load

import (
	"context"
	"os"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// fdPacer sleeps on a timerfd through the runtime's netpoller. The kernel's
// high-resolution timer makes the fd readable at the given nanosecond, and
// the netpoller wakes as soon as it is, where a runtime timer would wait
// for epoll's whole-millisecond timeout: the scheduler wakes within
// microseconds of an intended start without spinning. A wait costs one
// syscall (arming the timer); nothing is read, as arming again resets the
// expiry count, and the clock, not the fd, says when the time has come.
type fdPacer struct {
	f       *os.File
	rc      syscall.RawConn
	stopped func() bool // stops the AfterFunc that closes f when stop ends
	at      time.Time   // the current wait's end, for due
	due     func(uintptr) bool
	arm     func(uintptr) // sets the timer to spec, its error in serr
	spec    unix.ItimerSpec
	serr    error
	slack   time.Duration // least time between wake-ups
}

// newKernelPacer returns nil when the kernel refuses a timerfd (too many
// open files, a seccomp filter); the caller falls back to the runtime timer.
func newKernelPacer(stop context.Context, slack time.Duration) pacer {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return nil
	}
	// A non-blocking fd makes os.File wait for it in the netpoller.
	p := &fdPacer{f: os.NewFile(uintptr(fd), "timerfd"), slack: slack}
	if p.rc, err = p.f.SyscallConn(); err != nil {
		p.f.Close()
		return nil
	}
	p.due = func(uintptr) bool { return !time.Now().Before(p.at) }
	// Made once: a closure made per wait would be an allocation per start.
	p.arm = func(fd uintptr) { p.serr = settime(fd, &p.spec) }
	// Closing f wakes a blocked wait at once: that is how stop reaches a
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
	p.spec = unix.ItimerSpec{Value: unix.NsecToTimespec(int64(d))}
	if err := p.rc.Control(p.arm); err != nil || p.serr != nil {
		return stop.Err() == nil && fallbackWait(at, stop)
	}
	// RawConn.Read forgets readiness seen before it, then calls due before
	// each wait: the timer expires at or after at, so if due finds at not
	// yet reached, the expiry's edge is still to come and will wake it.
	p.at = at
	if err := p.rc.Read(p.due); err != nil {
		// Closed by stop, or a poller error: let the runtime timer finish
		// the wait unless stop ended it.
		return stop.Err() == nil && fallbackWait(at, stop)
	}
	return stop.Err() == nil
}

func (p *fdPacer) gap() time.Duration { return p.slack }

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

// fdAlarm is an alarm on a timerfd waited on through the runtime's
// netpoller, precise as fdPacer. Arming the timer resets its expiry count,
// so the fd is readable exactly when the timer expired after the last set;
// wait reads the count to consume the ring.
type fdAlarm struct {
	f       *os.File
	rc      syscall.RawConn
	stopped func() bool
	rang    func(uintptr) bool
	arm     func(uintptr) // sets the timer to spec
	spec    unix.ItimerSpec
	slack   time.Duration
}

func newKernelAlarm(stop context.Context, slack time.Duration) alarm {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return nil
	}
	a := &fdAlarm{f: os.NewFile(uintptr(fd), "timerfd"), slack: slack}
	if a.rc, err = a.f.SyscallConn(); err != nil {
		a.f.Close()
		return nil
	}
	var buf [8]byte
	a.rang = func(fd uintptr) bool {
		// Raw, as settime: a read of a non-blocking timerfd never blocks,
		// and the scheduler reads it at every wake-up, when the process
		// was idle and a runtime syscall entry would wake its monitor too.
		_, _, errno := unix.RawSyscall(unix.SYS_READ, fd, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)))
		return errno != unix.EAGAIN
	}
	// An error here means the fd is closed (stop): the scheduler is ending.
	a.arm = func(fd uintptr) { _ = settime(fd, &a.spec) }
	// Closing f wakes a blocked wait: that is how stop reaches the scheduler.
	a.stopped = context.AfterFunc(stop, func() { a.f.Close() })
	return a
}

func (a *fdAlarm) set(at time.Time) {
	a.spec = unix.ItimerSpec{}
	if !at.IsZero() {
		// A zero it_value disarms: ask for 1 ns to ring at once.
		a.spec.Value = unix.NsecToTimespec(max(int64(time.Until(at)), 1))
	}
	_ = a.rc.Control(a.arm)
}

func (a *fdAlarm) wait(stop context.Context) bool {
	if stop.Err() != nil {
		return false
	}
	if err := a.rc.Read(a.rang); err != nil {
		if stop.Err() != nil {
			return false
		}
		// A poller error without a stop: degrade to looking every
		// millisecond; the scheduler finds what is due each time.
		return fallbackWait(time.Now().Add(time.Millisecond), stop)
	}
	return stop.Err() == nil
}

func (a *fdAlarm) gap() time.Duration { return a.slack }

func (a *fdAlarm) close() {
	a.stopped()
	a.f.Close()
}

// settime arms (or with a zero value disarms) a timerfd. It is a raw
// syscall: timerfd_settime never blocks, and the runtime's syscall entry
// would wake its monitor thread when the process was idle, which the
// write that follows does anyway, once.
func settime(fd uintptr, spec *unix.ItimerSpec) error {
	_, _, errno := unix.RawSyscall6(unix.SYS_TIMERFD_SETTIME, fd, 0, uintptr(unsafe.Pointer(spec)), 0, 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
}
