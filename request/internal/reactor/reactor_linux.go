package reactor

import (
	"os"
	"runtime"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// What an Event's Events say.
const (
	// In: what makes a reading (or idle) socket worth a read.
	In = unix.EPOLLIN | unix.EPOLLRDHUP | unix.EPOLLHUP | unix.EPOLLERR
	// End: the peer has closed or failed; a read after a short one is
	// needed to see it, since no further edge will come.
	End = unix.EPOLLRDHUP | unix.EPOLLHUP | unix.EPOLLERR
	// Out: a connecting or writing socket can go on.
	Out = unix.EPOLLOUT | unix.EPOLLERR | unix.EPOLLHUP
)

// SleepThrough: a wait that ends this soon (at the next deadline or the
// caller's wake time) ends only then or on Signal, not when a socket
// becomes ready; Unread then reports that the sockets' events are still
// to be taken, by PollNow. request's loop uses it to wake once per
// intended start rather than once more per response (see its eventLoop).
const SleepThrough = 5 * time.Millisecond

// TimerFrom: a wait this long or longer is timed by the timerfd, not by
// epoll_pwait2's timeout, to which the kernel gives a slack of 0.1 % of
// its length whatever the thread's own (select_estimate_accuracy, up to
// 100 ms): a 1 s wait returned 1.1-1.2 ms late, a timerfd's 0.15-0.27 ms,
// on this project's machine, and at 1 request/s that was knee's send lag.
// Below it the slack is under 10 µs, and arming the timerfd is one more
// system call per wait, which rates over 100/s would pay.
const TimerFrom = 10 * time.Millisecond

// EarlyWake: a wait of TimerFrom or more ends this long before its wake,
// and the rest is waited as a short wait. Go's monitor thread gives the
// processor of a goroutine 10 ms into a system call to other work, and
// the goroutine must then get one back when the call returns; after a
// short wait it still has its own. At 1 request/s knee's send lag was
// p50 629 µs against a bare thread's 186 µs from the same 1 s waits.
const EarlyWake = 2 * time.Millisecond

// loopYield is how often the reactor's goroutine yields to the scheduler,
// well within the monitor thread's 10 ms (see Reactor).
const loopYield = 5 * time.Millisecond

// Event is one socket's readiness: the Events bits (In, End, Out) and the
// generation the socket was added with (Add), which tells it from an
// earlier socket on the same fd.
type Event struct {
	FD     int
	Gen    uint32
	Events uint32
}

// Reactor is one epoll set of non-blocking sockets that Go's netpoller
// never sees, and an eventfd that Signal writes to.
//
// Waiting: the goroutine sleeps in epoll_pwait2 itself, with a nanosecond
// timeout, through Syscall6 so that the runtime knows the thread is in a
// system call and gives its P to other goroutines and the GC meanwhile.
// Tried and dropped (request's BenchmarkOpenModel, 2 vCPUs):
//   - the epoll fd in Go's netpoller: a wait costs the netpoller's wake-up
//     and the nested epoll on top, about twice the CPU per request at
//     10,000/s;
//   - the thread locked (runtime.LockOSThread) to keep its timer slack of
//     1 ns: wakes up to ~50 µs nearer the intended start, at up to twice
//     the CPU per request at 10,000/s, the locked thread's hand-offs;
//   - short waits (under 2 ms) as raw system calls: Syscall6's entry and
//     exit keep waking the runtime's monitor thread, ~1.5 context switches
//     per request at 2,000/s (3.5 against 2.0 raw, ~95 µs of CPU against
//     ~60), but a goroutine in a raw wait holds its P as if it computed:
//     on one P each GC took ~120 ms instead of under 1 (stopping the world
//     works, by EINTR, but every phase waits for the 10 ms preemption),
//     and runtime.Gosched after each raw wait cost more switches than it
//     saved.
//
// Why the monitor thread woke: it takes for itself the P of a goroutine
// that has run on the same scheduling tick for 10 ms (a long computation,
// to its eyes), and a goroutine that only ever leaves for system calls
// never gets a new tick. After 10 ms of loop, every wait's P was retaken
// (a hand-off, and the monitor back at its fastest pace, 20 µs). A yield
// every few milliseconds (loopYield) gives the loop a new tick, and the
// waits keep their P: half the CPU per request at 1,000/s. The yield is
// the runtime's goyield, which queues the goroutine on its own P and runs
// it again on the same thread: runtime.Gosched queues it on the global
// queue and wakes an idle P's thread, which takes it or goes back to
// sleep, two futex calls and a thread switch per yield (at 300/s, 0.6 more
// context switches per request and a fifth of the generator's CPU). On one
// P (GOMAXPROCS 1, as in a container limited to one CPU) there is no idle P
// to wake, and goyield would starve the global queue, which a P reads only
// every 61st scheduling tick: there runtime.Gosched it is (with goyield,
// TestLoopLetsGCAndGoroutinesRun's 20 GCs took over 10 s in 2 runs of 6).
//
// Timer slack: the kernel may end a thread's timed wait up to its slack
// late (50 µs by default) to batch wake-ups. The waits end at intended
// starts, so after each yield (the only point, besides a preemption, where
// the goroutine can change threads) the thread it runs on gets a slack of
// 1 ns: on 2 vCPUs a raw epoll_pwait2 wait's lateness at 1,000/s went from
// p50 114 µs to 73 µs (p99 251 → 215), at 5,000/s 100 → 53 µs, at no
// measurable CPU. What is left is the machine's own wake-up from idle,
// which only spinning would remove.
type Reactor struct {
	epfd    int
	epwake  int // an epoll set of evfd alone, for the waits that sleep through sockets (see SleepThrough); -1 without epoll_pwait2
	evfd    int
	tfd     int // the timerfd in epfd that times waits of TimerFrom or more, and every wait where the kernel lacks epoll_pwait2 (before 5.11)
	gen     uint32
	raw     []unix.EpollEvent
	events  []Event
	wakeEv  [1]unix.EpollEvent
	unread  bool      // a wait slept through the sockets' events
	yielded time.Time // the last yield (see loopYield)
	procs   int       // GOMAXPROCS when made: how to yield (see Reactor)
	eager   bool      // no wait sleeps through the sockets (WakeOnEvents)
	armed   time.Time // the wake the timerfd is set for; zero when disarmed or rung
}

// New returns a Reactor that takes up to events events per wait. timerfd
// times its waits with a timerfd even where the kernel has epoll_pwait2,
// as it does on kernels before 5.11 (for tests of that path).
func New(events int, timerfd bool) (_ *Reactor, err error) {
	r := &Reactor{epfd: -1, epwake: -1, evfd: -1, tfd: -1, raw: make([]unix.EpollEvent, events), events: make([]Event, events),
		procs: runtime.GOMAXPROCS(0)}
	defer func() {
		if err != nil {
			r.Close()
		}
	}()
	if r.epfd, err = unix.EpollCreate1(unix.EPOLL_CLOEXEC); err != nil {
		return nil, os.NewSyscallError("epoll_create1", err)
	}
	if r.evfd, err = unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC); err != nil {
		return nil, os.NewSyscallError("eventfd", err)
	}
	if err = epollAdd(r.epfd, r.evfd, unix.EPOLLIN, 0); err != nil {
		return nil, err
	}
	var ts unix.Timespec
	_, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT2, uintptr(r.epfd), uintptr(unsafe.Pointer(&r.raw[0])), 1, uintptr(unsafe.Pointer(&ts)), 0, 0)
	if e != unix.ENOSYS && !timerfd {
		if r.epwake, err = unix.EpollCreate1(unix.EPOLL_CLOEXEC); err != nil {
			return nil, os.NewSyscallError("epoll_create1", err)
		}
		if err = epollAdd(r.epwake, r.evfd, unix.EPOLLIN, 0); err != nil {
			return nil, err
		}
	}
	// A timerfd in the set bounds epoll_pwait's wait to the nanosecond.
	if r.tfd, err = unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC); err != nil {
		return nil, os.NewSyscallError("timerfd_create", err)
	}
	if err = epollAdd(r.epfd, r.tfd, unix.EPOLLIN, 0); err != nil {
		return nil, err
	}
	return r, nil
}

// SleepsThrough reports whether short waits sleep through the sockets'
// events (see SleepThrough): false on kernels without epoll_pwait2.
func (r *Reactor) SleepsThrough() bool { return r.epwake >= 0 }

// Add watches the non-blocking socket fd, edge-triggered for reading and
// writing at once (so that no exchange on it needs an epoll_ctl), and
// returns the generation its Events carry.
func (r *Reactor) Add(fd int) (gen uint32, err error) {
	r.gen++
	return r.gen, epollAdd(r.epfd, fd, unix.EPOLLIN|unix.EPOLLOUT|unix.EPOLLRDHUP|unix.EPOLLET, r.gen)
}

// Remove stops watching fd (closing it does that too, unless it has a dup).
func (r *Reactor) Remove(fd int) {
	unix.EpollCtl(r.epfd, unix.EPOLL_CTL_DEL, fd, nil) //nolint:errcheck // the caller closes it anyway
}

// epollAdd adds fd to the epoll set ep, gen in the event's spare field.
func epollAdd(ep, fd int, events uint32, gen uint32) error {
	ev := unix.EpollEvent{Events: events, Fd: int32(fd), Pad: int32(gen)}
	if err := unix.EpollCtl(ep, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
		return os.NewSyscallError("epoll_ctl", err)
	}
	return nil
}

// Signal makes the eventfd readable: a Poll under way returns, or the
// next one at once. Any goroutine may call it before Close.
func (r *Reactor) Signal() {
	one := uint64(1)
	unix.Write(r.evfd, (*[8]byte)(unsafe.Pointer(&one))[:]) //nolint:errcheck // EAGAIN: it is readable already
}

// Unread reports whether a wait slept through the sockets' events and no
// PollNow has taken them since.
func (r *Reactor) Unread() bool { return r.unread }

// Poll waits until wake (no limit when zero) for events, now being the
// time now, and returns the sockets' (valid until the next Poll or
// PollNow). A wait that ends within SleepThrough ends only at wake or on
// Signal, returning none and leaving the sockets' events Unread. A wait of
// TimerFrom or more may return none up to EarlyWake before wake: the
// caller looks at the clock and waits again, as after EINTR.
func (r *Reactor) Poll(wake, now time.Time) []Event {
	if !wake.IsZero() && !now.Before(wake) {
		return r.PollNow()
	}
	if now.Sub(r.yielded) >= loopYield {
		r.yielded = now
		if r.procs > 1 {
			goyield()
		} else {
			runtime.Gosched()
		}
		// The goroutine may have moved to another thread: give this one
		// the least timer slack (see Reactor). A thread keeps it, so
		// this is a system call per yield, not per wait.
		unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0) //nolint:errcheck // best effort: the default slack is only later
	}
	// Syscall6, not RawSyscall6: the runtime must know the thread is in a
	// system call, to give its P to other goroutines and the GC meanwhile
	// (see Reactor). The pointers are converted in the calls themselves,
	// as unsafe's rules require.
	var (
		n uintptr
		e syscall.Errno
	)
	switch {
	case r.epwake >= 0 && !r.eager && !wake.IsZero() && wake.Sub(now) <= SleepThrough:
		// Only Signal ends this wait early; what the sockets say
		// meanwhile is taken by PollNow after Unread.
		ts := unix.NsecToTimespec(int64(wake.Sub(now)))
		unix.Syscall6(unix.SYS_EPOLL_PWAIT2, uintptr(r.epwake), uintptr(unsafe.Pointer(&r.wakeEv[0])), 1, uintptr(unsafe.Pointer(&ts)), 0, 0) //nolint:errcheck // EINTR: early, like a Signal
		r.unread = true
		return nil
	case r.epwake < 0 || !wake.IsZero() && wake.Sub(now) >= TimerFrom:
		// The timerfd times the wait: there is no epoll_pwait2, or the
		// wait is long enough for its timeout's slack to show (TimerFrom).
		// A long wait rings EarlyWake before its wake, and the caller's
		// next Poll waits the rest as a short one. Left armed when sockets
		// end the wait early, the timer is kept by a wait for the same
		// instant (the closed model waits for the span's end again after
		// every reply) and set anew by any other; a short wait it wakes
		// returns no events, and the caller waits again.
		at := wake
		if r.epwake >= 0 {
			at = wake.Add(-EarlyWake)
		}
		if !at.Equal(r.armed) {
			var spec unix.ItimerSpec // zero disarms it
			if !at.IsZero() {
				spec.Value = unix.NsecToTimespec(int64(at.Sub(now)))
			}
			unix.TimerfdSettime(r.tfd, 0, &spec, nil) //nolint:errcheck // cannot fail with a valid spec
			r.armed = at
		}
		n, _, e = unix.Syscall6(unix.SYS_EPOLL_PWAIT, uintptr(r.epfd), uintptr(unsafe.Pointer(&r.raw[0])), uintptr(len(r.raw)), ^uintptr(0), 0, 0)
	case wake.IsZero():
		n, _, e = unix.Syscall6(unix.SYS_EPOLL_PWAIT2, uintptr(r.epfd), uintptr(unsafe.Pointer(&r.raw[0])), uintptr(len(r.raw)), 0, 0, 0)
	default:
		ts := unix.NsecToTimespec(int64(wake.Sub(now)))
		n, _, e = unix.Syscall6(unix.SYS_EPOLL_PWAIT2, uintptr(r.epfd), uintptr(unsafe.Pointer(&r.raw[0])), uintptr(len(r.raw)), uintptr(unsafe.Pointer(&ts)), 0, 0)
	}
	if e != 0 {
		return nil // EINTR: the caller looks at the clock and waits again
	}
	return r.sockets(int(n))
}

// WakeOnEvents makes every later Poll return on the sockets' events,
// however near its wake time: no wait sleeps through them (SleepThrough).
func (r *Reactor) WakeOnEvents() { r.eager = true }

// PollNow returns the sockets' events ready now, without waiting: a raw
// system call, which the runtime need not hear of.
func (r *Reactor) PollNow() []Event {
	r.unread = false
	n, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(r.epfd), uintptr(unsafe.Pointer(&r.raw[0])), uintptr(len(r.raw)), 0, 0, 0)
	if e != 0 {
		return nil // EINTR: the caller looks at the clock and polls again
	}
	return r.sockets(int(n))
}

// sockets drains the eventfd and the timerfd among the first n raw events
// and returns the sockets' events.
func (r *Reactor) sockets(n int) []Event {
	evs := r.events[:0]
	for _, ev := range r.raw[:n] {
		switch fd := int(ev.Fd); fd {
		case r.evfd, r.tfd:
			var b [8]byte
			unix.Read(fd, b[:]) //nolint:errcheck // EAGAIN: already read; a deadline is checked on the clock
			if fd == r.tfd {
				r.armed = time.Time{} // rung: the next long wait sets it again
			}
		default:
			evs = append(evs, Event{FD: fd, Gen: uint32(ev.Pad), Events: ev.Events})
		}
	}
	return evs
}

// Close closes the epoll sets, the eventfd and the timerfd (the sockets
// are their owners'). Signal must not be called after it.
func (r *Reactor) Close() {
	for _, fd := range []int{r.evfd, r.tfd, r.epwake, r.epfd} {
		if fd >= 0 {
			unix.Close(fd)
		}
	}
	r.evfd, r.tfd, r.epfd, r.epwake = -1, -1, -1, -1
}

// goyield is runtime.Gosched without the wake-up of another thread (see
// Reactor). The runtime keeps it, and its signature, for the packages
// outside it that call it (go.dev/issue/67401).
//
//go:linkname goyield runtime.goyield
func goyield()
