package request

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
)

// BenchmarkCallerKeepAlive measures a script's cost per request through
// Caller.Do and a VU's own Conns (what k6script's http.get does) against
// the loopback fixedServer, which allocates nothing: the ns and allocations
// are the Caller's. The body is kept, as a script may ask for it. Each
// parallel goroutine is a VU with its own Conns and keep-alive connection.
func BenchmarkCallerKeepAlive(b *testing.B) {
	url := fixedServer(b) + "/books/1?x=1"
	caller := NewCaller(TransportOptions{})
	defer caller.Close()
	var failed atomic.Value
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		conns := NewConns()
		defer conns.Close()
		h := http.Header{"User-Agent": {"knee-bench"}}
		for pb.Next() {
			rep := caller.Do(context.Background(), Call{Method: http.MethodGet, URL: url, Header: h}, nil, conns)
			if rep.Err != nil || rep.Status != 200 || len(rep.Body) != 39 {
				failed.CompareAndSwap(nil, rep)
				return
			}
		}
	})
	if rep, ok := failed.Load().(Reply); ok {
		b.Fatalf("status %d, %d body bytes, err %v", rep.Status, len(rep.Body), rep.Err)
	}
}
