package request

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// scriptServer is a loopback HTTP/1.1 server whose answer to each request
// is written by answer (given the connection's number, from 1, and the
// request); answer returns false to close the connection after it. It
// reports how many connections it accepted and how many it saw end (the
// client closed them, or answer did).
func scriptServer(t *testing.T, answer func(n int, req *http.Request, conn net.Conn) bool) (url string, accepts, ended *atomic.Int32) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepts, ended = new(atomic.Int32), new(atomic.Int32)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	wg.Go(func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			n := int(accepts.Add(1))
			mu.Lock()
			conns = append(conns, conn)
			mu.Unlock()
			wg.Go(func() {
				defer ended.Add(1)
				defer conn.Close()
				br := bufio.NewReader(conn)
				for {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					if _, err := io.Copy(io.Discard, req.Body); err != nil || !answer(n, req, conn) {
						return
					}
				}
			})
		}
	})
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return "http://" + ln.Addr().String(), accepts, ended
}

// TestCallerBehaviour sends the same Calls through a VU's own connections
// and through the shared net/http transport: both must give the same
// statuses, bodies, error classes and connections.
func TestCallerBehaviour(t *testing.T) {
	write := func(conn net.Conn, s string) bool {
		_, err := io.WriteString(conn, s)
		return err == nil
	}
	type want struct {
		status   int
		body     string // "-" for a nil body
		bytesIn  int64  // on the wire: status line, headers, body as framed
		bytesOut int64  // on the wire, less the Host header's host:port and net/http's User-Agent; 0: not checked
		class    string
		urlPath  string
		interrup bool  // errors.Is ErrInterrupted
		sends    int64 // times the request went out whole; 0: once
	}
	tests := []struct {
		name    string
		answer  func(n int, req *http.Request, conn net.Conn) bool
		calls   []Call // URL is a path on the server
		cancel  time.Duration
		want    []want
		accepts int32
	}{
		{
			name: "keep-alive, body kept",
			answer: func(_ int, _ *http.Request, conn net.Conn) bool {
				return write(conn, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello")
			},
			calls: []Call{{URL: "/a?x=1"}, {URL: "/a?x=1"}, {URL: "/b", Discard: true}},
			// In: status line 17, Content-Length 19, blank line 2, body 5.
			// Out: "GET /a?x=1 HTTP/1.1\r\n" 21, "Host: " and CRLF 8,
			// blank line 2; net/http adds "User-Agent: Go-http-client/1.1\r\n" (32).
			want: []want{{status: 200, body: "hello", bytesIn: 17 + 19 + 2 + 5, bytesOut: 21 + 8 + 2, urlPath: "/a"},
				{status: 200, body: "hello", bytesIn: 43, urlPath: "/a"}, {status: 200, body: "-", bytesIn: 43, bytesOut: 17 + 8 + 2, urlPath: "/b"}},
			accepts: 1,
		},
		{
			name: "chunked body",
			answer: func(_ int, _ *http.Request, conn net.Conn) bool {
				return write(conn, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n")
			},
			calls:   []Call{{URL: "/"}, {URL: "/"}},
			want:    []want{{status: 200, body: "hello world", bytesIn: 17 + 28 + 2 + 10 + 11 + 5, urlPath: "/"}, {status: 200, body: "hello world", bytesIn: 73, urlPath: "/"}},
			accepts: 1,
		},
		{
			name: "HEAD: a length and no body",
			answer: func(_ int, _ *http.Request, conn net.Conn) bool {
				return write(conn, "HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n")
			},
			calls:   []Call{{Method: http.MethodHead, URL: "/"}, {Method: http.MethodHead, URL: "/"}},
			want:    []want{{status: 200, bytesIn: 17 + 24 + 2, urlPath: "/"}, {status: 200, bytesIn: 43, urlPath: "/"}},
			accepts: 1,
		},
		{
			name: "a long body",
			answer: func(_ int, _ *http.Request, conn net.Conn) bool {
				return write(conn, fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", 3<<20, make([]byte, 3<<20)))
			},
			calls:   []Call{{URL: "/"}},
			want:    []want{{status: 200, body: string(make([]byte, 3<<20)), bytesIn: 17 + 25 + 2 + 3<<20, urlPath: "/"}},
			accepts: 1,
		},
		{
			name: "a long request body",
			answer: func(_ int, req *http.Request, conn net.Conn) bool {
				return write(conn, fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%d", len(fmt.Sprint(req.ContentLength)), req.ContentLength))
			},
			calls:   []Call{{Method: http.MethodPost, URL: "/", Body: make([]byte, 8<<20)}, {Method: http.MethodPost, URL: "/", Body: []byte("x")}},
			want:    []want{{status: 200, body: fmt.Sprint(8 << 20), bytesIn: 17 + 19 + 2 + 7, urlPath: "/"}, {status: 200, body: "1", bytesIn: 17 + 19 + 2 + 1, urlPath: "/"}},
			accepts: 1,
		},
		{
			name: "the server closes the idle connection: sent again on a new one",
			answer: func(_ int, _ *http.Request, conn net.Conn) bool {
				write(conn, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
				return false
			},
			calls:   []Call{{URL: "/"}, {URL: "/"}},
			want:    []want{{status: 200, body: "ok", bytesIn: 17 + 19 + 2 + 2, urlPath: "/"}, {status: 200, body: "ok", bytesIn: 40, urlPath: "/"}},
			accepts: 2,
		},
		{
			// net/http and Conns send a request again when a kept
			// connection fails before a byte of the answer: what
			// went out on the dead one counts too, as in k6's
			// data_sent, which counts at the connection.
			name: "a kept connection dies under the next request: sent again on a new one",
			answer: func() func(int, *http.Request, net.Conn) bool {
				var served sync.Map // conn → a request answered
				return func(_ int, _ *http.Request, conn net.Conn) bool {
					if _, again := served.LoadOrStore(conn, true); again {
						return false
					}
					return write(conn, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
				}
			}(),
			calls:   []Call{{URL: "/"}, {URL: "/"}},
			want:    []want{{status: 200, body: "ok", bytesIn: 40, bytesOut: 16 + 8 + 2, urlPath: "/"}, {status: 200, body: "ok", bytesIn: 40, bytesOut: 16 + 8 + 2, sends: 2, urlPath: "/"}},
			accepts: 2,
		},
		{
			name: "redirect",
			answer: func(_ int, req *http.Request, conn net.Conn) bool {
				if req.URL.Path == "/from" {
					return write(conn, "HTTP/1.1 302 Found\r\nLocation: /to\r\nContent-Length: 0\r\n\r\n")
				}
				return write(conn, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nto")
			},
			calls: []Call{{URL: "/from", MaxRedirects: 1}, {URL: "/from"}},
			// The 302 (20 + 15 + 19 + 2) counts with the 200 it led to (40).
			want:    []want{{status: 200, body: "to", bytesIn: 56 + 40, urlPath: "/to"}, {status: 302, body: "", bytesIn: 56, urlPath: "/from"}},
			accepts: 1,
		},
		{
			name: "body cut short",
			answer: func(_ int, _ *http.Request, conn net.Conn) bool {
				write(conn, "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhello")
				return false
			},
			calls:   []Call{{URL: "/"}},
			want:    []want{{status: 200, body: "hello", bytesIn: 5, class: ClassReset, urlPath: "/"}},
			accepts: 1,
		},
		{
			name: "reset before the response",
			answer: func(_ int, _ *http.Request, conn net.Conn) bool {
				conn.(*net.TCPConn).SetLinger(0) //nolint:errcheck // the test checks the client's error
				return false
			},
			calls:   []Call{{URL: "/"}},
			want:    []want{{class: ClassReset, urlPath: "/"}},
			accepts: 1,
		},
		{
			name:    "timeout",
			answer:  func(int, *http.Request, net.Conn) bool { time.Sleep(300 * time.Millisecond); return false },
			calls:   []Call{{URL: "/", Timeout: 50 * time.Millisecond}},
			want:    []want{{class: ClassTimeout, urlPath: "/"}},
			accepts: 1,
		},
		{
			name:    "cancelled",
			answer:  func(int, *http.Request, net.Conn) bool { time.Sleep(300 * time.Millisecond); return false },
			calls:   []Call{{URL: "/"}},
			cancel:  50 * time.Millisecond,
			want:    []want{{class: ClassOther, interrup: true, urlPath: "/"}},
			accepts: 1,
		},
	}
	for _, tt := range tests {
		for _, via := range []string{"conns", "net/http"} {
			t.Run(tt.name+"/"+via, func(t *testing.T) {
				base, accepts, _ := scriptServer(t, tt.answer)
				caller := NewCaller(TransportOptions{})
				defer caller.Close()
				var conns *Conns
				if via == "conns" {
					conns = NewConns()
					defer conns.Close()
				}
				ctx := context.Background()
				if tt.cancel > 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithCancel(ctx)
					time.AfterFunc(tt.cancel, cancel)
					defer cancel()
				}
				for i, call := range tt.calls {
					call.URL = base + call.URL
					rep := caller.Do(ctx, call, nil, conns)
					w := tt.want[i]
					body := string(rep.Body)
					if rep.Body == nil {
						body = "-"
					}
					u, err := url.Parse(rep.URL)
					if err != nil || u.Path != w.urlPath {
						t.Errorf("call %d: URL %q, want the path %s", i, rep.URL, w.urlPath)
					}
					if rep.Status != w.status || rep.ErrClass != w.class || errors.Is(rep.Err, ErrInterrupted) != w.interrup {
						t.Errorf("call %d: status %d class %q err %v; want %d %q (interrupted %v)", i, rep.Status, rep.ErrClass, rep.Err, w.status, w.class, w.interrup)
					}
					if w.class == "" && (body != w.body || rep.BytesIn != w.bytesIn) {
						t.Errorf("call %d: %d bytes in, body %.20q (%d bytes); want %d, %.20q", i, rep.BytesIn, body, len(body), w.bytesIn, w.body)
					}
					want := w.bytesOut + int64(len(u.Host))
					if via == "net/http" {
						want += 32
					}
					if w.sends > 0 {
						want *= w.sends
					}
					if w.bytesOut != 0 && rep.BytesOut != want {
						t.Errorf("call %d: %d bytes out, want %d", i, rep.BytesOut, want)
					}
				}
				if got := accepts.Load(); got != tt.accepts {
					t.Errorf("%d connections, want %d", got, tt.accepts)
				}
			})
		}
	}
}

// TestCallerAuthority: the authority a VU connection is keyed and dialled
// by is net.JoinHostPort of the URL's host and port (80 by default).
func TestCallerAuthority(t *testing.T) {
	for _, raw := range []string{"http://h/", "http://h:8080/", "http://h:/", "http://127.0.0.1:80/x", "http://[::1]:8080/", "http://[::1]/", "http://[fe80::1%25eth0]:81/", "http://a:b:80/"} {
		u, err := url.Parse(raw)
		if err != nil {
			continue // not a URL Do would send
		}
		port := u.Port()
		if port == "" {
			port = "80"
		}
		if got, ok := leanAuthority(u); !ok || got != net.JoinHostPort(u.Hostname(), port) {
			t.Errorf("%s: authority %q, %v; want %q", raw, got, ok, net.JoinHostPort(u.Hostname(), port))
		}
	}
}

// TestConnsParseReuses: the same URL string is parsed once, and what is
// kept of it is what url.Parse gives.
func TestConnsParseReuses(t *testing.T) {
	cs := NewConns()
	for _, raw := range []string{"http://h/a?b=1", "http://h/a?b=1", "HTTP://h/%7Ex?", "http://h/c", "http://h/a?b=1", "http://x/%zz"} {
		want, wantErr := url.Parse(raw)
		got, err := cs.parse(raw)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("%s: err %v, want %v", raw, err, wantErr)
		}
		if err != nil {
			continue
		}
		if *got != *want || cs.urlString(got) != want.String() || cs.requestURI(got) != want.RequestURI() {
			t.Errorf("%s: %+v %q %q; want %+v %q %q", raw, *got, cs.urlString(got), cs.requestURI(got), *want, want.String(), want.RequestURI())
		}
	}
	a, _ := cs.parse("http://h/same")
	if b, _ := cs.parse("http://h/same"); a != b {
		t.Error("the same URL was parsed twice")
	}
}
