package request

import (
	"io"
	"net"
	"net/http"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/knee-dev/knee/load"
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

// After a stall's VUs are released, the loop's tables go back to the size
// of what is left: Go's maps never shrink, nor do slices on their own.
func TestLoopCompactsAfterRelease(t *testing.T) {
	srv := startRaw(t, func(*http.Request) (string, bool) {
		return "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", false
	})
	s := newSender(t, []Spec{{URL: srv.url()}}, Options{})
	lp := newTestLoop(t, s)
	const vus = 300
	got := runLoop(t, lp, vus, 1)
	if len(got) != vus {
		t.Fatalf("%d iterations ended, want %d", len(got), vus)
	}
	l := lp.(*eventLoop)
	if len(l.vus) != vus || l.vusPeak != vus {
		t.Fatalf("%d VUs with a connection (peak %d), want %d", len(l.vus), l.vusPeak, vus)
	}
	for vu := uint64(2); vu < vus; vu++ { // VUs 0 and 1 stay
		lp.Release(vu)
	}
	// Made again each time it fell under a quarter of its peak: at 74
	// (peak 148), 36 (72) and 17 (34); below compactAbove it is left.
	if len(l.vus) != 2 || l.vusPeak != 34 {
		t.Errorf("%d VUs with a connection, peak %d after release; want 2 and 34 (the map made again)", len(l.vus), l.vusPeak)
	}
	if len(l.byFD) > compactAbove {
		t.Errorf("fd table of %d entries for 2 connections; want it cut to at most %d", len(l.byFD), compactAbove)
	}
	for vu := range uint64(2) {
		if lc := l.vus[vu]; lc == nil || l.byFD[lc.fd] != lc {
			t.Errorf("VU %d's connection lost from the tables", vu)
		}
	}
	if got := runLoop(t, lp, 2, 1); len(got) != 2 || got[vuIter{0, 0}].Status != 200 || got[vuIter{1, 0}].Status != 200 {
		t.Errorf("the two VUs left could not send again: %+v", got)
	}
	if n := srv.conns.Load(); n != vus {
		t.Errorf("%d connections opened, want %d: VUs 0 and 1 kept theirs", n, vus)
	}
}

// Warm opens each VU's connection before its first start, and the starts
// use them: three VUs, six requests, three connections, all accepted
// before any start. A start that comes while the warmed connection is
// still connecting takes it over.
func TestLoopWarmOpensTheVUsConnections(t *testing.T) {
	url, accepts, _ := scriptServer(t, func(_ int, _ *http.Request, conn net.Conn) bool {
		_, err := io.WriteString(conn, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
		return err == nil
	})
	s := newSender(t, []Spec{{URL: url + "/"}}, Options{})
	lp := newTestLoop(t, s)
	l := lp.(*eventLoop)
	for vu := range uint64(3) {
		l.Warm(vu, 0)
	}
	connecting := l.vus[0] != nil && l.vus[0].state == stConnecting
	lp.Start(0, 0) // at once: on loopback the connect is usually still under way
	if !counterReaches(accepts, 3, 5*time.Second) {
		t.Fatalf("%d connections accepted after warming 3 VUs, want 3", accepts.Load())
	}
	if got := waitEnded(t, lp, 1); got[0].Status != 200 {
		t.Fatalf("VU 0's first request (its connection connecting at the start: %v): %+v", connecting, got[0])
	}
	t.Logf("VU 0's start found its warmed connection connecting: %v", connecting)
	for vu := range uint64(3) {
		l.Warm(vu, 1) // it has a connection: nothing to do
	}
	got := runLoop(t, lp, 3, 2)
	for k, r := range got {
		if r.Status != 200 {
			t.Errorf("vu %d iter %d: %+v", k.vu, k.iter, r)
		}
	}
	if n := accepts.Load(); n != 3 {
		t.Errorf("%d connections for 3 warmed VUs, want 3", n)
	}
}

// A connection Warm cannot make is forgotten without a word; the VU's
// start dials again and counts the error.
func TestLoopWarmFailsQuietly(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	s := newSender(t, []Spec{{URL: "http://" + addr + "/"}}, Options{})
	lp := newTestLoop(t, s)
	l := lp.(*eventLoop)
	l.Warm(0, 0)
	if ended := lp.Wait(time.Now().Add(50*time.Millisecond), nil); len(ended) != 0 {
		t.Fatalf("a warm reported %d iterations: %+v", len(ended), ended)
	}
	if len(l.vus) != 0 {
		t.Fatalf("a refused warm left %d connections", len(l.vus))
	}
	lp.Start(0, 0)
	if got := waitEnded(t, lp, 1); got[0].ErrClass != ClassRefused {
		t.Errorf("the start after a refused warm: class %q, err %v; want %q", got[0].ErrClass, got[0].Err, ClassRefused)
	}
}

// waitEnded waits for n iterations to end on lp, for up to 10 s.
func waitEnded(t *testing.T, lp load.Loop, n int) []load.Ended {
	t.Helper()
	var ended []load.Ended
	for limit := time.Now().Add(10 * time.Second); len(ended) < n; {
		if time.Now().After(limit) {
			t.Fatalf("%d of %d iterations ended within 10 s", len(ended), n)
		}
		ended = lp.Wait(limit, ended)
	}
	return ended
}
