package request

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"syscall"
	"testing"
	"time"
)

// closedPort returns the address of a loopback port nobody listens on.
func closedPort(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// Each class against a real loopback condition.
func TestDoClassifiesErrors(t *testing.T) { forEachClient(t, testDoClassifiesErrors) }

func testDoClassifiesErrors(t *testing.T, cl client) {
	done := make(chan struct{})
	defer close(done)
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-done:
		}
	}))
	defer slow.Close()
	reset := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		conn.(*net.TCPConn).SetLinger(0) // close with RST, not FIN
		conn.Close()
	}))
	defer reset.Close()
	untrusted := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	untrusted.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshake failure is the point
	untrusted.StartTLS()
	defer untrusted.Close()

	tests := []struct {
		name string
		spec Spec
		want string
	}{
		{"refused", Spec{URL: "http://" + closedPort(t) + "/"}, ClassRefused},
		{"reset", Spec{URL: reset.URL}, ClassReset},
		{"timeout", Spec{URL: slow.URL, Timeout: 30 * time.Millisecond}, ClassTimeout},
		{"tls untrusted", Spec{URL: untrusted.URL}, ClassTLS},
		{"tls to plain server", Spec{URL: "https://" + slow.Listener.Addr().String()}, ClassTLS},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := cl.sender(t, []Spec{tt.spec}, Options{})
			res := s.Do(context.Background(), 1, 1)
			if res.ErrClass != tt.want || res.Err == nil || res.Status != 0 {
				t.Errorf("class %q, status %d, err %v; want class %q", res.ErrClass, res.Status, res.Err, tt.want)
			}
			if res.Sent.IsZero() || res.Done.Before(res.Sent) {
				t.Errorf("Sent %v, Done %v", res.Sent, res.Done)
			}
		})
	}
}

func TestDoTLSVerification(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	pool := srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	for _, o := range []TransportOptions{{Insecure: true}, {RootCAs: pool}} {
		s := newSender(t, []Spec{{URL: srv.URL}}, Options{Transport: o})
		if res := s.Do(context.Background(), 1, 1); res.Status != 200 {
			t.Errorf("options %+v: %v", o, res.Err)
		}
	}
}

// A name under .invalid never resolves (RFC 6761).
func TestDoClassifiesDNS(t *testing.T) { forEachClient(t, testDoClassifiesDNS) }

func testDoClassifiesDNS(t *testing.T, cl client) {
	s := cl.sender(t, []Spec{{URL: "http://knee-test.invalid/", Timeout: 5 * time.Second}}, Options{})
	res := s.Do(context.Background(), 1, 1)
	if res.ErrClass != ClassDNS {
		t.Errorf("class %q (%v), want dns", res.ErrClass, res.Err)
	}
}

func TestDoInterruptedByCaller(t *testing.T) { forEachClient(t, testDoInterruptedByCaller) }

func testDoInterruptedByCaller(t *testing.T, cl client) {
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-done:
		}
	}))
	defer srv.Close()
	defer close(done)
	s := cl.sender(t, []Spec{{URL: srv.URL}}, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	res := s.Do(ctx, 1, 1)
	cause := context.DeadlineExceeded
	if cl.loop {
		cause = context.Canceled // Loop.Cancel is told no cause: the run stopped
	}
	if !errors.Is(res.Err, ErrInterrupted) || !errors.Is(res.Err, cause) || res.ErrClass != ClassOther {
		t.Errorf("err %v class %q; want ErrInterrupted wrapping %v, class other", res.Err, res.ErrClass, cause)
	}
}

func TestClassify(t *testing.T) {
	opErr := func(err error) error {
		return &url.Error{Op: "Get", URL: "http://h/", Err: &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", err)}}
	}
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"nil", nil, ""},
		{"deadline", fmt.Errorf("x: %w", context.DeadlineExceeded), ClassTimeout},
		{"dns", &url.Error{Op: "Get", Err: &net.OpError{Op: "dial", Err: &net.DNSError{Err: "no such host", Name: "h", IsNotFound: true}}}, ClassDNS},
		{"dns timeout", &net.DNSError{Err: "i/o timeout", IsTimeout: true}, ClassTimeout},
		{"refused", opErr(syscall.ECONNREFUSED), ClassRefused},
		{"reset", opErr(syscall.ECONNRESET), ClassReset},
		{"broken pipe", opErr(syscall.EPIPE), ClassReset},
		{"canceled", context.Canceled, ClassOther},
		{"other", errors.New("boom"), ClassOther},
		{"no descriptor", opErr(syscall.EMFILE), ClassGenerator},
		{"no descriptor in the system", opErr(syscall.ENFILE), ClassGenerator},
		{"no local port", opErr(syscall.EADDRNOTAVAIL), ClassGenerator},
		{"no memory", opErr(syscall.ENOMEM), ClassGenerator},
		{"no buffer", opErr(syscall.ENOBUFS), ClassGenerator},
		{"Errno lost", errors.New("socket: too many open files"), ClassGenerator},
	}
	for _, tt := range tests {
		if got := Classify(tt.err); got != tt.want {
			t.Errorf("%s: Classify = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// The kernel's own EADDRNOTAVAIL: a dial from a local address this machine
// does not have (TEST-NET-1, RFC 5737) fails at bind, before any packet,
// as a dial fails once every local port is taken: knee's failure.
func TestClassifyRealGeneratorError(t *testing.T) {
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("192.0.2.1")}}
	_, err := d.Dial("tcp", "127.0.0.1:1")
	if err == nil {
		t.Skip("this machine has 192.0.2.1: no EADDRNOTAVAIL to provoke")
	}
	if got := Classify(err); got != ClassGenerator {
		t.Errorf("Classify(%v) = %q, want %q", err, got, ClassGenerator)
	}
}
