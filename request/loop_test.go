package request

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/knee-dev/knee/load"
)

// newTestLoop is s's Loop, closed at the end of the test. The test's
// goroutine must be the only one to use it.
func newTestLoop(t testing.TB, s *Sender) load.Loop {
	t.Helper()
	if !loopPlatform {
		t.Skip("no event loop on this platform")
	}
	lp, err := s.NewLoop()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lp.Close() })
	return lp
}

type vuIter struct{ vu, iter uint64 }

// runLoop runs iters iterations of each of vus VUs on lp, every VU's next
// iteration started as soon as its previous one ends, all VUs at once.
func runLoop(t *testing.T, lp load.Loop, vus, iters int) map[vuIter]load.Result {
	t.Helper()
	got := map[vuIter]load.Result{}
	next := map[uint64]uint64{}
	for vu := range uint64(vus) {
		lp.Start(vu, 0)
		next[vu] = 1
	}
	limit := time.Now().Add(20 * time.Second)
	var ended []load.Ended
	for len(got) < vus*iters {
		if time.Now().After(limit) {
			t.Fatalf("%d of %d iterations ended within 20 s", len(got), vus*iters)
		}
		ended = lp.Wait(limit, ended[:0])
		for _, e := range ended {
			got[vuIter{e.VU, next[e.VU] - 1}] = e.Result
			if next[e.VU] < uint64(iters) {
				lp.Start(e.VU, next[e.VU])
				next[e.VU]++
			}
		}
	}
	return got
}

// runDo runs the same iterations through Do, each VU a goroutine.
func runDo(s *Sender, vus, iters int) map[vuIter]load.Result {
	var mu sync.Mutex
	got := map[vuIter]load.Result{}
	var wg sync.WaitGroup
	for vu := range uint64(vus) {
		wg.Go(func() {
			for iter := range uint64(iters) {
				res := s.Do(context.Background(), vu, iter)
				mu.Lock()
				got[vuIter{vu, iter}] = res
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return got
}

// silentServer reads requests and never answers.
func silentServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Go(func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer conn.Close()
				gone := make(chan struct{})
				go func() { io.Copy(io.Discard, conn); close(gone) }()
				select {
				case <-stop:
				case <-gone: // the client closed
				}
			})
		}
	})
	t.Cleanup(func() { close(stop); ln.Close(); wg.Wait() })
	return "http://" + ln.Addr().String() + "/"
}

// The loop's results are Do's, request for request: name, status, body
// bytes in and out, error class; with every VU in flight at once.
func TestLoopMatchesDo(t *testing.T) {
	if !loopPlatform {
		t.Skip("no event loop on this platform")
	}
	ok := func(body string) func(*http.Request) (string, bool) {
		return func(*http.Request) (string, bool) {
			return fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", len(body), body), false
		}
	}
	echoLen := func(r *http.Request) (string, bool) {
		return fmt.Sprintf("HTTP/1.1 201 Created\r\nContent-Length: %d\r\n\r\n%s", r.ContentLength, strings.Repeat("e", int(r.ContentLength))), false
	}
	big := strings.Repeat("b", 1<<20)
	tests := []struct {
		name   string
		specs  func(t *testing.T) []Spec
		class  string // every request's
		status int
		resent bool // Do may write the request twice (a reused connection found closed), the loop once
	}{
		{"keep-alive GET", func(t *testing.T) []Spec {
			return []Spec{{URL: startRaw(t, ok("hello")).url() + "get?vu={vu}"}}
		}, "", 200, false},
		{"templated POST", func(t *testing.T) []Spec {
			return []Spec{{Method: "POST", URL: startRaw(t, echoLen).url(), Body: `{"vu":{vu},"iter":{iter},"pad":"{vu}{iter}{iter}"}`}}
		}, "", 201, false},
		{"HEAD", func(t *testing.T) []Spec {
			srv := startRaw(t, func(*http.Request) (string, bool) { return "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n", false })
			return []Spec{{Method: "HEAD", URL: srv.url()}}
		}, "", 200, false},
		{"chunked", func(t *testing.T) []Spec {
			srv := startRaw(t, func(*http.Request) (string, bool) {
				return "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6;x=1\r\n world\r\n0\r\nX-T: 1\r\n\r\n", false
			})
			return []Spec{{URL: srv.url()}}
		}, "", 200, false},
		{"Connection: close", func(t *testing.T) []Spec {
			srv := startRaw(t, func(*http.Request) (string, bool) {
				return "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok", true
			})
			return []Spec{{URL: srv.url()}}
		}, "", 200, false},
		{"server closes kept connections", func(t *testing.T) []Spec {
			srv := startRaw(t, func(*http.Request) (string, bool) { return "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", true })
			return []Spec{{URL: srv.url()}}
		}, "", 200, true},
		// (A POST there is raced by the server's FIN in Do: the lean
		// client may find the connection still open and write into it.
		// TestDoSurvivesServerClosingIdleConnections waits for the FIN.)
		{"1 MiB body, beyond the loop's bound", func(t *testing.T) []Spec {
			return []Spec{{URL: startRaw(t, ok(big)).url()}}
		}, "", 200, false},
		{"refused", func(t *testing.T) []Spec { return []Spec{{URL: "http://" + closedPort(t) + "/"}} }, ClassRefused, 0, false},
		{"never answers", func(t *testing.T) []Spec {
			return []Spec{{URL: silentServer(t), Timeout: 100 * time.Millisecond}}
		}, ClassTimeout, 0, false},
		{"truncated body", func(t *testing.T) []Spec {
			srv := startRaw(t, func(*http.Request) (string, bool) { return "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", true })
			return []Spec{{URL: srv.url()}}
		}, ClassReset, 0, false},
		{"malformed", func(t *testing.T) []Spec {
			srv := startRaw(t, func(*http.Request) (string, bool) { return "HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n", true })
			return []Spec{{URL: srv.url()}}
		}, ClassOther, 0, false},
		// net/http's requests (user info) on goroutines, mixed with the
		// loop's own, to two servers.
		{"fallback mixed with lean", func(t *testing.T) []Spec {
			a, b := startRaw(t, ok("lean")), startRaw(t, ok("net/http"))
			return []Spec{{URL: a.url()}, {URL: strings.Replace(b.url(), "http://", "http://user:pw@", 1)}}
		}, "", 200, false},
		// A name: Do resolves the first ones while the loop resolves it
		// once; localhost may come first as ::1, which refuses, as Go's
		// dialer then tries the next address.
		{"a name to resolve", func(t *testing.T) []Spec {
			srv := startRaw(t, ok("named"))
			_, port, _ := net.SplitHostPort(srv.ln.Addr().String())
			return []Spec{{URL: "http://localhost:" + port + "/"}}
		}, "", 200, false},
	}
	const vus, iters = 6, 4
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			specs := tt.specs(t)
			want := runDo(newSender(t, specs, Options{}), vus, iters)
			s := newSender(t, specs, Options{})
			got := runLoop(t, newTestLoop(t, s), vus, iters)
			for k, w := range want {
				g := got[k]
				if g.Name != w.Name || g.Status != w.Status || g.ErrClass != w.ErrClass || g.BytesIn != w.BytesIn || g.BytesOut != w.BytesOut && !tt.resent {
					t.Errorf("vu %d iter %d: loop %s %d %q, %d bytes in, %d out (%v); Do %s %d %q, %d in, %d out (%v)",
						k.vu, k.iter, g.Name, g.Status, g.ErrClass, g.BytesIn, g.BytesOut, g.Err, w.Name, w.Status, w.ErrClass, w.BytesIn, w.BytesOut, w.Err)
				}
				if g.ErrClass != tt.class || g.Status != tt.status {
					t.Errorf("vu %d iter %d: status %d class %q (%v), want %d %q", k.vu, k.iter, g.Status, g.ErrClass, g.Err, tt.status, tt.class)
				}
				if g.Sent.IsZero() || g.Done.Before(g.Sent) {
					t.Errorf("vu %d iter %d: sent %v, done %v", k.vu, k.iter, g.Sent, g.Done)
				}
			}
		})
	}
}

// A keep-alive connection per VU, kept across iterations, also when a
// response is too large for the loop and a goroutine finishes it.
func TestLoopKeepsOneConnectionPerVU(t *testing.T) {
	for _, size := range []int{10, 1 << 20} {
		body := strings.Repeat("k", size)
		resp := fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
		srv := startRaw(t, func(*http.Request) (string, bool) { return resp, false })
		s := newSender(t, []Spec{{URL: srv.url()}}, Options{})
		got := runLoop(t, newTestLoop(t, s), 5, 6)
		for k, r := range got {
			if r.Status != 200 || r.BytesIn != int64(len(resp)) {
				t.Fatalf("body %d: vu %d iter %d: status %d, %d bytes in, err %v", size, k.vu, k.iter, r.Status, r.BytesIn, r.Err)
			}
		}
		if n := srv.conns.Load(); n != 5 {
			t.Errorf("body %d: 5 VUs opened %d connections, want 5", size, n)
		}
	}
}

// One VU sending to two hosts in turn keeps a connection to each, as the
// lean client's overflow pool does, rather than redialling at each switch.
func TestLoopKeepsConnectionsToSeveralHosts(t *testing.T) {
	reply := func(*http.Request) (string, bool) { return "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", false }
	a, b := startRaw(t, reply), startRaw(t, reply)
	s := newSender(t, []Spec{{URL: a.url()}, {URL: b.url()}}, Options{})
	got := runLoop(t, newTestLoop(t, s), 1, 40)
	for k, r := range got {
		if r.Status != 200 {
			t.Fatalf("iter %d: status %d, err %v", k.iter, r.Status, r.Err)
		}
	}
	if n := a.conns.Load() + b.conns.Load(); n != 2 {
		t.Errorf("40 requests to 2 hosts opened %d connections, want 2", n)
	}
}

// Wake returns a Wait that would block, from another goroutine, and makes
// the next Wait return at once when no Wait is blocked; until bounds it.
func TestLoopWakeAndUntil(t *testing.T) {
	s := newSender(t, []Spec{{URL: silentServer(t), Timeout: time.Minute}}, Options{})
	lp := newTestLoop(t, s)
	lp.Start(1, 1)
	time.AfterFunc(20*time.Millisecond, lp.Wake)
	if ended := lp.Wait(time.Time{}, nil); len(ended) != 0 {
		t.Fatalf("woken Wait returned %d iterations, want 0", len(ended))
	}
	lp.Wake()
	if ended := lp.Wait(time.Time{}, nil); len(ended) != 0 {
		t.Fatalf("Wait after Wake returned %d iterations, want 0", len(ended))
	}
	until := time.Now().Add(30 * time.Millisecond)
	if ended := lp.Wait(until, nil); len(ended) != 0 || time.Now().Before(until) {
		t.Fatalf("Wait(until) returned %d iterations before until", len(ended))
	}
	lp.Cancel()
	if ended := lp.Wait(time.Time{}, nil); len(ended) != 1 {
		t.Fatalf("after Cancel: %d iterations ended, want 1", len(ended))
	}
}

// Cancel ends every iteration in flight as interrupted, in the loop and on
// goroutines (a request net/http sends), and the loop still sends after.
func TestLoopCancel(t *testing.T) {
	silent := silentServer(t)
	specs := []Spec{{URL: silent, Weight: 1}, {URL: strings.Replace(silent, "http://", "http://u:p@", 1), Weight: 1}}
	s := newSender(t, specs, Options{})
	lp := newTestLoop(t, s)
	const vus = 8
	for vu := range uint64(vus) {
		lp.Start(vu, 0)
	}
	time.Sleep(50 * time.Millisecond) // let them reach the server
	lp.Cancel()
	names := map[string]int{}
	var ended []load.Ended
	limit := time.Now().Add(10 * time.Second)
	for len(ended) < vus && time.Now().Before(limit) {
		ended = lp.Wait(limit, ended)
	}
	if len(ended) != vus {
		t.Fatalf("%d of %d iterations ended after Cancel", len(ended), vus)
	}
	for _, e := range ended {
		names[e.Name]++
		if !errors.Is(e.Err, ErrInterrupted) || e.ErrClass != ClassOther || e.Status != 0 {
			t.Errorf("vu %d (%s): class %q, err %v; want interrupted, class other", e.VU, e.Name, e.ErrClass, e.Err)
		}
	}
	if len(names) != 2 {
		t.Errorf("iterations by request %v; want both the loop's and net/http's", names)
	}
	srv := startRaw(t, func(*http.Request) (string, bool) { return "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", false })
	s2 := newSender(t, []Spec{{URL: srv.url()}}, Options{})
	lp2 := newTestLoop(t, s2)
	lp2.Cancel() // nothing in flight
	if got := runLoop(t, lp2, 2, 2); got[vuIter{1, 1}].Status != 200 {
		t.Errorf("after Cancel: %+v", got[vuIter{1, 1}])
	}
}

// Release closes the VU's kept connection: the server sees it close.
func TestLoopRelease(t *testing.T) {
	url, _, closed := scriptServer(t, func(_ int, _ *http.Request, conn net.Conn) bool {
		_, err := io.WriteString(conn, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
		return err == nil
	})
	// closedWithin reports whether the server has seen n connections end
	// within d.
	closedWithin := func(n int32, d time.Duration) bool {
		for end := time.Now().Add(d); closed.Load() < n && time.Now().Before(end); {
			time.Sleep(time.Millisecond)
		}
		return closed.Load() >= n
	}
	s := newSender(t, []Spec{{URL: url + "/"}}, Options{})
	lp := newTestLoop(t, s)
	runLoop(t, lp, 2, 2)
	if closedWithin(1, 20*time.Millisecond) {
		t.Fatal("a connection closed before Release")
	}
	lp.Release(1)
	if !closedWithin(1, 5*time.Second) {
		t.Fatal("the server saw no close after Release")
	}
	lp.Release(1) // again: nothing to close
	lp.Release(99)
	if closedWithin(2, 20*time.Millisecond) {
		t.Fatal("Release(1) closed VU 0's connection too")
	}
}

// Many requests at once, each with a deadline of its own: every one
// times out, none waits for another's.
func TestLoopDeadlines(t *testing.T) {
	silent := silentServer(t)
	var specs []Spec
	for i := range 5 {
		specs = append(specs, Spec{Name: fmt.Sprint(i), URL: silent, Timeout: time.Duration(20*(i+1)) * time.Millisecond})
	}
	s := newSender(t, specs, Options{})
	got := runLoop(t, newTestLoop(t, s), 30, 1)
	for k, r := range got {
		timeout := s.choose(k.vu, k.iter).timeout
		if r.ErrClass != ClassTimeout || r.Done.Sub(r.Sent) < timeout {
			t.Errorf("vu %d: class %q after %v, want a timeout after %v (%v)", k.vu, r.ErrClass, r.Done.Sub(r.Sent), timeout, r.Err)
		}
	}
}

// A response that trickles in is handed to a goroutine after a few reads
// and still read whole (or timed out as Do would).
func TestLoopSlowResponse(t *testing.T) {
	const resp = "HTTP/1.1 200 OK\r\nContent-Length: 20\r\n\r\n01234567890123456789"
	url, _, _ := scriptServer(t, func(_ int, _ *http.Request, conn net.Conn) bool {
		for i := range len(resp) {
			if _, err := conn.Write([]byte{resp[i]}); err != nil {
				return false
			}
			time.Sleep(time.Millisecond)
		}
		return true
	})
	s := newSender(t, []Spec{{URL: url + "/"}}, Options{})
	got := runLoop(t, newTestLoop(t, s), 3, 2)
	for k, r := range got {
		if r.Status != 200 || r.BytesIn != int64(len(resp)) {
			t.Errorf("vu %d iter %d: status %d, %d bytes in, err %v", k.vu, k.iter, r.Status, r.BytesIn, r.Err)
		}
	}
}

// Once its connection and buffers exist, a keep-alive request through the
// loop allocates nothing, counted over every goroutine of the process.
func TestLoopAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("skipped under -race")
	}
	url := fixedServer(t)
	for _, c := range allocCases(url) {
		t.Run(c.name, func(t *testing.T) {
			s := newSender(t, []Spec{c.spec}, Options{Vars: allocVars})
			lp := newTestLoop(t, s)
			var iter uint64
			ended := make([]load.Ended, 0, 1)
			do := func() {
				iter++
				lp.Start(1, iter)
				ended = lp.Wait(time.Time{}, ended[:0])
				if len(ended) != 1 || ended[0].Err != nil || ended[0].Status != 200 || ended[0].BytesIn != int64(len(fixedResponse)) {
					t.Fatalf("ended %+v", ended)
				}
			}
			do()
			if got := testing.AllocsPerRun(1000, do); got != 0 {
				t.Errorf("%.2f allocations per request, want 0", got)
			}
		})
	}
}

// No socket outlives its use: after requests that close, fail, time out,
// go to a goroutine and come back, and Close, the process holds the
// descriptors it held before.
func TestLoopLeaksNoDescriptors(t *testing.T) {
	if !loopPlatform {
		t.Skip("no event loop on this platform")
	}
	// What each descriptor is open on (a socket's inode is its own): the
	// count alone would let other tests' connections, closing meanwhile,
	// hide a leak, or look like one.
	fds := func() map[string]bool {
		ents, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Skip(err)
		}
		open := map[string]bool{}
		for _, e := range ents {
			if target, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil && !strings.HasPrefix(target, "/proc/") {
				open[e.Name()+" "+target] = true
			}
		}
		return open
	}
	opened := func(before, after map[string]bool) []string {
		var added []string
		for fd := range after {
			if !before[fd] {
				added = append(added, fd)
			}
		}
		return added
	}
	big := strings.Repeat("b", 200<<10)
	closing := startRaw(t, func(*http.Request) (string, bool) {
		return "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n", true
	})
	kept := startRaw(t, func(*http.Request) (string, bool) {
		return "HTTP/1.1 200 OK\r\nContent-Length: 204800\r\n\r\n" + big, false
	})
	silent := silentServer(t)
	refused := "http://" + closedPort(t) + "/"
	before := fds()
	s, err := NewSender([]Spec{{URL: closing.url()}, {URL: kept.url()}, {URL: silent, Timeout: 20 * time.Millisecond}, {URL: refused}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	lp, err := s.NewLoop()
	if err != nil {
		t.Fatal(err)
	}
	got := runLoop(t, lp, 10, 20)
	if len(got) != 200 {
		t.Fatalf("%d results", len(got))
	}
	lp.Close()
	s.Close()
	// The servers close their ends once they see the client's close.
	added := opened(before, fds())
	for limit := time.Now().Add(5 * time.Second); len(added) > 0 && time.Now().Before(limit); added = opened(before, fds()) {
		time.Sleep(10 * time.Millisecond)
	}
	if len(added) > 0 {
		t.Errorf("descriptors opened during the test and still open: %v", added)
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
