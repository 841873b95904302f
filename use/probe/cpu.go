package probe

import (
	"context"
	"fmt"
	"github.com/knee-dev/knee/internal/proc"
	"github.com/knee-dev/knee/use"
	"runtime"
	"time"

	"github.com/knee-dev/knee/cgroup"
)

const (
	whyFirstSample = "first sample: a rate needs two"
	whyNoTarget    = "no target PID or cgroup given"
	whyNoCgroup    = "target is in no cgroup of its own"
	whyNoLimit     = "no cgroup CPU limit"
)

// CPU reads the CPU of the target: from its cgroup when it has one
// (Cgroup, or the cgroup /proc/PID/cgroup names), else from
// /proc/PID/stat. Root ("" is "/") roots /proc; Hierarchy says where the
// cgroup mounts are (cgroup.Mounts("/") on a real machine).
type CPU struct {
	Root      string
	PID       int    // 0: none
	Cgroup    string // cgroup directory; "" finds PID's
	Hierarchy cgroup.Hierarchy
	CPUs      int // machine CPUs, for utilization without a limit; 0 means runtime.NumCPU()

	prev *cpuSnap
}

type cpuSnap struct {
	at       time.Time
	usage    time.Duration
	cg       *cgroup.CPUStat // nil without a cgroup
	limit    float64         // cores; 0 without a limit
	limitWhy string
	runnable int // -1 without a PID
	wait     time.Duration
	waitWhy  string // why wait was not read; "" when it was
}

// Name is "target-cpu".
func (p *CPU) Name() string { return "target-cpu" }

// Sample reads the counters and turns them into rates over the time since
// the previous sample.
func (p *CPU) Sample(_ context.Context, now time.Time) ([]use.Reading, error) {
	snap, err := p.snapshot(now)
	if err != nil {
		p.prev = nil
		return p.notMeasured(err.Error()), nil
	}
	prev := p.prev
	p.prev = &snap
	why := ""
	switch {
	case prev == nil:
		why = whyFirstSample
	case !now.After(prev.at):
		why = "no time passed since the previous sample"
	case snap.usage < prev.usage:
		why = "CPU counter went backwards (target restarted?)"
	}
	if why == "" {
		return p.rates(prev, &snap, now.Sub(prev.at).Seconds()), nil
	}
	out := p.notMeasured(why)
	// The limit and the run queue are levels, not rates: read them even on
	// the first sample.
	for i := range out {
		switch out[i].Metric {
		case use.MetricCPULimit:
			out[i] = limitReading(snap)
		case use.MetricRunnableThreads:
			out[i] = runnableReading(snap)
		}
	}
	return out, nil
}

func limitReading(s cpuSnap) use.Reading {
	if s.limit > 0 {
		return measured(use.TargetCPU, use.MetricCPULimit, use.Info, s.limit, use.UnitCores)
	}
	return notMeasured(use.TargetCPU, use.MetricCPULimit, use.Info, use.UnitCores, s.limitWhy)
}

// rates computes the per-second readings between two snapshots dt seconds apart.
func (p *CPU) rates(prev, cur *cpuSnap, dt float64) []use.Reading {
	cores := (cur.usage - prev.usage).Seconds() / dt
	util := measured(use.TargetCPU, use.MetricCPUUtilization, use.Utilization, 0, use.UnitFraction)
	if cur.limit > 0 {
		util.Value = cores / cur.limit
	} else {
		util.Value = cores / float64(cpusOr(p.CPUs))
	}
	out := []use.Reading{
		measured(use.TargetCPU, use.MetricCPUCores, use.Info, cores, use.UnitCores),
		limitReading(*cur),
		util,
	}
	switch {
	case cur.cg == nil || prev.cg == nil:
		out = append(out, notMeasured(use.TargetCPU, use.MetricThrottledPeriods, use.Saturation, use.UnitFraction, whyNoCgroup),
			notMeasured(use.TargetCPU, use.MetricThrottledTime, use.Saturation, use.UnitSecondsPerSec, whyNoCgroup))
	case cur.limit <= 0:
		out = append(out, notMeasured(use.TargetCPU, use.MetricThrottledPeriods, use.Saturation, use.UnitFraction, whyNoLimit),
			notMeasured(use.TargetCPU, use.MetricThrottledTime, use.Saturation, use.UnitSecondsPerSec, whyNoLimit))
	default:
		periods := cur.cg.Periods - prev.cg.Periods
		frac := 0.0 // no runnable period, no throttling
		if periods > 0 {
			frac = float64(cur.cg.Throttled-prev.cg.Throttled) / float64(periods)
		}
		out = append(out, measured(use.TargetCPU, use.MetricThrottledPeriods, use.Saturation, frac, use.UnitFraction),
			measured(use.TargetCPU, use.MetricThrottledTime, use.Saturation, (cur.cg.ThrottledTime-prev.cg.ThrottledTime).Seconds()/dt, use.UnitSecondsPerSec))
	}
	return append(out, runnableReading(*cur), waitReading(prev, cur, dt))
}

// waitReading is the target's run-queue wait per second between two
// snapshots: its CPU saturation with or without a cgroup (schedstat). It is
// shown, not judged: on a shared machine other processes' threads make the
// target's wait too.
func waitReading(prev, cur *cpuSnap, dt float64) use.Reading {
	switch {
	case cur.waitWhy != "":
		return notMeasured(use.TargetCPU, use.MetricRunQueueWait, use.Saturation, use.UnitSecondsPerSec, cur.waitWhy)
	case prev.waitWhy != "":
		return notMeasured(use.TargetCPU, use.MetricRunQueueWait, use.Saturation, use.UnitSecondsPerSec, whyFirstSample)
	case cur.wait < prev.wait:
		return notMeasured(use.TargetCPU, use.MetricRunQueueWait, use.Saturation, use.UnitSecondsPerSec, "a thread ended, taking its wait with it")
	}
	return measured(use.TargetCPU, use.MetricRunQueueWait, use.Saturation, (cur.wait-prev.wait).Seconds()/dt, use.UnitSecondsPerSec)
}

func runnableReading(s cpuSnap) use.Reading {
	if s.runnable < 0 {
		return notMeasured(use.TargetCPU, use.MetricRunnableThreads, use.Info, use.UnitCount, "no target PID given")
	}
	return measured(use.TargetCPU, use.MetricRunnableThreads, use.Info, float64(s.runnable), use.UnitCount)
}

// notMeasured is every reading of the probe, not measured for why.
func (p *CPU) notMeasured(why string) []use.Reading {
	return []use.Reading{
		notMeasured(use.TargetCPU, use.MetricCPUCores, use.Info, use.UnitCores, why),
		notMeasured(use.TargetCPU, use.MetricCPULimit, use.Info, use.UnitCores, why),
		notMeasured(use.TargetCPU, use.MetricCPUUtilization, use.Utilization, use.UnitFraction, why),
		notMeasured(use.TargetCPU, use.MetricThrottledPeriods, use.Saturation, use.UnitFraction, why),
		notMeasured(use.TargetCPU, use.MetricThrottledTime, use.Saturation, use.UnitSecondsPerSec, why),
		notMeasured(use.TargetCPU, use.MetricRunnableThreads, use.Info, use.UnitCount, why),
		notMeasured(use.TargetCPU, use.MetricRunQueueWait, use.Saturation, use.UnitSecondsPerSec, why),
	}
}

func (p *CPU) snapshot(now time.Time) (cpuSnap, error) {
	fs := proc.FS{Root: p.Root}
	s := cpuSnap{at: now, runnable: -1, limitWhy: whyNoCgroup, waitWhy: "no target PID given"}
	dir := p.Cgroup
	if p.PID > 0 {
		st, err := fs.Stat(p.PID)
		if err != nil {
			return s, err
		}
		s.usage = seconds(st.CPU)
		if s.runnable, err = fs.RunnableThreads(p.PID); err != nil {
			return s, err
		}
		// A kernel without schedstat leaves the other readings standing.
		s.waitWhy = ""
		if s.wait, err = fs.RunQueueWait(p.PID); err != nil {
			s.waitWhy = err.Error()
		}
		if dir == "" {
			if dir, err = fs.CgroupDir(p.PID, p.Hierarchy); err != nil {
				return s, err
			}
		}
	} else if dir == "" {
		return s, fmt.Errorf("%s", whyNoTarget)
	}
	if dir == "" {
		return s, nil
	}
	cg, err := cgroup.Open(p.Hierarchy, dir)
	if err != nil {
		return s, fmt.Errorf("target cgroup: %w", err)
	}
	st, err := cg.CPUStat()
	if err != nil {
		return s, fmt.Errorf("target cgroup cpu.stat: %w", err)
	}
	s.cg, s.usage = &st, st.Usage
	s.limit, s.limitWhy = cgroupLimit(cg)
	return s, nil
}

// cgroupLimit reads the CFS quota in cores, or why there is none.
func cgroupLimit(cg *cgroup.Group) (float64, string) {
	if cg.ControllerDir("cpu") == "" {
		return 0, whyNoLimit + " (no cpu controller)"
	}
	cores, err := cg.CPUQuota()
	switch {
	case err != nil:
		return 0, fmt.Sprintf("%s: %v", whyNoLimit, err)
	case cores <= 0:
		return 0, whyNoLimit // "max" or -1
	}
	return cores, ""
}

// seconds turns procfs's CPU seconds into a Duration.
func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

func cpusOr(n int) int {
	if n > 0 {
		return n
	}
	return runtime.NumCPU()
}
