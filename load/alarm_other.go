//go:build !linux

package load

import (
	"context"
	"time"
)

// newKernelAlarm: no kernel timer is wired up on this system (see
// newKernelPacer); the runtime timer serves.
func newKernelAlarm(context.Context, time.Duration) alarm { return nil }
