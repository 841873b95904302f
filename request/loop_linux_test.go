package request

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/knee-dev/knee/load"
	"github.com/knee-dev/knee/request/internal/reactor"
)

// On a kernel without epoll_pwait2 a timerfd in the set times the waits:
// deadlines, until and Wake work the same.
func TestLoopWithoutEpollPwait2(t *testing.T) {
	srv := startRaw(t, func(*http.Request) (string, bool) { return "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", false })
	silent := silentServer(t)
	s := newSender(t, []Spec{{URL: srv.url(), Weight: 1}, {URL: silent, Weight: 1, Timeout: 30 * time.Millisecond}}, Options{})
	lp := newTestLoop(t, s)
	l := lp.(*eventLoop)
	r, err := reactor.New(loopEvents, true) // as newLoop makes it on a kernel without epoll_pwait2
	if err != nil {
		t.Fatal(err)
	}
	l.r.Close()
	l.r = r
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
// other goroutines run while the loop waits, on one P (where the loop
// yields with runtime.Gosched) and on two (where it yields to its own P's
// queue; see reactor.Reactor).
func TestLoopLetsGCAndGoroutinesRun(t *testing.T) {
	for _, procs := range []int{1, 2} {
		t.Run(fmt.Sprintf("GOMAXPROCS=%d", procs), func(t *testing.T) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
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
		})
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

// answeredLoop is a Loop sending to a server that answers every request
// with 200 and then tells answered.
func answeredLoop(t *testing.T) (load.Loop, chan struct{}) {
	answered := make(chan struct{}, 8)
	url, _, _ := scriptServer(t, func(_ int, _ *http.Request, conn net.Conn) bool {
		_, err := io.WriteString(conn, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		answered <- struct{}{}
		return err == nil
	})
	return newTestLoop(t, newSender(t, []Spec{{URL: url + "/"}}, Options{})), answered
}

// waitAnswer waits up to 10 s for the server to have answered. On loopback
// the bytes are in knee's socket once the server's write has returned.
func waitAnswer(t *testing.T, answered chan struct{}) {
	t.Helper()
	select {
	case <-answered:
	case <-time.After(10 * time.Second):
		t.Fatal("no answer within 10 s")
	}
}

// A response read after it arrived is timed from its arrival (the kernel's
// receive time), not from the read: its Done is before the Wait that read
// it began (see untilStamped).
func TestLoopTimesResponsesFromTheirArrival(t *testing.T) {
	lp, answered := answeredLoop(t)
	runLoop(t, lp, 1, 1) // connected: the next Start writes at once
	<-answered
	untilStamped(t, func(iter uint64) bool {
		lp.Start(0, iter+1)
		waitAnswer(t, answered)
		time.Sleep(time.Millisecond)
		before := time.Now()
		got := waitEnded(t, lp, 1)[0]
		stamped := lp.(*eventLoop).vus[0].rx != 0
		if got.Status != 200 || got.Done.Before(got.Sent) || stamped && !got.Done.Before(before) {
			t.Fatalf("status %d, sent at 0, done at %v, read from %v, stamped %v: want done between sent and the read", got.Status, got.Done.Sub(got.Sent), before.Sub(got.Sent), stamped)
		}
		return stamped
	})
}

// A Wait whose until is within sleepThrough sleeps through a response that
// arrives before then and returns at until without it, for the caller's
// starts to go first; the next Wait returns it. Only Wake ends it early.
func TestLoopSleepsThroughResponsesNearUntil(t *testing.T) {
	srv := startRaw(t, func(*http.Request) (string, bool) { return "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", false })
	s := newSender(t, []Spec{{URL: srv.url()}}, Options{})
	lp := newTestLoop(t, s)
	if !lp.(*eventLoop).r.SleepsThrough() {
		t.Skip("SKIP: no epoll_pwait2 on this kernel: the loop wakes for every response")
	}
	runLoop(t, lp, 1, 1)
	for iter := uint64(1); iter <= 3; iter++ {
		lp.Start(0, iter)
		until := time.Now().Add(sleepThrough / 2)
		ended := lp.Wait(until, nil)
		if now := time.Now(); now.Before(until) || len(ended) != 0 {
			t.Fatalf("Wait returned %v before until with %d ended; want at until with none: it woke for the response, or read it before returning", until.Sub(now), len(ended))
		}
		ended = waitEnded(t, lp, 1)
		if r := ended[0].Result; r.Status != 200 || r.Done.Before(r.Sent) {
			t.Fatalf("iteration %d: %+v", iter, r)
		}
	}
	// Wake still ends such a wait early (tried a few times: the timer that
	// calls it may itself come late on a busy machine).
	for try := 0; ; try++ {
		until := time.Now().Add(sleepThrough)
		fired := make(chan struct{})
		time.AfterFunc(sleepThrough/10, func() { lp.Wake(); close(fired) })
		lp.Wait(until, nil)
		early := time.Now().Before(until)
		<-fired
		if early {
			break
		}
		if try == 9 {
			t.Fatal("10 waits within sleepThrough ran to until despite a Wake at a tenth of it")
		}
		lp.Wait(time.Now(), nil) // takes the late Wake, which would end the next wait at once
	}
}

// Cancel after a wait that slept through a response counts that response
// as it ended, not as interrupted.
func TestLoopCancelKeepsResponsesSleptThrough(t *testing.T) {
	lp, answered := answeredLoop(t)
	if !lp.(*eventLoop).r.SleepsThrough() {
		t.Skip("SKIP: no epoll_pwait2 on this kernel: the loop wakes for every response")
	}
	runLoop(t, lp, 1, 1)
	<-answered
	lp.Start(0, 1)
	lp.Wait(time.Now().Add(sleepThrough/2), nil)
	waitAnswer(t, answered)
	lp.Cancel()
	if got := waitEnded(t, lp, 1)[0]; got.Status != 200 || got.Err != nil {
		t.Errorf("the response slept through, then Cancel: status %d, err %v; want 200", got.Status, got.Err)
	}
}

// A response too long for the loop is finished by a goroutine (a hand-off)
// and still timed from the arrival of its last bytes. The server writes all
// but the last byte, lets the client take it in (a large write returns
// before its bytes are sent), then writes the last byte alone, which on
// loopback is in knee's socket when the write returns, and keeps the one
// processor busy for 5 ms: Done is no later than the write's end, though
// knee reads the byte 5 ms after it. Small responses go first, until one
// comes stamped (see untilStamped).
func TestLoopTimesHandedOffResponsesFromTheirArrival(t *testing.T) {
	body := strings.Repeat("x", 4*loopMaxInLoop)
	bigResp := fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	var big atomic.Bool
	wrote := make(chan time.Time, 1)
	url, _, _ := scriptServer(t, func(_ int, _ *http.Request, conn net.Conn) bool {
		resp := "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
		if big.Load() {
			resp = bigResp
			if _, err := io.WriteString(conn, resp[:len(resp)-1]); err != nil {
				return false
			}
			time.Sleep(100 * time.Millisecond)
			_, err := io.WriteString(conn, resp[len(resp)-1:])
			end := time.Now()
			// Hold the only P (GOMAXPROCS 1 below) for 5 ms: the hand-off's
			// goroutine reads the last byte only after that.
			for time.Since(end) < 5*time.Millisecond {
			}
			wrote <- end
			return err == nil
		}
		_, err := io.WriteString(conn, resp)
		wrote <- time.Now()
		return err == nil
	})
	lp := newTestLoop(t, newSender(t, []Spec{{URL: url + "/"}}, Options{}))
	iter := untilStamped(t, func(iter uint64) bool {
		lp.Start(0, iter)
		waitEnded(t, lp, 1)
		<-wrote
		return lp.(*eventLoop).vus[0].rx != 0
	})
	big.Store(true)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	lp.Start(0, iter)
	got := waitEnded(t, lp, 1)[0]
	end := <-wrote
	if got.Status != 200 || got.BytesIn != int64(len(bigResp)) {
		t.Fatalf("status %d, %d bytes in, err %v; want 200 and %d", got.Status, got.BytesIn, got.Err, len(bigResp))
	}
	if got.Done.Before(got.Sent) || got.Done.After(end) {
		t.Errorf("sent at 0, done at %v, the server's last write ended at %v: want done between", got.Done.Sub(got.Sent), end.Sub(got.Sent))
	}
}
