package reactor

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// socketPair is a connected pair of non-blocking Unix stream sockets,
// closed at the test's end.
func socketPair(t *testing.T) (a, b int) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fds[0]); unix.Close(fds[1]) })
	return fds[0], fds[1]
}

func newReactor(t *testing.T, timerfd bool) *Reactor {
	t.Helper()
	r, err := New(16, timerfd)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	return r
}

// Both ways of timing a wait (epoll_pwait2, or the timerfd of older
// kernels and of long waits) report a socket's readiness with its generation, return no
// earlier than the wake time without events, and end early on Signal.
func TestReactorPolls(t *testing.T) {
	for _, timerfd := range []bool{false, true} {
		r := newReactor(t, timerfd)
		a, b := socketPair(t)
		gen, err := r.Add(a)
		if err != nil {
			t.Fatal(err)
		}
		// A new connected socket is writable: one edge.
		evs := r.Poll(time.Time{}, time.Now())
		if len(evs) != 1 || evs[0].FD != a || evs[0].Gen != gen || evs[0].Events&Out == 0 || evs[0].Events&In != 0 {
			t.Fatalf("timerfd %v: %+v; want one event of fd %d, generation %d, writable only", timerfd, evs, a, gen)
		}
		if _, err := unix.Write(b, []byte("x")); err != nil {
			t.Fatal(err)
		}
		evs = r.Poll(time.Now().Add(time.Minute), time.Now())
		if len(evs) != 1 || evs[0].Events&In == 0 || evs[0].Events&End != 0 {
			t.Fatalf("timerfd %v: %+v; want fd %d readable, not ended", timerfd, evs, a)
		}
		// Beyond SleepThrough (sockets would wake them): one timed by
		// epoll_pwait2 where the kernel has it, one by the timerfd.
		for _, d := range []time.Duration{(SleepThrough + TimerFrom) / 2, TimerFrom * 2} {
			wake := time.Now().Add(d)
			evs := r.Poll(wake, time.Now())
			if len(evs) != 0 {
				t.Errorf("timerfd %v: a %v wait with nothing ready returned %+v", timerfd, d, evs)
			}
			// A long wait may end EarlyWake before its wake; no wait sooner.
			early := time.Duration(0)
			if d >= TimerFrom && !timerfd && r.SleepsThrough() {
				early = EarlyWake
			}
			if time.Now().Before(wake.Add(-early)) {
				t.Errorf("timerfd %v: a %v wait with nothing ready returned more than %v before its wake time", timerfd, d, early)
			}
		}
		time.AfterFunc(10*time.Millisecond, r.Signal)
		if evs := r.Poll(time.Time{}, time.Now()); len(evs) != 0 {
			t.Errorf("timerfd %v: a signalled wait returned %+v; want no socket's event", timerfd, evs)
		}
		unix.Close(b)
		if evs := r.PollNow(); len(evs) != 1 || evs[0].Events&End == 0 {
			t.Errorf("timerfd %v: after the peer closed: %+v; want fd %d ended", timerfd, evs, a)
		}
	}
}

// A wait within SleepThrough sleeps through a socket's readiness to its
// wake time and leaves it Unread, for PollNow to take.
func TestReactorSleepsThrough(t *testing.T) {
	r := newReactor(t, false)
	if !r.SleepsThrough() {
		t.Skip("SKIP: no epoll_pwait2 on this kernel: every wait wakes for the sockets")
	}
	a, _ := readableSocket(t, r)
	wake := time.Now().Add(SleepThrough / 2)
	if evs := r.Poll(wake, time.Now()); len(evs) != 0 || time.Now().Before(wake) || !r.Unread() {
		t.Fatalf("%+v, unread %v: want none before the wake time, and unread", evs, r.Unread())
	}
	if evs := r.PollNow(); len(evs) != 1 || evs[0].FD != a || evs[0].Events&In == 0 || r.Unread() {
		t.Errorf("%+v, unread %v: want fd %d readable, and nothing unread", evs, r.Unread(), a)
	}
}

// readableSocket adds to r one end of a socket pair, takes its first
// writable edge and writes a byte from the other end: a is readable.
func readableSocket(t *testing.T, r *Reactor) (a, b int) {
	t.Helper()
	a, b = socketPair(t)
	if _, err := r.Add(a); err != nil {
		t.Fatal(err)
	}
	r.PollNow() // the first writable edge
	if _, err := unix.Write(b, []byte("x")); err != nil {
		t.Fatal(err)
	}
	return a, b
}

// After WakeOnEvents a wait within SleepThrough returns on a socket's
// readiness, before its wake time.
func TestReactorWakesOnEvents(t *testing.T) {
	r := newReactor(t, false)
	r.WakeOnEvents()
	a, b := readableSocket(t, r)
	for _, d := range []time.Duration{SleepThrough / 2, time.Hour} {
		evs := r.Poll(time.Now().Add(d), time.Now())
		if len(evs) != 1 || evs[0].FD != a || evs[0].Events&In == 0 || r.Unread() {
			t.Errorf("a %v wait: %+v, unread %v; want fd %d readable at once", d, evs, r.Unread(), a)
		}
		if _, err := unix.Read(a, make([]byte, 8)); err != nil {
			t.Fatal(err)
		}
		if _, err := unix.Write(b, []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
}

// A long wait that a socket ends early leaves its timer set; the next wait
// for the same wake keeps it, and still ends at that wake; once it has
// rung, a wait for the same instant again (now past) and a new one ring too.
func TestReactorLongWaitsKeepTheirTimer(t *testing.T) {
	for _, timerfd := range []bool{false, true} {
		r := newReactor(t, timerfd)
		r.WakeOnEvents()
		wake := time.Now().Add(TimerFrom + 20*time.Millisecond)
		r.Signal() // ends the first wait early, as a socket would
		if evs := r.Poll(wake, time.Now()); len(evs) != 0 {
			t.Errorf("timerfd %v: a signalled wait returned %+v; want no socket's event", timerfd, evs)
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			for time.Now().Before(wake) {
				r.Poll(wake, time.Now())
			}
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			r.Signal()
			t.Fatalf("timerfd %v: the second wait for the same wake never ended", timerfd)
		}
		// A new long wait after the ring: the timer is set again (else the
		// loop below would never end).
		next := time.Now().Add(TimerFrom + 5*time.Millisecond)
		polls := make(chan int, 1)
		go func() {
			n := 0
			for time.Now().Before(next) {
				r.Poll(next, time.Now())
				n++
			}
			polls <- n
		}()
		select {
		case n := <-polls:
			// Two: to EarlyWake before it, then the rest (an EINTR may add one).
			if n > 3 {
				t.Errorf("timerfd %v: a long wait with nothing ready took %d polls, want 2", timerfd, n)
			}
		case <-time.After(10 * time.Second):
			r.Signal()
			t.Fatalf("timerfd %v: a new long wait after the timer rang never ended", timerfd)
		}
	}
}
