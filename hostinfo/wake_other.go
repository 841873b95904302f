//go:build !linux

package hostinfo

import (
	"context"
	"time"

	"github.com/knee-dev/knee/rundir"
)

// WakeFloor is measured on Linux only; elsewhere there is none (nil).
func WakeFloor(ctx context.Context, waits int, period time.Duration) *rundir.WakeFloor { return nil }
