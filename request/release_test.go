package request

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// connCounter is a loopback server that counts the connections open on it.
type connCounter struct {
	srv  *httptest.Server
	mu   sync.Mutex
	open int
}

func startConnCounter(t *testing.T) *connCounter {
	t.Helper()
	cc := &connCounter{}
	cc.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("ok"))
	}))
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
	cc := startConnCounter(t)
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
