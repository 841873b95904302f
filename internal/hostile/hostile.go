// Package hostile serves targets that misbehave on purpose — never answer,
// trickle, flood, break HTTP framing, reset, stall TLS, redirect forever —
// so tests can check that knee's runs end on time, stay bounded in memory
// and count each failure in its error class.
//
// Every server is a raw TCP listener on loopback, so it can break HTTP in
// ways net/http never would. Close stops it and every connection it holds.
package hostile

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Behavior is what the server does with one accepted connection. It returns
// when the connection is done or stop is closed.
type Behavior func(c net.Conn, stop <-chan struct{})

// Server is one hostile server.
type Server struct {
	ln    net.Listener
	stop  chan struct{}
	wg    sync.WaitGroup
	mu    sync.Mutex
	conns map[net.Conn]bool
}

// Start serves b on a loopback port.
func Start(b Behavior) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Server{ln: ln, stop: make(chan struct{}), conns: map[net.Conn]bool{}}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.conns[c] = true
			s.mu.Unlock()
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				b(c, s.stop)
				s.mu.Lock()
				delete(s.conns, c)
				s.mu.Unlock()
				c.Close()
			}()
		}
	}()
	return s, nil
}

// Addr is host:port.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Close stops accepting, closes every connection and waits for the handlers.
func (s *Server) Close() {
	close(s.stop)
	s.ln.Close()
	s.mu.Lock()
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// readRequest reads one request's head (and a Content-Length body).
func readRequest(br *bufio.Reader) error {
	req, err := http.ReadRequest(br)
	if err != nil {
		return err
	}
	_, err = io.Copy(io.Discard, req.Body)
	return err
}

// each serves requests on c one after another with answer until the client
// goes or answer fails.
func each(answer func(c net.Conn) error) Behavior {
	return func(c net.Conn, stop <-chan struct{}) {
		br := bufio.NewReader(c)
		for {
			if readRequest(br) != nil || answer(c) != nil {
				return
			}
		}
	}
}

// Silent reads the request and never answers.
func Silent(c net.Conn, stop <-chan struct{}) {
	readRequest(bufio.NewReader(c))
	<-stop
}

// NoRead accepts and never reads (nor answers); a TLS client's handshake
// stalls on it too.
func NoRead(c net.Conn, stop <-chan struct{}) { <-stop }

// Trickle reads the request and answers one byte a second.
func Trickle(c net.Conn, stop <-chan struct{}) {
	readRequest(bufio.NewReader(c))
	resp := "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for i := 0; i < len(resp); i++ {
		if _, err := c.Write([]byte{resp[i]}); err != nil {
			return
		}
		select {
		case <-stop:
			return
		case <-t.C:
		}
	}
}

// HugeBody answers every request with a body of n zero bytes, written as
// fast as the client reads.
func HugeBody(n int64) Behavior {
	chunk := make([]byte, 256<<10)
	return each(func(c net.Conn) error {
		if _, err := fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n", n); err != nil {
			return err
		}
		for left := n; left > 0; {
			m := min(left, int64(len(chunk)))
			if _, err := c.Write(chunk[:m]); err != nil {
				return err
			}
			left -= m
		}
		return nil
	})
}

// ManyHeaders answers with n header lines of size bytes each (at least 20),
// as X-Header-000001: vvv...
func ManyHeaders(n, size int) Behavior {
	var b strings.Builder
	b.WriteString("HTTP/1.1 200 OK\r\n")
	value := strings.Repeat("v", max(1, size-19))
	for i := range n {
		fmt.Fprintf(&b, "X-Header-%06d: %s\r\n", i%1_000_000, value)
	}
	head := b.String() + "Content-Length: 2\r\n\r\nok"
	return each(func(c net.Conn) error {
		_, err := io.WriteString(c, head)
		return err
	})
}

// LongHeader answers with one header line of n bytes.
func LongHeader(n int) Behavior {
	head := "HTTP/1.1 200 OK\r\nX-Long: " + strings.Repeat("a", n) + "\r\nContent-Length: 2\r\n\r\nok"
	return each(func(c net.Conn) error {
		_, err := io.WriteString(c, head)
		return err
	})
}

// BadChunked answers with a chunk size that is not hexadecimal.
var BadChunked = each(func(c net.Conn) error {
	_, err := io.WriteString(c, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n")
	return err
})

// partial is the head and the first bytes of a response promising more.
const partial = "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nabc"

// Reset sends part of the response and resets the connection (RST).
func Reset(c net.Conn, stop <-chan struct{}) {
	readRequest(bufio.NewReader(c))
	io.WriteString(c, partial)
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
}

// HalfClose sends part of the response, then closes its sending half (FIN)
// and keeps reading until the client goes.
func HalfClose(c net.Conn, stop <-chan struct{}) {
	br := bufio.NewReader(c)
	readRequest(br)
	io.WriteString(c, partial)
	if tc, ok := c.(*net.TCPConn); ok {
		tc.CloseWrite()
	}
	io.Copy(io.Discard, br)
}

// RedirectLoop answers every request with a redirect to itself.
var RedirectLoop = each(func(c net.Conn) error {
	_, err := io.WriteString(c, "HTTP/1.1 302 Found\r\nLocation: /loop\r\nContent-Length: 0\r\n\r\n")
	return err
})
