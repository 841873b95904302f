//go:build !linux

package request

import "net"

// peerClosed cannot tell on this platform: it reports false, and a request
// that may be sent twice is retried once when its reused connection fails.
func peerClosed(net.Conn) bool { return false }
