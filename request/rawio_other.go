//go:build !linux

package request

import (
	"io"
	"net"
)

// newRawIO: raw system calls are wired up on Linux only; elsewhere the
// connection reads and writes as usual.
func newRawIO(conn net.Conn) io.ReadWriter { return conn }
