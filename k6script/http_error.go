package k6script

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// k6Error is the error_code and error text k6 gives a request that failed
// (res.error_code, res.error and the samples' error_code and error tags),
// by k6 v1.8.1's rules: its transport's timeouts first
// (lib/netext/httpext/transport.go RoundTrip: 1211 for a dial, else 1050),
// http.Client's scheme mismatch, then the error's types and HTTP/2's
// texts (error_codes.go errorCodeForError). 0 and "" for nil.
func k6Error(err error) (int, string) {
	if err == nil {
		return 0, ""
	}
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout() {
		var op *net.OpError
		if errors.As(err, &op) && op.Op == "dial" {
			return 1211, "dial: i/o timeout"
		}
		return 1050, "request timeout"
	}
	// k6 sends through http.Client, which turns a TLS record that reads
	// "HTTP/" into ErrSchemeMismatch (net/http client.go send).
	var rh tls.RecordHeaderError
	if errors.As(err, &rh) && string(rh.RecordHeader[:]) == "HTTP/" {
		return 1000, http.ErrSchemeMismatch.Error()
	}
	return k6ErrorOf(err)
}

// k6ErrorOf follows k6's errorCodeForError: the error's own type decides,
// else the error it wraps (one level at a time, as errors.Unwrap), else
// 1000 with the error's text.
func k6ErrorOf(err error) (int, string) {
	switch e := err.(type) {
	case *net.DNSError:
		if e.Err == "no such host" {
			return 1101, "lookup: no such host"
		}
		return 1100, err.Error()
	case *net.OpError:
		return k6NetOpError(e)
	case x509.UnknownAuthorityError:
		return 1310, "x509: unknown authority"
	case x509.HostnameError:
		return 1311, "x509: certificate doesn't match hostname"
	case tls.RecordHeaderError:
		return 1301, err.Error()
	case *url.Error:
		return k6ErrorOf(e.Err)
	}
	if inner := errors.Unwrap(err); inner != nil {
		return k6ErrorOf(inner)
	}
	if code, msg, ok := k6HTTP2Error(err.Error()); ok {
		return code, msg
	}
	return 1000, err.Error()
}

// http2Codes are HTTP/2's error codes by name (RFC 9113 section 7), in
// the order of their values, 0 to 13, as Go's http2.ErrCode names them.
var http2Codes = []string{"NO_ERROR", "PROTOCOL_ERROR", "INTERNAL_ERROR", "FLOW_CONTROL_ERROR", "SETTINGS_TIMEOUT",
	"STREAM_CLOSED", "FRAME_SIZE_ERROR", "REFUSED_STREAM", "CANCEL", "COMPRESSION_ERROR", "CONNECT_ERROR",
	"ENHANCE_YOUR_CALM", "INADEQUATE_SECURITY", "HTTP_1_1_REQUIRED"}

// k6HTTP2Error reads an HTTP/2 error from its text, as k6's
// errorCodeForHTTP2Message does (error_codes.go): a stream error is 1630,
// a connection error 1650 and a GOAWAY 1610, plus 1 + the code for the
// codes 0 to 13; its text "http2: stream error with http2 ErrCode NAME"
// (connection error, received GoAway).
func k6HTTP2Error(msg string) (int, string, bool) {
	var base int
	var name, what string
	switch {
	case strings.HasPrefix(msg, "stream error: "):
		_, rest, ok := strings.Cut(msg, "; ")
		if !ok {
			return 0, "", false
		}
		name, _, _ = strings.Cut(rest, ";")
		base, what = 1630, "stream error with"
	case strings.HasPrefix(msg, "connection error: "):
		name = strings.TrimPrefix(msg, "connection error: ")
		base, what = 1650, "connection error with"
	case strings.HasPrefix(msg, "http2: server sent GOAWAY"):
		_, after, ok := strings.Cut(msg, "ErrCode=")
		if !ok {
			return 0, "", false
		}
		if name, _, ok = strings.Cut(after, ","); !ok {
			return 0, "", false
		}
		base, what = 1610, "received GoAway with"
	default:
		return 0, "", false
	}
	name = strings.TrimSpace(name)
	code := slices.Index(http2Codes, name)
	if code < 0 {
		hex, ok := strings.CutPrefix(name, "unknown error code 0x")
		if !ok {
			return 0, "", false
		}
		v, err := strconv.ParseUint(hex, 16, 32)
		if err != nil {
			return 0, "", false
		}
		// k6 adds nothing for a code past 13
		return base, fmt.Sprintf("http2: %s http2 ErrCode unknown error code 0x%x", what, v), true
	}
	return base + 1 + code, fmt.Sprintf("http2: %s http2 ErrCode %s", what, name), true
}

// k6NetOpError is k6's errorCodeForNetOpError: TCP resets and broken
// pipes, other errnos, and a dial's refusal, errno or wrapped error.
func k6NetOpError(e *net.OpError) (int, string) {
	if e.Net != "tcp" && e.Net != "tcp6" {
		return 1010, e.Error()
	}
	sys, isSys := e.Err.(*os.SyscallError)
	if isSys {
		switch sys.Err {
		case syscall.ECONNRESET:
			return 1220, e.Op + ": connection reset by peer"
		case syscall.EPIPE:
			return 1201, e.Op + ": broken pipe"
		}
	}
	if e.Op != "dial" {
		if errno, ok := e.Err.(syscall.Errno); ok {
			return 1202, fmt.Sprintf("%s: unknown errno `%d` on %s with message `%s`", e.Op, int(errno), runtime.GOOS, errno.Error())
		}
		return 1200, e.Error()
	}
	if isSys {
		if errno, ok := sys.Err.(syscall.Errno); ok {
			if errno == syscall.ECONNREFUSED {
				return 1212, "dial: connection refused"
			}
			return 1213, fmt.Sprintf("dial: unknown errno %d error with msg `%s`", int(errno), sys.Err)
		}
	}
	if inner := errors.Unwrap(e); inner != nil {
		if code, msg := k6ErrorOf(inner); code != 1000 {
			return code, msg
		}
	}
	return 1210, e.Error()
}
