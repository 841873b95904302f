//go:build linux

package hostinfo

import (
	"context"
	"runtime"
	"sync"
	"time"
	_ "unsafe" // go:linkname

	"golang.org/x/sys/unix"

	"github.com/knee-dev/knee/rundir"
)

// WakeFloor measures how late this machine wakes a bare thread from a timed
// wait: waits sleeps of period each, on one OS thread with the 1 ns timer
// slack knee's event loop sets, each until an absolute instant of the
// monotonic clock (clock_nanosleep), timed by how long after that instant
// the thread ran again. No generator that sleeps until its next start can
// send sooner after it: it is the floor under send lag, and it tells a slow
// machine from a slow generator. nil when ctx ends first (seen between
// waits: a wait is short).
func WakeFloor(ctx context.Context, waits int, period time.Duration) *rundir.WakeFloor {
	defer bareThread()()
	late := lateness{few: make([]time.Duration, 0, min(max(waits, 0), fewLate))}
	var yielded int64 // the last yield (see probeYield)
	for range waits {
		if ctx.Err() != nil {
			return nil
		}
		now := monotonic()
		if now-yielded >= int64(probeYield) {
			runtime.Gosched()
			yielded, now = now, monotonic()
		}
		l, ok := sleepUntil(now + int64(period))
		if !ok {
			return nil
		}
		late.add(l)
	}
	return floorOf(late.histogram(), waits, period)
}

// sleepUntil sleeps the thread until due (CLOCK_MONOTONIC nanoseconds) in
// clock_nanosleep and returns how late after it the thread ran again; false
// when the sleep fails. One system call a wait where the sleeper (a
// timerfd, for waits that must end at once on cancel) makes two: 200 waits
// of 1 ms cost 5.7-8.8 ms of CPU against 7.4-10.7 ms (6 rounds each, with
// lateness p50 36-46 µs both).
func sleepUntil(due int64) (time.Duration, bool) {
	ts := unix.NsecToTimespec(due)
	for {
		err := unix.ClockNanosleep(unix.CLOCK_MONOTONIC, unix.TIMER_ABSTIME, &ts, nil)
		if err == nil {
			break
		}
		if err != unix.EINTR {
			return 0, false
		}
	}
	return time.Duration(monotonic() - due), true
}

// bareThread locks the calling goroutine to its OS thread and gives the
// thread the 1 ns timer slack knee's event loop sets (the kernel's default
// 50 µs would be measured instead of the machine); the returned func undoes
// both.
func bareThread() func() {
	runtime.LockOSThread()
	old, err := unix.PrctlRetInt(unix.PR_GET_TIMERSLACK, 0, 0, 0, 0)
	if err != nil || unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0) != nil {
		return runtime.UnlockOSThread
	}
	return func() {
		unix.Prctl(unix.PR_SET_TIMERSLACK, uintptr(old), 0, 0, 0) //nolint:errcheck // best effort: the thread is unlocked next
		runtime.UnlockOSThread()
	}
}

// probeYield is how often a probe's thread yields to the scheduler between
// its waits: well within the 10 ms after which Go's monitor thread counts a
// goroutine that never reschedules as a long computation and takes its P at
// every system call (a hand-off per wait, and the monitor back at its
// fastest pace, 20 µs: ~5 ms of CPU over the 200 waits before a run). The
// event loop yields for the same reason (request/internal/reactor).
const probeYield = 8 * time.Millisecond

// monotonic is the time of CLOCK_MONOTONIC in nanoseconds: the runtime's
// own reading of that clock (runtime.nanotime), through the vDSO, where
// x/sys's ClockGettime is a system call (two a wait: ~1 ms of CPU over the
// 200 before a run). The runtime keeps that function, and its signature,
// for the packages outside it that call it (go.dev/issue/67401).
//
//go:linkname monotonic runtime.nanotime
func monotonic() int64

// sleeper sleeps its thread until an absolute instant of the monotonic
// clock, on a timerfd, in ppoll beside an eventfd that cancel signals: a
// sleep of a second or more (the probe beside a run) ends at once when the
// run does. (A timerfd
// wakes as late as clock_nanosleep: p50 44 µs both, p99s alike, over 20 ×
// 200 waits of 1 ms on this project's machine.) until is called by one
// goroutine; cancel by any, and after close it does nothing.
type sleeper struct {
	timer, wake int // the timerfd and the eventfd

	mu     sync.Mutex
	closed bool
}

func newSleeper() (*sleeper, error) {
	timer, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_CLOEXEC|unix.TFD_NONBLOCK)
	if err != nil {
		return nil, err
	}
	wake, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		unix.Close(timer)
		return nil, err
	}
	return &sleeper{timer: timer, wake: wake}, nil
}

// until sleeps until due (CLOCK_MONOTONIC nanoseconds) and returns how
// late after it the thread ran again; false when cancelled or failed.
func (s *sleeper) until(due int64) (time.Duration, bool) {
	// Arming the timer again also clears its count of expiries: the last
	// expiry needs no read.
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(due)}
	if unix.TimerfdSettime(s.timer, unix.TFD_TIMER_ABSTIME, &spec, nil) != nil {
		return 0, false
	}
	fds := []unix.PollFd{{Fd: int32(s.timer), Events: unix.POLLIN}, {Fd: int32(s.wake), Events: unix.POLLIN}}
	for {
		_, err := unix.Ppoll(fds, nil, nil)
		if err == nil {
			break
		}
		if err != unix.EINTR {
			return 0, false
		}
	}
	if fds[1].Revents != 0 {
		return 0, false
	}
	return time.Duration(monotonic() - due), true
}

// cancel ends the current sleep and every later one.
func (s *sleeper) cancel() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		unix.Write(s.wake, []byte{1, 0, 0, 0, 0, 0, 0, 1}) //nolint:errcheck // a full counter is signalled already
	}
}

func (s *sleeper) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.closed = true
		unix.Close(s.timer)
		unix.Close(s.wake)
	}
}
