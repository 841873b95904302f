//go:build !linux

package request

import "net"

// aliveCheck cannot tell on this platform.
type aliveCheck struct{}

func newAliveCheck(net.Conn) *aliveCheck { return &aliveCheck{} }

// peerClosed reports false: a request that may be sent twice is retried
// once when its reused connection fails.
func (*aliveCheck) peerClosed() bool { return false }
