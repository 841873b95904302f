//go:build !linux

package hostinfo

import (
	"context"
	"time"

	"github.com/knee-dev/knee/rundir"
)

// WakeFloor is measured on Linux only; elsewhere there is none (nil).
func WakeFloor(ctx context.Context, waits int, period time.Duration) *rundir.WakeFloor { return nil }

// FloorProbe is measured on Linux only; elsewhere FloorBeside starts none.
type FloorProbe struct{}

// FloorBeside is measured on Linux only; elsewhere there is none (nil).
func FloorBeside(ctx context.Context, start time.Time, starts Starts, peakRate float64) *FloorProbe {
	return nil
}

// Stop returns nil: nothing was measured.
func (p *FloorProbe) Stop() *rundir.WakeFloor { return nil }
