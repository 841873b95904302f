package request

import (
	"runtime"
	"slices"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// BenchmarkWakeLateness measures how late a bare epoll_pwait2 wait returns
// after its timeout on this machine, with nothing of knee around it: the
// floor under the event loop's send lag. 1 ms waits, with the thread's
// default timer slack (50 µs) and with the 1 ns the loop sets (see
// eventLoop). What is left with 1 ns is the machine's wake-up from idle,
// which only spinning would remove.
//
//	go test -run '^$' -bench WakeLateness -benchtime 3000x ./request
func BenchmarkWakeLateness(b *testing.B) {
	for _, tt := range []struct {
		name  string
		slack uintptr // 0: the thread's own
	}{{"default-slack", 0}, {"slack-1ns", 1}} {
		b.Run(tt.name, func(b *testing.B) {
			runtime.LockOSThread() // the slack is the thread's; put back below
			defer runtime.UnlockOSThread()
			old, err := unix.PrctlRetInt(unix.PR_GET_TIMERSLACK, 0, 0, 0, 0)
			if err != nil {
				b.Skipf("PR_GET_TIMERSLACK: %v", err)
			}
			if tt.slack > 0 {
				unix.Prctl(unix.PR_SET_TIMERSLACK, tt.slack, 0, 0, 0) //nolint:errcheck // checked by the result
				defer unix.Prctl(unix.PR_SET_TIMERSLACK, uintptr(old), 0, 0, 0)
			}
			epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
			if err != nil {
				b.Fatal(err)
			}
			defer unix.Close(epfd)
			events := make([]unix.EpollEvent, 1)
			late := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for range b.N {
				due := time.Now().Add(time.Millisecond)
				for now := time.Now(); now.Before(due); now = time.Now() {
					ts := unix.NsecToTimespec(int64(due.Sub(now)))
					_, _, e := unix.Syscall6(unix.SYS_EPOLL_PWAIT2, uintptr(epfd), uintptr(unsafe.Pointer(&events[0])), 1, uintptr(unsafe.Pointer(&ts)), 0, 0)
					if e == unix.ENOSYS {
						b.Skip("no epoll_pwait2 (Linux before 5.11)")
					}
				}
				late = append(late, time.Since(due))
			}
			b.StopTimer()
			slices.Sort(late)
			b.ReportMetric(float64(late[len(late)/2])/1e3, "late-p50-µs")
			b.ReportMetric(float64(late[len(late)*99/100])/1e3, "late-p99-µs")
		})
	}
}
