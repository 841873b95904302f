package request

import (
	"context"
	"net"
	"sync"
	"testing"
)

// fixedResponse is what fixedServer answers to every request.
const fixedResponse = "HTTP/1.1 200 OK\r\nContent-Length: 39\r\n\r\n" + `{"isbn":"9780441172719","title":"Dune"}`

// fixedServer is a loopback HTTP/1.1 server that allocates nothing per
// request, so that testing.AllocsPerRun and the benchmarks, which count
// every goroutine's allocations, count the client's alone. It answers
// fixedResponse to each request head (each CRLFCRLF; the bodies sent here
// hold none) on a keep-alive connection, reading into one buffer per
// connection.
func fixedServer(tb testing.TB) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	wg.Go(func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, conn)
			mu.Unlock()
			wg.Go(func() { serveFixed(conn) })
		}
	})
	tb.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return "http://" + ln.Addr().String()
}

func serveFixed(conn net.Conn) {
	defer conn.Close()
	resp := []byte(fixedResponse)
	buf := make([]byte, 16<<10)
	matched := 0 // bytes of "\r\n\r\n" seen so far
	for {
		n, err := conn.Read(buf)
		if err != nil {
			return
		}
		heads := 0
		for _, ch := range buf[:n] {
			switch {
			case ch == "\r\n\r\n"[matched]:
				matched++
			case ch == '\r':
				matched = 1
			default:
				matched = 0
			}
			if matched == 4 {
				heads, matched = heads+1, 0
			}
		}
		for range heads {
			if _, err := conn.Write(resp); err != nil {
				return
			}
		}
	}
}

// allocCases are the requests of TestDoAllocatesNothing and BenchmarkDo:
// the article's, static and rendered from templates.
func allocCases(url string) []struct {
	name string
	spec Spec
} {
	return []struct {
		name string
		spec Spec
	}{
		{"static GET", Spec{URL: url + "/api/books/9780441172719"}},
		{"templated GET", Spec{URL: url + "/api/books/{isbn}?run={vu}-{iter}", Headers: []Header{{"Accept", "application/json"}}}},
		{"templated POST", Spec{Method: "POST", URL: url + "/api/books", Headers: []Header{{"X-Isbn", "{isbn}"}}, Body: `{"isbn":"{isbn}"}`}},
		{"templated Host", Spec{URL: url + "/", Headers: []Header{{"Host", "{isbn}.example"}}}},
	}
}

var allocVars = map[string][]string{"isbn": {"9780441172719", "9780261102217", "9780141439587"}}

// The lean client allocates nothing per request once its connection and
// buffers exist: counted over every goroutine of the process, against a
// server that allocates nothing itself.
func TestDoAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("skipped under -race: its sync.Pool drops items at random, so every run allocates")
	}
	url := fixedServer(t)
	for _, c := range allocCases(url) {
		t.Run(c.name, func(t *testing.T) {
			s := newSender(t, []Spec{c.spec}, Options{Vars: allocVars})
			if s.reqs[0].plan == nil {
				t.Fatal("the lean client does not take this request")
			}
			ctx := context.Background()
			var iter uint64
			do := func() {
				iter++
				if res := s.Do(ctx, 1, iter); res.Err != nil || res.Status != 200 || res.BytesIn != int64(len(fixedResponse)) {
					t.Fatalf("status %d, %d bytes in, err %v", res.Status, res.BytesIn, res.Err)
				}
			}
			do() // dial and fill the pools
			if got := testing.AllocsPerRun(1000, do); got != 0 {
				t.Errorf("%.2f allocations per request, want 0", got)
			}
		})
	}
}
