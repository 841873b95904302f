package load

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The kernel timer is silent until set, then readable once the time is up:
// what wakes the netpoller.
func TestKernelTimerRingsOnceSet(t *testing.T) {
	k := newKernelTimer()
	if k == nil {
		t.Skip("SKIP: the kernel refused a timerfd; knee paces with runtime timers alone")
	}
	defer k.close()
	fd := int(k.(*fdTimer).f.Fd())
	if readable(t, fd, 20) {
		t.Fatal("readable before it was set")
	}
	start := time.Now()
	if err := k.set(3 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if !readable(t, fd, 10_000) {
		t.Fatal("not readable 10 s after being set for 3 ms")
	}
	if took := time.Since(start); took < 3*time.Millisecond {
		t.Errorf("rang after %v, before the 3 ms it was set for", took)
	}
	// Setting it again resets the count: silent until the new time.
	if err := k.set(time.Hour); err != nil {
		t.Fatal(err)
	}
	if readable(t, fd, 20) {
		t.Error("still readable after being set again for an hour")
	}
}

func readable(t *testing.T, fd, ms int) bool {
	t.Helper()
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(fds, ms)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		return n == 1
	}
}
