package use

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// MachineProbe reads the machine: its CPUs, how busy they are, how much of
// that is neither the target nor knee ("other" load that skews a run), the
// load average and the run queue.
type MachineProbe struct {
	Root       string  // roots /proc; "" is "/"
	TargetPIDs []int   // subtracted from busy to get other load
	Self       string  // knee's own /proc entry; "" means "self"
	ClockTick  float64 // USER_HZ; 0 means 100

	prev *machineSnap
}

type machineSnap struct {
	at     time.Time
	cpu    cpuTimes
	ticks  uint64 // targets + self, in clock ticks
	ticksE error  // why ticks could not be read
}

// Name is "machine".
func (p *MachineProbe) Name() string { return "machine" }

// Sample reads /proc/stat, /proc/loadavg and the targets' and knee's
// /proc/PID/stat.
func (p *MachineProbe) Sample(_ context.Context, now time.Time) ([]Reading, error) {
	fs := procFS{p.Root}
	var out []Reading
	ct, err := fs.procStat()
	if err != nil {
		p.prev = nil
		why := fmt.Sprintf("read /proc/stat: %v", err)
		out = append(out, notMeasured(Machine, MetricMachineCPUs, Info, UnitCount, why),
			notMeasured(Machine, MetricMachineBusy, Info, UnitCores, why),
			notMeasured(Machine, MetricMachineUtil, Utilization, UnitFraction, why),
			notMeasured(Machine, MetricOtherCores, Info, UnitCores, why))
	} else {
		cur := &machineSnap{at: now, cpu: ct}
		cur.ticks, cur.ticksE = p.ownTicks(fs)
		out = append(out, measured(Machine, MetricMachineCPUs, Info, float64(ct.cpus), UnitCount))
		out = append(out, p.busy(p.prev, cur)...)
		p.prev = cur
	}
	return append(out, loadReadings(fs, ct.cpus)...), nil
}

// ownTicks sums the CPU ticks of the targets and knee.
func (p *MachineProbe) ownTicks(fs procFS) (uint64, error) {
	self := p.Self
	if self == "" {
		self = "self"
	}
	pids := []string{self}
	for _, pid := range p.TargetPIDs {
		pids = append(pids, strconv.Itoa(pid))
	}
	var sum uint64
	for _, pid := range pids {
		st, err := fs.pidStat(pid)
		if err != nil {
			return 0, err
		}
		sum += st.ticks
	}
	return sum, nil
}

// busy turns two /proc/stat readings into busy cores and other load.
func (p *MachineProbe) busy(prev, cur *machineSnap) []Reading {
	why := ""
	switch {
	case prev == nil:
		why = whyFirstSample
	case cur.cpu.total <= prev.cpu.total || cur.cpu.busy < prev.cpu.busy || !cur.at.After(prev.at):
		why = "no CPU time passed since the previous sample"
	}
	if why != "" {
		return []Reading{notMeasured(Machine, MetricMachineBusy, Info, UnitCores, why),
			notMeasured(Machine, MetricMachineUtil, Utilization, UnitFraction, why),
			notMeasured(Machine, MetricOtherCores, Info, UnitCores, why)}
	}
	// The busy share of all CPU ticks is exact whatever the tick rate; times
	// the CPUs it is cores.
	util := float64(cur.cpu.busy-prev.cpu.busy) / float64(cur.cpu.total-prev.cpu.total)
	cores := util * float64(cur.cpu.cpus)
	out := []Reading{measured(Machine, MetricMachineBusy, Info, cores, UnitCores),
		measured(Machine, MetricMachineUtil, Utilization, util, UnitFraction)}
	switch {
	case len(p.TargetPIDs) == 0:
		out = append(out, notMeasured(Machine, MetricOtherCores, Info, UnitCores, "no target PID given: other load would include the target"))
	case cur.ticksE != nil || prev.ticksE != nil:
		out = append(out, notMeasured(Machine, MetricOtherCores, Info, UnitCores, errors.Join(cur.ticksE, prev.ticksE).Error()))
	case cur.ticks < prev.ticks:
		out = append(out, notMeasured(Machine, MetricOtherCores, Info, UnitCores, "target CPU counter went backwards (restarted?)"))
	default:
		own := ticksToDuration(cur.ticks-prev.ticks, p.ClockTick).Seconds() / cur.at.Sub(prev.at).Seconds()
		// Tick rounding can make own exceed busy by a hair: other load is never negative.
		out = append(out, measured(Machine, MetricOtherCores, Info, max(cores-own, 0), UnitCores))
	}
	return out
}

// loadReadings reads /proc/loadavg against cpus (0 when unknown).
func loadReadings(fs procFS, cpus int) []Reading {
	la, err := fs.loadavg()
	why := ""
	switch {
	case err != nil:
		why = fmt.Sprintf("read /proc/loadavg: %v", err)
	case cpus <= 0:
		why = "CPU count unknown"
	}
	if why != "" {
		return []Reading{notMeasured(Machine, MetricLoad1, Info, UnitCount, why),
			notMeasured(Machine, MetricLoadPerCPU, Saturation, UnitCount, why),
			notMeasured(Machine, MetricRunQueuePerCPU, Saturation, UnitCount, why)}
	}
	// The runnable count includes the thread reading the file: leave it out.
	runq := max(la.runnable-1, 0)
	return []Reading{measured(Machine, MetricLoad1, Info, la.load1, UnitCount),
		measured(Machine, MetricLoadPerCPU, Saturation, la.load1/float64(cpus), UnitCount),
		measured(Machine, MetricRunQueuePerCPU, Saturation, float64(runq)/float64(cpus), UnitCount)}
}

// GeneratorProbe reads knee itself: its own CPU and the send lag the caller
// measures (the caller owns the histograms and passes the last interval's
// p99 in). A generator that is short of CPU or late sending measures itself,
// not the target.
type GeneratorProbe struct {
	Root      string  // roots /proc; "" is "/"
	Self      string  // "" means "self"
	ClockTick float64 // USER_HZ; 0 means 100
	CPUs      int     // 0 means runtime.NumCPU()
	// SendLagP99 returns the last interval's send-lag p99, and false when
	// nothing was sent in it. nil: send lag is not measured.
	SendLagP99 func() (time.Duration, bool)

	prevAt    time.Time
	prevTicks uint64
	hasPrev   bool
}

// Name is "generator".
func (p *GeneratorProbe) Name() string { return "generator" }

// Sample reads knee's CPU from /proc/self/stat and calls SendLagP99.
func (p *GeneratorProbe) Sample(_ context.Context, now time.Time) ([]Reading, error) {
	self := p.Self
	if self == "" {
		self = "self"
	}
	cores := notMeasured(Generator, MetricGeneratorCores, Info, UnitCores, whyFirstSample)
	util := notMeasured(Generator, MetricGeneratorUtil, Utilization, UnitFraction, whyFirstSample)
	st, err := procFS{p.Root}.pidStat(self)
	switch {
	case err != nil:
		cores.NotMeasured = fmt.Sprintf("read own CPU: %v", err)
		util.NotMeasured = cores.NotMeasured
		p.hasPrev = false
	case p.hasPrev && now.After(p.prevAt) && st.ticks >= p.prevTicks:
		c := ticksToDuration(st.ticks-p.prevTicks, p.ClockTick).Seconds() / now.Sub(p.prevAt).Seconds()
		cores = measured(Generator, MetricGeneratorCores, Info, c, UnitCores)
		util = measured(Generator, MetricGeneratorUtil, Utilization, c/float64(cpusOr(p.CPUs)), UnitFraction)
	}
	if err == nil {
		p.prevAt, p.prevTicks, p.hasPrev = now, st.ticks, true
	}
	lag := notMeasured(Generator, MetricSendLagP99, Saturation, UnitSeconds, "no send-lag source given")
	if p.SendLagP99 != nil {
		if d, ok := p.SendLagP99(); ok {
			lag = measured(Generator, MetricSendLagP99, Saturation, d.Seconds(), UnitSeconds)
		} else {
			lag.NotMeasured = "nothing sent in the last interval"
		}
	}
	return []Reading{cores, util, lag}, nil
}
