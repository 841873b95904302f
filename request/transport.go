package request

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/http"
	"time"
)

// defaultIdlePerHost bounds idle connections per host when MaxConnsPerHost is
// unlimited. net/http's default of 2 would close and reopen connections under
// load, measuring handshakes instead of the target.
const defaultIdlePerHost = 4096

// TransportOptions tune the HTTP transport. The zero value is HTTP/1.1 with
// keep-alive, unlimited connections per host and TLS verification on.
type TransportOptions struct {
	MaxConnsPerHost int  // 0 = unlimited; idle connections are kept up to the same number
	HTTP2           bool // HTTP/2 only: over TLS for https://, cleartext h2c for http://
	Insecure        bool // skip TLS certificate verification
	// RootCAs are the CAs trusted for https:// targets; nil means the system's.
	RootCAs *x509.CertPool
}

// NewTransport returns a transport tuned for load: connections are reused
// and kept idle up to MaxConnsPerHost, compression is never negotiated
// behind the caller's back (a gzip body would be counted and timed
// decompressed), and no proxy from the environment is used (it would be
// measured instead of the target). Timeouts come from each request's context.
func NewTransport(o TransportOptions) *http.Transport {
	idle := o.MaxConnsPerHost
	if idle <= 0 {
		idle = defaultIdlePerHost
	}
	var protos http.Protocols
	if o.HTTP2 {
		protos.SetHTTP2(true)
		protos.SetUnencryptedHTTP2(true)
	} else {
		protos.SetHTTP1(true)
	}
	dialer := &net.Dialer{KeepAlive: 30 * time.Second}
	return &http.Transport{
		Proxy:               nil,
		DialContext:         dialer.DialContext,
		MaxConnsPerHost:     max(o.MaxConnsPerHost, 0),
		MaxIdleConns:        0, // no global cap: the per-host one applies
		MaxIdleConnsPerHost: idle,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
		Protocols:           &protos,
		TLSClientConfig: &tls.Config{
			MinVersion:         tls.VersionTLS12,
			InsecureSkipVerify: o.Insecure, // only when the user asks for it
			RootCAs:            o.RootCAs,
		},
	}
}
