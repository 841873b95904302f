package request

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
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
	// ALPN offers HTTP/2 and HTTP/1.1 to https:// targets and takes what
	// the server picks (k6's default); http:// stays HTTP/1.1.
	ALPN     bool
	Insecure bool // skip TLS certificate verification
	// RootCAs are the CAs trusted for https:// targets; nil means the system's.
	RootCAs *x509.CertPool
	// Client picks the HTTP/1.1 client (the --client flag): ClientAuto sends
	// plain http:// requests through the lean client where it applies (see
	// the package doc), ClientNetHTTP everything through net/http.
	Client Client
}

// Client names an HTTP/1.1 client choice. It is a flag value (it has the
// methods of pflag.Value).
type Client string

// The client choices; the zero value is ClientAuto.
const (
	ClientAuto    Client = ""
	ClientNetHTTP Client = "net/http"
)

// String is the choice as the flag shows it.
func (c *Client) String() string {
	if *c == ClientAuto {
		return "auto"
	}
	return string(*c)
}

// Set takes "auto" or "net/http".
func (c *Client) Set(s string) error {
	switch s {
	case "auto", "":
		*c = ClientAuto
	case string(ClientNetHTTP):
		*c = ClientNetHTTP
	default:
		return fmt.Errorf("unknown client %q; use auto (the lean HTTP/1.1 client for plain http:// where it applies, else net/http) or net/http", s)
	}
	return nil
}

// Type is the flag's value type in help text.
func (c *Client) Type() string { return "client" }

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
	switch {
	case o.HTTP2:
		protos.SetHTTP2(true)
		protos.SetUnencryptedHTTP2(true)
	case o.ALPN:
		protos.SetHTTP1(true)
		protos.SetHTTP2(true)
	default:
		protos.SetHTTP1(true)
	}
	dialer := &net.Dialer{KeepAlive: 30 * time.Second}
	return &http.Transport{
		Proxy:               nil,
		DialContext:         countingDial(dialer.DialContext),
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
