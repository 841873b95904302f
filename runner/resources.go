package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/knee-dev/knee/rundir"
	"github.com/knee-dev/knee/use"
	"github.com/knee-dev/knee/use/probe"
)

// startResources samples the USE probes every second into resources.jsonl:
// the target's probes from Options.Probes, plus the machine and the generator
// itself, always, because knee shares the machine with the target. stop ends
// the sampling and returns what was sampled.
func (e *engine) startResources(t0 time.Time) (stop func() []use.Sample) {
	if !e.opt.Resources {
		return func() []use.Sample { return nil }
	}
	f, err := os.Create(filepath.Join(e.opt.Dir, rundir.ResourcesFile))
	if err != nil {
		e.resourcesFailed(err)
		return func() []use.Sample { return nil }
	}
	bw, err := rundir.NewLineFile(f) // whole lines only, even on a full disk
	if err != nil {
		f.Close()
		e.resourcesFailed(err)
		return func() []use.Sample { return nil }
	}
	probes := append([]probe.Probe{}, e.opt.Probes...)
	probes = append(probes,
		&probe.Machine{TargetPIDs: targetPIDs(e.opt.TargetPID)},
		&probe.Generator{SendLagP99: e.sendLagP99},
	)
	s := &probe.Sampler{Probes: probes, Out: bw, T0: t0}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := s.Run(ctx); err != nil {
			e.resourcesFailed(fmt.Errorf("USE sampling stopped: %w", err))
		}
	}()
	return func() []use.Sample {
		cancel()
		<-done
		if err := errors.Join(bw.Flush(), f.Close()); err != nil {
			e.resourcesFailed(err)
		}
		if err := s.Close(); err != nil {
			e.note("USE sampling: " + err.Error())
		}
		return s.Samples()
	}
}

func targetPIDs(pid int) []int {
	if pid > 0 {
		return []int{pid}
	}
	return nil
}

// sendLagP99 is the last interval's send-lag p99, for the generator's USE row.
func (e *engine) sendLagP99() (time.Duration, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.last.sendLagP99, e.last.sendLagRecorded
}
