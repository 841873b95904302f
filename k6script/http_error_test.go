package k6script

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"syscall"
	"testing"

	"github.com/knee-dev/knee/request"
)

// k6Error gives the codes and texts of k6 v1.8.1's
// lib/netext/httpext/error_codes.go (errorCodeForError and its constants,
// errorCodeForHTTP2Message: 1630/1650/1610 + 1 + the code, REFUSED_STREAM
// 7, ENHANCE_YOUR_CALM 11) and transport.go's timeouts, for the errors
// Go's net and net/http make.
func TestK6ErrorCodesAndTexts(t *testing.T) {
	dial := func(inner error) error {
		return &url.Error{Op: "Get", URL: "http://h/", Err: &net.OpError{Op: "dial", Net: "tcp", Err: inner}}
	}
	for _, tt := range []struct {
		name string
		err  error
		code int
		msg  string
	}{
		{"none", nil, 0, ""},
		{"refused", dial(os.NewSyscallError("connect", syscall.ECONNREFUSED)), 1212, "dial: connection refused"},
		{"dial, other errno", dial(os.NewSyscallError("connect", syscall.ENETUNREACH)), 1213,
			"dial: unknown errno 101 error with msg `network is unreachable`"},
		{"no such host", dial(&net.DNSError{Err: "no such host", Name: "x.invalid", IsNotFound: true}), 1101, "lookup: no such host"},
		{"other DNS failure", dial(&net.DNSError{Err: "server misbehaving", Name: "x"}), 1100, "lookup x: server misbehaving"},
		{"dial timeout", dial(&net.DNSError{Err: "i/o timeout", IsTimeout: true}), 1211, "dial: i/o timeout"},
		{"request timeout", &url.Error{Op: "Get", URL: "http://h/", Err: context.DeadlineExceeded}, 1050, "request timeout"},
		{"reset while reading", &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}, 1220,
			"read: connection reset by peer"},
		{"broken pipe", &net.OpError{Op: "write", Net: "tcp", Err: os.NewSyscallError("write", syscall.EPIPE)}, 1201, "write: broken pipe"},
		{"udp", &net.OpError{Op: "read", Net: "udp", Err: errors.New("x")}, 1010, "read udp: x"},
		{"unknown authority", &url.Error{Op: "Get", URL: "https://h/", Err: &tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}},
			1310, "x509: unknown authority"},
		{"hostname", &url.Error{Op: "Get", URL: "https://h/", Err: &tls.CertificateVerificationError{Err: x509.HostnameError{Host: "h"}}},
			1311, "x509: certificate doesn't match hostname"},
		{"not TLS", tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake", RecordHeader: [5]byte{1, 2, 3, 4, 5}},
			1301, "tls: first record does not look like a TLS handshake"},
		{"an HTTP reply to TLS", tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake", RecordHeader: [5]byte{'H', 'T', 'T', 'P', '/'}},
			1000, "http: server gave HTTP response to HTTPS client"},
		{"closed before the response", &url.Error{Op: "Get", URL: "http://h/", Err: io.EOF}, 1000, "EOF"},
		{"wrapped once", fmt.Errorf("send: %w", io.ErrUnexpectedEOF), 1000, "unexpected EOF"},
		{"HTTP/2 stream error", &url.Error{Op: "Get", URL: "https://h/", Err: errors.New("stream error: stream ID 3; REFUSED_STREAM; received from peer")},
			1638, "http2: stream error with http2 ErrCode REFUSED_STREAM"},
		{"HTTP/2 stream error, no cause", errors.New("stream error: stream ID 1; PROTOCOL_ERROR"), 1632, "http2: stream error with http2 ErrCode PROTOCOL_ERROR"},
		{"HTTP/2 connection error", errors.New("connection error: ENHANCE_YOUR_CALM"), 1662, "http2: connection error with http2 ErrCode ENHANCE_YOUR_CALM"},
		{"HTTP/2 GOAWAY", errors.New(`http2: server sent GOAWAY and closed the connection; LastStreamID=1, ErrCode=NO_ERROR, debug=""`),
			1611, "http2: received GoAway with http2 ErrCode NO_ERROR"},
		{"HTTP/2 unknown code", errors.New("connection error: unknown error code 0x1f"), 1650, "http2: connection error with http2 ErrCode unknown error code 0x1f"},
		{"HTTP/2 unknown name", errors.New("stream error: stream ID 1; NOPE"), 1000, "stream error: stream ID 1; NOPE"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, msg := k6Error(tt.err)
			if code != tt.code || msg != tt.msg {
				t.Errorf("k6Error = %d %q; want %d %q", code, msg, tt.code, tt.msg)
			}
			if got := errorCode(&request.Reply{Err: tt.err}); got != tt.code {
				t.Errorf("errorCode = %d; want %d", got, tt.code)
			}
		})
	}
}

// A request that failed after its response began (its body cut short)
// is tagged as k6 tags a failed one: status "0", error and error_code,
// no proto or tls_version (transport.go sets those only without error).
func TestHopTagsOfAFailureAfterTheHeaders(t *testing.T) {
	hop := &request.Reply{Status: 200, Proto: "HTTP/1.1", TLSVersion: tls.VersionTLS13,
		Err: &url.Error{Op: "Get", URL: "https://h/", Err: io.ErrUnexpectedEOF}}
	got := hopTags(map[string]string{"group": ""}, nil, "", "https://h/", "GET", hop, true, false)
	want := map[string]string{"group": "", "name": "https://h/", "url": "https://h/", "method": "GET", "status": "0",
		"error": "unexpected EOF", "error_code": "1000", "expected_response": "false"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("tags %v; want %v", got, want)
	}
}
