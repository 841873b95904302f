package use

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"github.com/knee-dev/knee/cgroup"
)

// Metric names the CPU, machine and generator probes write.
const (
	MetricCPUCores         = "cpu_cores"           // CPU used by the target, in cores
	MetricCPULimit         = "cpu_limit_cores"     // the target cgroup's CFS quota, in cores
	MetricCPUUtilization   = "cpu_utilization"     // used / limit (or / machine CPUs without a limit)
	MetricThrottledPeriods = "throttled_periods"   // fraction of CFS periods throttled
	MetricThrottledTime    = "throttled_time"      // seconds throttled per second
	MetricRunnableThreads  = "runnable_threads"    // the target's threads in state R
	MetricMachineCPUs      = "cpus"                // CPUs of the machine
	MetricMachineBusy      = "busy_cores"          // CPU busy on the machine, in cores
	MetricMachineUtil      = "machine_utilization" // busy / CPUs, context: the target and knee included
	MetricOtherCores       = "other_cores"         // busy minus the target and knee (and their descendants)
	MetricLoad1            = "load1"               // 1-minute load average
	MetricLoadPerCPU       = "load_per_cpu"        // load1 / CPUs
	MetricRunQueuePerCPU   = "runq_per_cpu"        // runnable tasks / CPUs, now, the target and knee included
	MetricGeneratorCores   = "generator_cores"     // knee's own CPU, in cores
	MetricGeneratorUtil    = "generator_utilization"
	MetricSendLagP99       = "send_lag_p99" // seconds; the caller's last interval
	whyFirstSample         = "first sample: a rate needs two"
	whyNoTarget            = "no target PID or cgroup given"
	whyNoCgroup            = "target is in no cgroup of its own"
	whyNoLimit             = "no cgroup CPU limit"
)

// CPUProbe reads the CPU of the target: from its cgroup when it has one
// (Cgroup, or the cgroup /proc/PID/cgroup names), else from
// /proc/PID/stat. Root ("" is "/") roots /proc; Hierarchy says where the
// cgroup mounts are (cgroup.Mounts("/") on a real machine).
type CPUProbe struct {
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
}

// Name is "target-cpu".
func (p *CPUProbe) Name() string { return "target-cpu" }

// Sample reads the counters and turns them into rates over the time since
// the previous sample.
func (p *CPUProbe) Sample(_ context.Context, now time.Time) ([]Reading, error) {
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
		case MetricCPULimit:
			out[i] = limitReading(snap)
		case MetricRunnableThreads:
			out[i] = runnableReading(snap)
		}
	}
	return out, nil
}

func limitReading(s cpuSnap) Reading {
	if s.limit > 0 {
		return measured(TargetCPU, MetricCPULimit, Info, s.limit, UnitCores)
	}
	return notMeasured(TargetCPU, MetricCPULimit, Info, UnitCores, s.limitWhy)
}

// rates computes the per-second readings between two snapshots dt seconds apart.
func (p *CPUProbe) rates(prev, cur *cpuSnap, dt float64) []Reading {
	cores := (cur.usage - prev.usage).Seconds() / dt
	util := measured(TargetCPU, MetricCPUUtilization, Utilization, 0, UnitFraction)
	if cur.limit > 0 {
		util.Value = cores / cur.limit
	} else {
		util.Value = cores / float64(cpusOr(p.CPUs))
	}
	out := []Reading{
		measured(TargetCPU, MetricCPUCores, Info, cores, UnitCores),
		limitReading(*cur),
		util,
	}
	switch {
	case cur.cg == nil || prev.cg == nil:
		out = append(out, notMeasured(TargetCPU, MetricThrottledPeriods, Saturation, UnitFraction, whyNoCgroup),
			notMeasured(TargetCPU, MetricThrottledTime, Saturation, UnitSecondsPerSec, whyNoCgroup))
	case cur.limit <= 0:
		out = append(out, notMeasured(TargetCPU, MetricThrottledPeriods, Saturation, UnitFraction, whyNoLimit),
			notMeasured(TargetCPU, MetricThrottledTime, Saturation, UnitSecondsPerSec, whyNoLimit))
	default:
		periods := cur.cg.Periods - prev.cg.Periods
		frac := 0.0 // no runnable period, no throttling
		if periods > 0 {
			frac = float64(cur.cg.Throttled-prev.cg.Throttled) / float64(periods)
		}
		out = append(out, measured(TargetCPU, MetricThrottledPeriods, Saturation, frac, UnitFraction),
			measured(TargetCPU, MetricThrottledTime, Saturation, (cur.cg.ThrottledTime-prev.cg.ThrottledTime).Seconds()/dt, UnitSecondsPerSec))
	}
	return append(out, runnableReading(*cur))
}

func runnableReading(s cpuSnap) Reading {
	if s.runnable < 0 {
		return notMeasured(TargetCPU, MetricRunnableThreads, Info, UnitCount, "no target PID given")
	}
	return measured(TargetCPU, MetricRunnableThreads, Info, float64(s.runnable), UnitCount)
}

// notMeasured is every reading of the probe, not measured for why.
func (p *CPUProbe) notMeasured(why string) []Reading {
	return []Reading{
		notMeasured(TargetCPU, MetricCPUCores, Info, UnitCores, why),
		notMeasured(TargetCPU, MetricCPULimit, Info, UnitCores, why),
		notMeasured(TargetCPU, MetricCPUUtilization, Utilization, UnitFraction, why),
		notMeasured(TargetCPU, MetricThrottledPeriods, Saturation, UnitFraction, why),
		notMeasured(TargetCPU, MetricThrottledTime, Saturation, UnitSecondsPerSec, why),
		notMeasured(TargetCPU, MetricRunnableThreads, Info, UnitCount, why),
	}
}

func (p *CPUProbe) snapshot(now time.Time) (cpuSnap, error) {
	fs := procFS{p.Root}
	s := cpuSnap{at: now, runnable: -1, limitWhy: whyNoCgroup}
	dir := p.Cgroup
	if p.PID > 0 {
		st, err := fs.pidStat(p.PID)
		if err != nil {
			return s, err
		}
		s.usage = seconds(st.cpu)
		if s.runnable, err = fs.runnableThreads(p.PID); err != nil {
			return s, err
		}
		if dir == "" {
			if dir, err = fs.cgroupDir(p.PID, p.Hierarchy); err != nil {
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
