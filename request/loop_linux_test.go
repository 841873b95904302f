package request

import (
	"net/http"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// On a kernel without epoll_pwait2 a timerfd in the set times the waits:
// deadlines, until and Wake work the same.
func TestLoopWithoutEpollPwait2(t *testing.T) {
	srv := startRaw(t, func(*http.Request) (string, bool) { return "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", false })
	silent := silentServer(t)
	s := newSender(t, []Spec{{URL: srv.url(), Weight: 1}, {URL: silent, Weight: 1, Timeout: 30 * time.Millisecond}}, Options{})
	lp := newTestLoop(t, s)
	l := lp.(*eventLoop)
	if l.tfd < 0 {
		fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
		if err != nil {
			t.Fatal(err)
		}
		l.tfd = fd
		if err := l.watch(fd, unix.EPOLLIN, 0); err != nil {
			t.Fatal(err)
		}
	}
	l.pwait2 = false
	got := runLoop(t, lp, 6, 3)
	for k, r := range got {
		c := s.choose(k.vu, k.iter)
		if want := c.url.Text() == silent; (r.ErrClass == ClassTimeout) != want || !want && r.Status != 200 {
			t.Errorf("vu %d iter %d (%s): status %d class %q, err %v", k.vu, k.iter, r.Name, r.Status, r.ErrClass, r.Err)
		}
	}
	until := time.Now().Add(20 * time.Millisecond)
	if ended := lp.Wait(until, nil); len(ended) != 0 || time.Now().Before(until) {
		t.Errorf("Wait(until) returned %d iterations, before until", len(ended))
	}
	time.AfterFunc(10*time.Millisecond, lp.Wake)
	if ended := lp.Wait(time.Time{}, nil); len(ended) != 0 {
		t.Errorf("woken Wait returned %d iterations", len(ended))
	}
}

// The loop's waits are system calls the runtime knows of: the GC and
// other goroutines run while the loop waits, even on one P.
func TestLoopLetsGCAndGoroutinesRun(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	s := newSender(t, []Spec{{URL: silentServer(t), Timeout: time.Minute}}, Options{})
	lp := newTestLoop(t, s)
	lp.Start(1, 1) // a deadline in the heap, far away
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 20 {
			runtime.GC()
		}
	}()
	limit := time.Now().Add(10 * time.Second)
	for waits := 0; ; waits++ {
		select {
		case <-done:
			t.Logf("20 GCs during %d waits of 1 ms", waits)
			lp.Cancel()
			lp.Wait(time.Time{}, nil)
			return
		default:
		}
		if time.Now().After(limit) {
			t.Fatal("20 GCs did not finish in 10 s of the loop's waits")
		}
		lp.Wait(time.Now().Add(time.Millisecond), nil)
	}
}
