package request

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"
)

// Error classes, as record.ErrorClasses lists them.
const (
	ClassTimeout = "timeout"
	ClassRefused = "refused"
	ClassReset   = "reset"
	ClassDNS     = "dns"
	ClassTLS     = "tls"
	ClassOther   = "other"
	// ClassGenerator is a request knee could not send for want of its own
	// resources (file descriptors, local ports, memory, socket buffers):
	// knee's failure, not the target's.
	ClassGenerator = "generator"
)

// Classify names the class of a request error: generator, timeout,
// refused, reset, dns, tls or other; "" for nil. The order matters: a DNS lookup or TLS
// handshake cut short by the deadline is a timeout, because the deadline is
// what ended it.
func Classify(err error) string {
	if err == nil {
		return ""
	}
	var (
		dnsErr   *net.DNSError
		netErr   net.Error
		verify   *tls.CertificateVerificationError
		unknown  x509.UnknownAuthorityError
		invalid  x509.CertificateInvalidError
		hostname x509.HostnameError
		header   tls.RecordHeaderError
		alert    tls.AlertError
	)
	switch {
	case generatorSide(err):
		return ClassGenerator
	case errors.Is(err, context.DeadlineExceeded):
		return ClassTimeout
	case errors.As(err, &netErr) && netErr.Timeout():
		return ClassTimeout
	case errors.As(err, &dnsErr):
		return ClassDNS
	case errors.As(err, &verify), errors.As(err, &unknown), errors.As(err, &invalid),
		errors.As(err, &hostname), errors.As(err, &header), errors.As(err, &alert):
		return ClassTLS
	case strings.Contains(err.Error(), "server gave HTTP response to HTTPS client"):
		// net/http replaces the tls.RecordHeaderError with this plain error.
		return ClassTLS
	case errors.Is(err, syscall.ECONNREFUSED):
		return ClassRefused
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		// EOF: the server closed the connection before (all of) the response.
		return ClassReset
	}
	return ClassOther
}

// generatorSide reports an error of the machine knee runs on: out of file
// descriptors (EMFILE, ENFILE), local ports (EADDRNOTAVAIL), memory
// (ENOMEM) or socket buffers (ENOBUFS). The request never reached the
// network.
func generatorSide(err error) bool {
	for _, e := range []syscall.Errno{syscall.EMFILE, syscall.ENFILE, syscall.EADDRNOTAVAIL, syscall.ENOMEM, syscall.ENOBUFS} {
		if errors.Is(err, e) {
			return true
		}
	}
	msg := err.Error() // errors that lost their Errno on the way
	return strings.Contains(msg, "too many open files") || strings.Contains(msg, "cannot assign requested address")
}
