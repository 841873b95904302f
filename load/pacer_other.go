//go:build !linux

package load

import (
	"context"
	"time"
)

// newKernelPacer: no kernel timer that the runtime's netpoller can wait on
// is wired up on this system; the runtime timer serves.
func newKernelPacer(context.Context, time.Duration) pacer { return nil }
