package request

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/knee-dev/knee/load"
)

// connCounter is a loopback server that counts the connections open on it.
type connCounter struct {
	srv  *httptest.Server
	mu   sync.Mutex
	open int
}

// startConnCounter serves h, or "ok" when h is nil.
func startConnCounter(t *testing.T, h http.Handler) *connCounter {
	t.Helper()
	if h == nil {
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) })
	}
	cc := &connCounter{}
	cc.srv = httptest.NewUnstartedServer(h)
	cc.srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		cc.mu.Lock()
		defer cc.mu.Unlock()
		switch st {
		case http.StateNew:
			cc.open++
		case http.StateClosed, http.StateHijacked:
			cc.open--
		}
	}
	cc.srv.Start()
	t.Cleanup(cc.srv.Close)
	return cc
}

// waitOpen waits up to 5 s for the server to count want open connections;
// the server notices a client's close only when its read returns.
func (cc *connCounter) waitOpen(t *testing.T, want int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		cc.mu.Lock()
		n := cc.open
		cc.mu.Unlock()
		if n == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d connections open on the server, want %d", n, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestReleaseVUClosesItsConnection(t *testing.T) {
	cc := startConnCounter(t, nil)
	s := newSender(t, []Spec{{URL: cc.srv.URL}}, Options{})
	for vu := uint64(1); vu <= 5; vu++ {
		if res := s.Do(context.Background(), vu, 0); res.Err != nil || res.Status != 200 {
			t.Fatalf("vu %d: %d %v", vu, res.Status, res.Err)
		}
	}
	cc.waitOpen(t, 5) // one kept-alive connection per VU
	s.ReleaseVU(2)
	s.ReleaseVU(4)
	s.ReleaseVU(4)    // again: nothing left to close
	s.ReleaseVU(1000) // a VU that never sent: no slot, nothing to do
	cc.waitOpen(t, 3)
	// A released VU sends again on a new connection of its own.
	if res := s.Do(context.Background(), 2, 1); res.Err != nil || res.Status != 200 {
		t.Fatalf("vu 2 after release: %d %v", res.Status, res.Err)
	}
	cc.waitOpen(t, 4)
	if res := s.Do(context.Background(), 2, 2); res.Err != nil {
		t.Fatal(res.Err)
	}
	cc.waitOpen(t, 4) // and keeps it
	s.Close()
	cc.waitOpen(t, 0)
}

// The load generator's retirement of idle VUs reaches the connections: a
// stall of the target grows the pool (one connection per VU), and once the
// stall is over the VUs beyond the pre-allocated ones retire and the
// server sees their connections close, while the run goes on.
func TestRetiredVUsCloseTheirConnections(t *testing.T) {
	stalled := make(chan struct{})
	var stall sync.Once
	cc := startConnCounter(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-stalled
		w.Write([]byte("ok"))
	}))
	s := newSender(t, []Spec{{URL: cc.srv.URL}}, Options{})
	// 200/s for 3 s; the target answers nothing for the first 300 ms, so ~60
	// starts wait and as many VUs and connections open. VUs idle for 300 ms retire.
	exec := load.ConstantArrivalRate{Rate: 200, Duration: 3 * time.Second, PreAllocatedVUs: 2, MaxVUs: 500}
	time.AfterFunc(300*time.Millisecond, func() { stall.Do(func() { close(stalled) }) })
	defer stall.Do(func() { close(stalled) })
	rec := &countingSink{}
	done := make(chan error, 1)
	go func() {
		done <- load.Generate(context.Background(), []load.Scenario{{Name: "s", Executor: exec, Iteration: s}}, rec,
			load.Options{RetireIdle: 300 * time.Millisecond})
	}()
	peak, low := 0, 0
	for end := time.Now().Add(2900 * time.Millisecond); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		n := cc.openNow()
		peak = max(peak, n)
		if peak >= 40 && (low == 0 || n < low) {
			low = n
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if peak < 40 || low > 4 {
		t.Errorf("open connections peaked at %d and then fell to %d; want at least 40, then at most 4 (2 pre-allocated VUs and a little noise)", peak, low)
	}
	if n := rec.n.Load(); n != 600 || rec.dropped.Load() != 0 {
		t.Errorf("%d requests, %d dropped; want 600 and 0", n, rec.dropped.Load())
	}
}

func (cc *connCounter) openNow() int {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	return cc.open
}

// countingSink counts samples and drops.
type countingSink struct{ n, dropped atomic.Int64 }

func (c *countingSink) Shard() load.ShardSink     { return c }
func (c *countingSink) Record(load.Sample)        { c.n.Add(1) }
func (c *countingSink) Dropped(_ string, n int64) { c.dropped.Add(n) }
