package request

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// rawServer answers every request with canned bytes, so a test controls
// the response to the byte. After each response it closes the connection
// when closeAfter is set. It counts the connections it accepted, and the
// bytes of each request it read (the reference for a client's BytesOut).
type rawServer struct {
	ln       net.Listener
	conns    atomic.Int64
	reqBytes atomic.Int64 // of the last request read: line, headers, body
	wg       sync.WaitGroup
}

func startRaw(t *testing.T, reply func(req *http.Request) (resp string, closeAfter bool)) *rawServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &rawServer{ln: ln}
	s.wg.Go(func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			s.conns.Add(1)
			s.wg.Go(func() { serveRaw(conn, reply, &s.reqBytes) })
		}
	})
	t.Cleanup(func() { ln.Close(); s.wg.Wait() })
	return s
}

// tally counts the bytes read through it.
type tally struct {
	r io.Reader
	n int64
}

func (t *tally) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	t.n += int64(n)
	return n, err
}

func serveRaw(conn net.Conn, reply func(req *http.Request) (string, bool), reqBytes *atomic.Int64) {
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	in := &tally{r: conn}
	br := bufio.NewReader(in)
	for {
		from := in.n - int64(br.Buffered())
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		io.Copy(io.Discard, req.Body)
		reqBytes.Store(in.n - int64(br.Buffered()) - from)
		resp, closeAfter := reply(req)
		if _, err := io.WriteString(conn, resp); err != nil || closeAfter {
			return
		}
	}
}

func (s *rawServer) url() string { return "http://" + s.ln.Addr().String() + "/" }

// Two requests in a row per case, so each case also shows whether the
// connection was kept.
func TestDoReadsResponses(t *testing.T) { forEachClient(t, testDoReadsResponses) }

func testDoReadsResponses(t *testing.T, cl client) {
	big := strings.Repeat("x", 3<<20)
	tests := []struct {
		name       string
		method     string
		resp       string
		closeAfter bool
		status     int
		conns      int64 // opened for the two requests
	}{
		{"content-length", "GET", "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc", false, 200, 1},
		{"chunked with extension and trailer", "GET",
			"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6;x=1\r\n world\r\n0\r\nX-T: 1\r\n\r\n", false, 200, 1},
		{"chunked upper-case hex", "GET", "HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\nA\r\n0123456789\r\n0\r\n\r\n", false, 201, 1},
		{"connection close", "GET", "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok", true, 200, 2},
		{"HEAD has no body", "HEAD", "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n", false, 200, 1},
		{"204 has no body", "GET", "HTTP/1.1 204 No Content\r\n\r\n", false, 204, 1},
		{"304 has no body", "GET", "HTTP/1.1 304 Not Modified\r\nContent-Length: 50\r\n\r\n", false, 304, 1},
		{"100 continue first", "GET", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nz", false, 200, 1},
		{"HTTP/1.0 body to EOF", "GET", "HTTP/1.0 200 OK\r\n\r\nabcd", true, 200, 2},
		{"HTTP/1.0 keep-alive", "GET", "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 1\r\n\r\nz", false, 200, 1},
		{"large body", "GET", "HTTP/1.1 200 OK\r\nContent-Length: 3145728\r\n\r\n" + big, false, 200, 1},
		{"large chunk", "GET", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n300000\r\n" + big + "\r\n0\r\n\r\n", false, 200, 1},
		{"no reason phrase, LF only", "GET", "HTTP/1.1 503\nContent-Length: 0\n\n", false, 503, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := startRaw(t, func(*http.Request) (string, bool) { return tt.resp, tt.closeAfter })
			s := cl.sender(t, []Spec{{Method: tt.method, URL: srv.url()}}, Options{})
			for i := range 2 {
				res := s.Do(context.Background(), 1, uint64(i))
				// Bytes on the wire: the response as the server wrote
				// it, the request as the server read it.
				if want := int64(len(tt.resp)); res.Err != nil || res.Status != tt.status || res.BytesIn != want {
					t.Fatalf("request %d: status %d, %d bytes in, err %v; want %d, %d bytes", i, res.Status, res.BytesIn, res.Err, tt.status, want)
				}
				if want := srv.reqBytes.Load(); res.BytesOut != want || want == 0 {
					t.Fatalf("request %d: %d bytes out, the server read %d", i, res.BytesOut, want)
				}
			}
			if n := srv.conns.Load(); n != tt.conns {
				t.Errorf("two requests opened %d connections, want %d", n, tt.conns)
			}
		})
	}
}

// Responses that fail, and the class each failure gets.
func TestDoClassifiesBadResponses(t *testing.T) { forEachClient(t, testDoClassifiesBadResponses) }

func testDoClassifiesBadResponses(t *testing.T, cl client) {
	tests := []struct {
		name  string
		resp  string
		class string
	}{
		{"truncated body", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", ClassReset},
		{"truncated chunk", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab", ClassReset},
		{"truncated headers", "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n", ClassReset},
		{"closed before the response", "", ClassReset},
		{"not HTTP", "SSH-2.0-OpenSSH_9.6\r\n\r\n", ClassOther},
		{"bad content length", "HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n", ClassOther},
		{"bad chunk size", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", ClassOther},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := startRaw(t, func(*http.Request) (string, bool) { return tt.resp, true })
			s := cl.sender(t, []Spec{{URL: srv.url()}}, Options{})
			res := s.Do(context.Background(), 1, 1)
			if res.Err == nil || res.ErrClass != tt.class || res.Status != 0 {
				t.Errorf("class %q, status %d, err %v; want class %q", res.ErrClass, res.Status, res.Err, tt.class)
			}
			if want := int64(len(tt.resp)); res.BytesIn != want {
				t.Errorf("%d bytes in, want %d: all the server wrote", res.BytesIn, want)
			}
		})
	}
}

// A server that closes idle keep-alive connections: a GET goes out again
// on a new connection when its reused one turns out closed; a POST, which
// may not be sent twice, never goes into a connection closed while idle.
func TestDoSurvivesServerClosingIdleConnections(t *testing.T) {
	forEachClient(t, testDoSurvivesServerClosingIdleConnections)
}

func testDoSurvivesServerClosingIdleConnections(t *testing.T, cl client) {
	for _, method := range []string{"GET", "POST"} {
		t.Run(method, func(t *testing.T) {
			// Keep-alive promised, then the connection closed after each response.
			srv := startRaw(t, func(*http.Request) (string, bool) { return "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", true })
			s := cl.sender(t, []Spec{{Method: method, URL: srv.url(), Body: "b"}}, Options{})
			for i := range 5 {
				if i > 0 {
					time.Sleep(20 * time.Millisecond) // let the server's FIN arrive
				}
				if res := s.Do(context.Background(), 1, uint64(i)); res.Err != nil || res.Status != 200 {
					t.Fatalf("request %d: status %d, err %v", i, res.Status, res.Err)
				}
			}
			if n := srv.conns.Load(); n != 5 {
				t.Errorf("5 requests opened %d connections, want 5", n)
			}
		})
	}
}

// A server that stalls after the headers: the request times out.
func TestDoTimesOutInBody(t *testing.T) { forEachClient(t, testDoTimesOutInBody) }

func testDoTimesOutInBody(t *testing.T, cl client) {
	srv := startRaw(t, func(*http.Request) (string, bool) {
		return "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", false
	})
	s := cl.sender(t, []Spec{{URL: srv.url(), Timeout: 50 * time.Millisecond}}, Options{})
	res := s.Do(context.Background(), 1, 1)
	if res.ErrClass != ClassTimeout || res.Status != 0 {
		t.Errorf("class %q, status %d, err %v; want timeout", res.ErrClass, res.Status, res.Err)
	}
}

// Many goroutines on one VU number, and several hosts for one VU: every
// request succeeds, and the lean client opens no more connections than
// could be busy at once.
func TestDoSharesConnectionsSafely(t *testing.T) { forEachClient(t, testDoSharesConnectionsSafely) }

func testDoSharesConnectionsSafely(t *testing.T, cl client) {
	reply := func(r *http.Request) (string, bool) {
		return fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", len(r.URL.Path), r.URL.Path), false
	}
	a, b := startRaw(t, reply), startRaw(t, reply)
	s := cl.sender(t, []Spec{{URL: a.url() + "a/{iter}"}, {URL: b.url() + "b"}}, Options{})
	const workers, each = 4, 50
	var wg sync.WaitGroup
	var failed atomic.Int64
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				res := s.Do(context.Background(), 7, uint64(w*each+i))
				path := "/b"
				if strings.HasPrefix(res.Name, a.url()) {
					path = fmt.Sprintf("/a/%d", w*each+i)
				}
				resp, _ := reply(&http.Request{URL: &url.URL{Path: path}})
				want := int64(len(resp))
				if res.Err != nil || res.Status != 200 || res.BytesIn != want {
					if failed.Add(1) == 1 {
						t.Logf("first failure: err %v, status %d, %d bytes in, want %d", res.Err, res.Status, res.BytesIn, want)
					}
				}
			}
		})
	}
	wg.Wait()
	if n := failed.Load(); n != 0 {
		t.Errorf("%d of %d requests failed", n, workers*each)
	}
	// net/http may dial a spare connection while a busy one frees up.
	if n := a.conns.Load() + b.conns.Load(); !cl.netHTTP && n > 2*workers {
		t.Errorf("%d connections for %d concurrent workers on 2 hosts, want at most %d", n, workers, 2*workers)
	}
}

// Close closes idle connections; the Sender still sends afterwards.
func TestDoAfterClose(t *testing.T) { forEachClient(t, testDoAfterClose) }

func testDoAfterClose(t *testing.T, cl client) {
	srv := startRaw(t, func(*http.Request) (string, bool) { return "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", false })
	s := cl.sender(t, []Spec{{URL: srv.url()}}, Options{})
	for i := range 2 {
		if res := s.Do(context.Background(), 1, uint64(i)); res.Status != 200 {
			t.Fatalf("request %d: %v", i, res.Err)
		}
		s.Close()
	}
	if n := srv.conns.Load(); n != 2 {
		t.Errorf("2 requests with Close after each opened %d connections, want 2", n)
	}
}
