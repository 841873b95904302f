//go:build linux

package hostinfo

import (
	"context"
	"time"

	"github.com/knee-dev/knee/rundir"
)

// FloorProbe is the floor being measured beside one scenario of a run
// (FloorBeside). Its methods are nil-safe: a nil probe measured nothing.
type FloorProbe struct {
	sl    *sleeper
	stop  func() bool // stops the context's AfterFunc
	done  chan struct{}
	floor *rundir.WakeFloor // set before done is closed
}

// FloorBeside starts measuring the floor beside an open scenario whose
// starts, scheduled by starts from start on, come at most peakRate per
// second: WakeFloor's bare thread, waking once per gap between starts,
// half-way between them so that it never wakes with the generator, each
// wait as long as the generator's own (from one due to the next). The
// first wait (from now to the first due, half a gap) is not counted, nor
// a wait after a due the thread was too late for. The waits end with the
// schedule (the gap after the last start runs to its end), with ctx or
// with Stop. nil when peakRate is above FloorBesideMaxRate (or not
// positive), or when the thread's timer cannot be made: the floor before
// the run is then the one of record.
func FloorBeside(ctx context.Context, start time.Time, starts Starts, peakRate float64) *FloorProbe {
	if !(peakRate > 0 && peakRate <= FloorBesideMaxRate) {
		return nil
	}
	sl, err := newSleeper()
	if err != nil {
		return nil
	}
	p := &FloorProbe{sl: sl, done: make(chan struct{})}
	p.stop = context.AfterFunc(ctx, sl.cancel)
	go p.run(start, starts)
	return p
}

// Stop ends the measurement and returns the floor: Waits 0 (and Period
// the scenario's first gap) when not one wait was counted.
func (p *FloorProbe) Stop() *rundir.WakeFloor {
	if p == nil {
		return nil
	}
	p.stop()
	p.sl.cancel()
	<-p.done
	p.sl.close()
	return p.floor
}

// run waits until each due, then sets p.floor and closes p.done.
func (p *FloorProbe) run(start time.Time, starts Starts) {
	defer close(p.done)
	defer bareThread()()
	var late lateness
	floor := &rundir.WakeFloor{Beside: true}
	defer func() {
		if floor.Waits > 0 {
			f := floorOf(late.histogram(), floor.Waits, floor.Period)
			floor.P50MS, floor.P99MS = f.P50MS, f.P99MS
		}
		if floor.PeriodMax == floor.Period {
			floor.PeriodMax = 0
		}
		p.floor = floor
	}()
	now := monotonic()
	// start on CLOCK_MONOTONIC: a time.Time's monotonic reading is that
	// clock (Go's runtime reads it), so one pair of reads converts.
	base := now + int64(time.Until(start))
	var prev int64 // the last due the thread woke for; 0 before the first
	for due := range dues(starts, base) {
		if floor.Period == 0 {
			floor.Period = due.gap // said even when no wait is counted
		}
		if due.at <= monotonic() {
			prev = 0 // held up past it: the next wait is not a whole one
			continue
		}
		l, ok := p.sl.until(due.at)
		if !ok {
			return
		}
		if prev != 0 {
			waited := time.Duration(due.at - prev)
			if floor.Waits == 0 {
				floor.Period, floor.PeriodMax = waited, waited
			}
			floor.Period, floor.PeriodMax = min(floor.Period, waited), max(floor.PeriodMax, waited)
			floor.Waits++
			late.add(l)
		}
		prev = due.at
	}
}
