package hostinfo

import (
	"context"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The floor is a distribution of real waits: as many as asked, p50 at most
// p99, neither negative; a context already ended measures nothing.
func TestWakeFloor(t *testing.T) {
	f := WakeFloor(context.Background(), 20, time.Millisecond)
	if f == nil {
		t.Fatal("no floor measured")
	}
	if f.Waits != 20 || f.Period != time.Millisecond || f.P50MS < 0 || f.P99MS < f.P50MS {
		t.Errorf("floor %+v: want 20 waits of 1 ms, 0 <= p50 <= p99", f)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if f := WakeFloor(ctx, 20, time.Millisecond); f != nil {
		t.Errorf("an ended context measured %+v", f)
	}
}

// monotonic reads CLOCK_MONOTONIC itself (the dues are on that clock): a
// reading lies between two of the system call's, round after round.
func TestMonotonicIsClockMonotonic(t *testing.T) {
	read := func() int64 {
		var ts unix.Timespec
		if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
			t.Fatal(err)
		}
		return unix.TimespecToNsec(ts)
	}
	for range 100 {
		before := read()
		m := monotonic()
		after := read()
		if m < before || m > after {
			t.Fatalf("monotonic() = %d, outside CLOCK_MONOTONIC's %d .. %d", m, before, after)
		}
	}
}
