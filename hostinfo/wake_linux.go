//go:build linux

package hostinfo

import (
	"context"
	"runtime"
	"time"

	"golang.org/x/sys/unix"

	"github.com/knee-dev/knee/record"
	"github.com/knee-dev/knee/rundir"
)

// WakeFloor measures how late this machine wakes a bare thread from a timed
// wait: waits sleeps of period each, on one OS thread with the 1 ns timer
// slack knee's event loop sets, each until an absolute instant of the
// monotonic clock (clock_nanosleep, TIMER_ABSTIME), timed by how long after
// that instant the thread ran again. No generator that sleeps until its next
// start can send sooner after it: it is the floor under send lag, and it
// tells a slow machine from a slow generator. nil when ctx ends first.
func WakeFloor(ctx context.Context, waits int, period time.Duration) *rundir.WakeFloor {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if old, err := unix.PrctlRetInt(unix.PR_GET_TIMERSLACK, 0, 0, 0, 0); err == nil {
		if unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0) == nil {
			defer unix.Prctl(unix.PR_SET_TIMERSLACK, uintptr(old), 0, 0, 0) //nolint:errcheck // best effort: the thread is unlocked after
		}
	}
	late := record.NewHistogram()
	var now unix.Timespec
	for range waits {
		if ctx.Err() != nil {
			return nil
		}
		if unix.ClockGettime(unix.CLOCK_MONOTONIC, &now) != nil {
			return nil
		}
		due := unix.TimespecToNsec(now) + int64(period)
		ts := unix.NsecToTimespec(due)
		for {
			err := unix.ClockNanosleep(unix.CLOCK_MONOTONIC, unix.TIMER_ABSTIME, &ts, nil)
			if err != unix.EINTR {
				break
			}
		}
		if unix.ClockGettime(unix.CLOCK_MONOTONIC, &now) != nil {
			return nil
		}
		late.Record(time.Duration(unix.TimespecToNsec(now) - due))
	}
	return &rundir.WakeFloor{Waits: waits, Period: period,
		P50MS: late.Percentile(50).Seconds() * 1000, P99MS: late.Percentile(99).Seconds() * 1000}
}
