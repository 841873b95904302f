package runner

import (
	"context"
	"slices"

	"github.com/knee-dev/knee/hostinfo"
	"github.com/knee-dev/knee/load"
	"github.com/knee-dev/knee/rundir"
)

// startFloors starts, once the load has started, the floor probes beside
// the open scenarios whose starts are far apart (hostinfo.FloorBeside
// decides which); the returned func stops them and notes each one's floor
// in run.json's scenario, where analyze finds it. Nothing when the
// environment note is skipped: the floor is part of it.
func (e *engine) startFloors(ctx context.Context, scs []load.Scenario, started, done <-chan struct{}) func() {
	if e.opt.SkipEnvironment {
		return func() {}
	}
	probes := make(chan map[string]*hostinfo.FloorProbe, 1)
	go func() {
		t0, ok := e.awaitStart(started, done)
		if !ok {
			probes <- nil
			return
		}
		m := map[string]*hostinfo.FloorProbe{}
		for _, sc := range scs {
			sched, peak, open, err := load.OpenStarts(sc.Executor)
			if !open || err != nil {
				continue // the driver failed on the same error, or it is closed
			}
			if p := hostinfo.FloorBeside(ctx, t0.Add(sc.StartTime), sched, peak); p != nil {
				m[sc.Name] = p
			}
		}
		probes <- m
	}()
	return func() {
		floors := map[string]*rundir.WakeFloor{}
		for name, p := range <-probes {
			floors[name] = p.Stop()
		}
		if len(floors) == 0 {
			return
		}
		e.mu.Lock()
		defer e.mu.Unlock()
		// A new slice: the copies of meta handed out at each interval
		// (OnInterval: the dashboard) share the old one and read it
		// on goroutines of their own.
		scs := slices.Clone(e.meta.Scenarios)
		for i, sc := range scs {
			if f := floors[sc.Name]; f != nil {
				scs[i].WakeFloor = f
			}
		}
		e.meta.Scenarios = scs
	}
}
