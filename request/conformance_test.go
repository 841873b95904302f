package request

import (
	"bufio"
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// earlyServer answers every request with resp as soon as it has read the
// request's head, and closes the connection without reading the body, as
// a server refusing an upload (413) or its credentials (401) does.
func earlyServer(t *testing.T, resp string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			conn.SetDeadline(time.Now().Add(5 * time.Second))
			if _, err := http.ReadRequest(bufio.NewReader(conn)); err == nil {
				conn.Write([]byte(resp))
			}
			conn.Close() // unread body: the kernel resets the connection
		}
	}()
	t.Cleanup(func() { ln.Close(); <-done })
	return "http://" + ln.Addr().String() + "/upload"
}

// A server that answers 413 (or 401) early and closes during an 8 MiB
// upload: the lean client reads the response while it writes, and returns
// the server's answer, not the write's "reset". (net/http reads while it
// writes too, but returns whichever comes first, the response or the write
// error: on loopback here the reset, 10 times in 10, so it is not held to
// this.)
func TestLeanReadsEarlyResponseDuringUpload(t *testing.T) {
	cl := client{"lean", false, false}
	for _, status := range []string{"413 Content Too Large", "401 Unauthorized"} {
		resp := "HTTP/1.1 " + status + "\r\nConnection: close\r\nContent-Length: 4\r\n\r\nnope"
		url := earlyServer(t, resp)
		s := cl.sender(t, []Spec{{Method: "POST", URL: url, Body: strings.Repeat("u", 8<<20)}}, Options{})
		for i := range 5 {
			res := s.Do(context.Background(), 1, uint64(i))
			if res.Err != nil || res.Status != atoiPrefix(status) || res.BytesIn != int64(len(resp)) {
				t.Fatalf("%s, request %d: status %d, %d bytes in, err %v (%s)", status, i, res.Status, res.BytesIn, res.Err, res.ErrClass)
			}
		}
	}
}

func atoiPrefix(s string) int { return int(s[0]-'0')*100 + int(s[1]-'0')*10 + int(s[2]-'0') }

// "Content-Length : 3" (a space before the colon) is no Content-Length to
// net/http: on a keep-alive server both clients read the body until the
// connection closes, here until the request's timeout.
func TestDoSpaceBeforeColon(t *testing.T) { forEachClient(t, testDoSpaceBeforeColon) }

func testDoSpaceBeforeColon(t *testing.T, cl client) {
	const resp = "HTTP/1.1 200 OK\r\nContent-Length : 3\r\n\r\nabc"
	srv := startRaw(t, func(*http.Request) (string, bool) { return resp, false })
	s := cl.sender(t, []Spec{{URL: srv.url(), Timeout: 300 * time.Millisecond}}, Options{})
	res := s.Do(context.Background(), 1, 1)
	if res.ErrClass != ClassTimeout || res.BytesIn != int64(len(resp)) {
		t.Fatalf("class %q, %d bytes in, err %v; want a timeout after all %d bytes", res.ErrClass, res.BytesIn, res.Err, len(resp))
	}
}

// Heads up to net/http Transport's 10 MiB limit are read; longer ones fail
// in both clients.
func TestDoHeaderLimit(t *testing.T) { forEachClient(t, testDoHeaderLimit) }

func testDoHeaderLimit(t *testing.T, cl client) {
	for _, tt := range []struct {
		size int
		ok   bool
	}{{9 << 20, true}, {11 << 20, false}} {
		resp := "HTTP/1.1 200 OK\r\nX-Big: " + strings.Repeat("b", tt.size) + "\r\nContent-Length: 2\r\n\r\nok"
		srv := startRaw(t, func(*http.Request) (string, bool) { return resp, false })
		s := cl.sender(t, []Spec{{URL: srv.url()}}, Options{})
		res := s.Do(context.Background(), 1, 1)
		if ok := res.Err == nil && res.Status == 200 && res.BytesIn == int64(len(resp)); ok != tt.ok {
			t.Errorf("header of %d bytes: status %d, err %v; want success %v", tt.size, res.Status, res.Err, tt.ok)
		}
	}
}

// A Host header goes out as net/http sends it: a non-ASCII name in
// punycode. An invalid one is refused by both clients (net/http alone
// would send an empty Host): at NewSender when static, per request when
// rendered.
func TestDoHostHeader(t *testing.T) { forEachClient(t, testDoHostHeader) }

func testDoHostHeader(t *testing.T, cl client) {
	srv, seenc := recordingServer(t, "ok")
	vars := map[string][]string{"h": {"bücher.example:8080"}, "bad": {"a b"}}
	s := cl.sender(t, []Spec{{URL: srv.URL + "/", Headers: []Header{{"Host", "{h}"}}}}, Options{Vars: vars})
	if res := s.Do(context.Background(), 1, 1); res.Err != nil || res.Status != 200 {
		t.Fatalf("status %d, err %v", res.Status, res.Err)
	}
	if got := (<-seenc).header.Get("Host"); got != "xn--bcher-kva.example:8080" {
		t.Errorf("server saw Host %q, want xn--bcher-kva.example:8080", got)
	}
	s = cl.sender(t, []Spec{{URL: srv.URL + "/", Headers: []Header{{"Host", "{bad}"}}}}, Options{Vars: vars})
	if res := s.Do(context.Background(), 1, 1); res.Err == nil || !strings.Contains(res.Err.Error(), "Host header") {
		t.Errorf("rendered Host %q: err %v, want it refused", "a b", res.Err)
	}
	_, err := NewSender([]Spec{{URL: srv.URL + "/", Headers: []Header{{"Host", "a/b"}}}}, Options{NetHTTPOnly: cl.netHTTP})
	var fe *FieldError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "Host header") {
		t.Errorf("static Host %q: NewSender error %v, want a *FieldError", "a/b", err)
	}
	select {
	case got := <-seenc:
		t.Errorf("a refused Host reached the server: %+v", got)
	default:
	}
}

// --client net/http rules the lean client out; auto (the default) leaves
// plain http:// to it; anything else is refused with the choices.
func TestClientChoice(t *testing.T) {
	var c Client
	if c.String() != "auto" {
		t.Errorf("zero Client shows %q, want auto", c.String())
	}
	for _, tt := range []struct {
		flag string
		want Client
		lean bool
	}{{"auto", ClientAuto, true}, {"net/http", ClientNetHTTP, false}} {
		if err := c.Set(tt.flag); err != nil || c != tt.want || c.String() != tt.flag {
			t.Fatalf("Set(%q): %q, %v", tt.flag, c, err)
		}
		s := newSender(t, []Spec{{URL: "http://127.0.0.1:1/"}}, Options{Transport: TransportOptions{Client: c}})
		if lean := s.reqs[0].plan != nil; lean != tt.lean {
			t.Errorf("--client %s: lean client %v, want %v", tt.flag, lean, tt.lean)
		}
	}
	if err := c.Set("lean"); err == nil || !strings.Contains(err.Error(), "net/http") {
		t.Errorf("Set(lean): %v, want an error naming the choices", err)
	}
}
