package use

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Metrics of the rest of the machine: what neither the target nor knee uses.
const (
	MetricOtherUtil           = "other_utilization"  // other_cores / CPUs
	MetricOtherRunQueuePerCPU = "other_runq_per_cpu" // runnable threads of other processes / CPUs
	// MetricOtherProcessPrefix prefixes the metric of one other command's
	// CPU, in cores: "other_cpu:stress".
	MetricOtherProcessPrefix = "other_cpu:"
)

// Naming other processes: a command is named once it uses at least
// minNamedCores over a sample, and at most maxNamed commands are followed
// (once named, a command keeps its reading, 0 when idle, so its mean over a
// step is over the same samples as the machine's).
const (
	minNamedCores = 0.05
	maxNamed      = 5
)

// MachineProbe reads the machine: its CPUs, how busy they are, and how much
// of that is the rest of the machine — processes that are neither the
// target (TargetPIDs and their descendants) nor knee (Self and its
// descendants). Only the rest is judged: a target and a generator that
// keep the machine busy are the test itself, not a saturated machine. The
// rest's CPU (other_utilization), its runnable threads (other_runq_per_cpu)
// and the busiest other commands by name (other_cpu:COMM) are read; the
// whole machine's load, run queue and busy CPU are context.
type MachineProbe struct {
	Root       string // roots /proc; "" is "/"
	TargetPIDs []int  // the target; other load is what neither it nor knee uses
	Self       string // knee's PID; "" or "self" is this process

	prev  *machineSnap
	named []string // commands named so far, in the order first named
}

type machineSnap struct {
	at    time.Time
	cpu   cpuTimes
	procs map[int]pidStat // every process; nil when unreadable
	err   error           // why procs is nil
}

// Name is "machine".
func (p *MachineProbe) Name() string { return "machine" }

// Sample reads /proc/stat, /proc/loadavg, every /proc/PID/stat, and the
// threads of the target and knee.
func (p *MachineProbe) Sample(_ context.Context, now time.Time) ([]Reading, error) {
	fs := procFS{p.Root}
	var out []Reading
	ct, err := fs.procStat()
	if err != nil {
		p.prev = nil
		why := fmt.Sprintf("read /proc/stat: %v", err)
		out = append(out, notMeasured(Machine, MetricMachineCPUs, Info, UnitCount, why),
			notMeasured(Machine, MetricMachineBusy, Info, UnitCores, why),
			notMeasured(Machine, MetricMachineUtil, Info, UnitFraction, why),
			notMeasured(Machine, MetricOtherCores, Info, UnitCores, why),
			notMeasured(Machine, MetricOtherUtil, Utilization, UnitFraction, why),
			notMeasured(Machine, MetricOtherRunQueuePerCPU, Saturation, UnitCount, why))
		return append(out, loadReadings(fs, 0, -1)...), nil
	}
	cur := &machineSnap{at: now, cpu: ct}
	cur.procs, cur.err = fs.allStats()
	out = append(out, measured(Machine, MetricMachineCPUs, Info, float64(ct.cpus), UnitCount))
	out = append(out, p.busy(p.prev, cur)...)
	out = append(out, p.otherRunnable(fs, cur))
	p.prev = cur
	return append(out, loadReadings(fs, ct.cpus, ct.running)...), nil
}

// own is the set of PIDs of the test itself: knee, the targets, and every
// descendant of either (a target's workers, a target knee started).
func (p *MachineProbe) own(procs map[int]pidStat) (map[int]bool, error) {
	self, err := pidOf(p.Self)
	if err != nil {
		return nil, err
	}
	own := map[int]bool{self: true}
	for _, pid := range p.TargetPIDs {
		own[pid] = true
	}
	for pid := range procs {
		// Walk up the parents; the depth bound guards against a loop in a
		// tree that changed while it was read.
		for q, depth := pid, 0; q > 1 && depth < 64; depth++ {
			if own[q] {
				own[pid] = true
				break
			}
			st, ok := procs[q]
			if !ok {
				break
			}
			q = st.ppid
		}
	}
	return own, nil
}

// busy turns two readings of the machine into busy cores and, split by
// process, the rest of the machine's share.
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
			notMeasured(Machine, MetricMachineUtil, Info, UnitFraction, why),
			notMeasured(Machine, MetricOtherCores, Info, UnitCores, why),
			notMeasured(Machine, MetricOtherUtil, Utilization, UnitFraction, why)}
	}
	// The busy share of all CPU time is exact whatever the tick rate; times
	// the CPUs it is cores.
	util := (cur.cpu.busy - prev.cpu.busy) / (cur.cpu.total - prev.cpu.total)
	cpus := float64(cur.cpu.cpus)
	cores := util * cpus
	out := []Reading{measured(Machine, MetricMachineBusy, Info, cores, UnitCores),
		measured(Machine, MetricMachineUtil, Info, util, UnitFraction)}
	own, perProc, why := p.split(prev, cur)
	if why != "" {
		return append(out, notMeasured(Machine, MetricOtherCores, Info, UnitCores, why),
			notMeasured(Machine, MetricOtherUtil, Utilization, UnitFraction, why))
	}
	// Tick rounding can make own exceed busy by a hair: other load is never negative.
	other := max(cores-own, 0)
	out = append(out, measured(Machine, MetricOtherCores, Info, other, UnitCores),
		measured(Machine, MetricOtherUtil, Utilization, other/cpus, UnitFraction))
	return append(out, p.nameOthers(perProc)...)
}

// split is the test's own CPU between two samples, in cores, and every
// other command's; why says what kept it from being read.
func (p *MachineProbe) split(prev, cur *machineSnap) (own float64, others map[string]float64, why string) {
	switch {
	case len(p.TargetPIDs) == 0:
		return 0, nil, "no target PID given: other load would include the target"
	case cur.err != nil:
		return 0, nil, fmt.Sprintf("read processes: %v", cur.err)
	case prev.procs == nil:
		return 0, nil, fmt.Sprintf("read processes: %v", prev.err)
	}
	mine, err := p.own(cur.procs)
	if err != nil {
		return 0, nil, err.Error()
	}
	for _, pid := range p.TargetPIDs {
		a, okA := cur.procs[pid]
		b, okB := prev.procs[pid]
		switch {
		case !okA || !okB:
			return 0, nil, fmt.Sprintf("target pid %d is gone", pid)
		case a.cpu < b.cpu:
			return 0, nil, "target CPU counter went backwards (restarted?)"
		}
	}
	dt := cur.at.Sub(prev.at).Seconds()
	others = map[string]float64{}
	for pid, a := range cur.procs {
		b, ok := prev.procs[pid]
		if !ok || a.cpu < b.cpu {
			continue // started since the last sample, or a reused PID
		}
		used := (a.cpu - b.cpu) / dt
		if mine[pid] {
			own += used
		} else if used > 0 {
			others[a.comm] += used
		}
	}
	return own, others, ""
}

// nameOthers returns the other_cpu:COMM readings: the busiest commands
// that are neither the target nor knee, and every command named before.
func (p *MachineProbe) nameOthers(perProc map[string]float64) []Reading {
	comms := make([]string, 0, len(perProc))
	for c, v := range perProc {
		if v >= minNamedCores {
			comms = append(comms, c)
		}
	}
	slices.SortFunc(comms, func(a, b string) int {
		if c := cmp.Compare(perProc[b], perProc[a]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	for _, c := range comms {
		if len(p.named) < maxNamed && !slices.Contains(p.named, c) {
			p.named = append(p.named, c)
		}
	}
	out := make([]Reading, 0, len(p.named))
	for _, c := range p.named {
		out = append(out, measured(Machine, MetricOtherProcessPrefix+c, Info, perProc[c], UnitCores))
	}
	return out
}

// otherRunnable is the rest of the machine's runnable threads per CPU: the
// tasks the kernel counts runnable now (procs_running) less the runnable
// threads of the target and knee (the thread reading is one of knee's).
func (p *MachineProbe) otherRunnable(fs procFS, cur *machineSnap) Reading {
	nm := func(why string) Reading {
		return notMeasured(Machine, MetricOtherRunQueuePerCPU, Saturation, UnitCount, why)
	}
	switch {
	case len(p.TargetPIDs) == 0:
		return nm("no target PID given: other runnable threads would include the target's")
	case cur.err != nil:
		return nm(fmt.Sprintf("read processes: %v", cur.err))
	}
	mine, err := p.own(cur.procs)
	if err != nil {
		return nm(err.Error())
	}
	ownRunnable := 0
	for pid := range mine {
		n, err := fs.runnableThreads(pid)
		switch {
		case err == nil:
			ownRunnable += n
		case !errors.Is(err, errGone):
			return nm(fmt.Sprintf("read threads of pid %d: %v", pid, err))
		}
	}
	other := max(cur.cpu.running-ownRunnable, 0)
	return measured(Machine, MetricOtherRunQueuePerCPU, Saturation, float64(other)/float64(cur.cpu.cpus), UnitCount)
}

// loadReadings are context: the load average and run queue of the whole
// machine, the target and knee included. running < 0 when unknown.
func loadReadings(fs procFS, cpus, running int) []Reading {
	load1, err := fs.load1()
	out := []Reading{}
	switch {
	case err != nil:
		why := fmt.Sprintf("read /proc/loadavg: %v", err)
		out = append(out, notMeasured(Machine, MetricLoad1, Info, UnitCount, why),
			notMeasured(Machine, MetricLoadPerCPU, Info, UnitCount, why))
	case cpus <= 0:
		out = append(out, measured(Machine, MetricLoad1, Info, load1, UnitCount),
			notMeasured(Machine, MetricLoadPerCPU, Info, UnitCount, "CPU count unknown"))
	default:
		out = append(out, measured(Machine, MetricLoad1, Info, load1, UnitCount),
			measured(Machine, MetricLoadPerCPU, Info, load1/float64(cpus), UnitCount))
	}
	if cpus <= 0 || running < 0 {
		return append(out, notMeasured(Machine, MetricRunQueuePerCPU, Info, UnitCount, "CPU count unknown"))
	}
	// The runnable count includes the thread reading the file: leave it out.
	return append(out, measured(Machine, MetricRunQueuePerCPU, Info, float64(max(running-1, 0))/float64(cpus), UnitCount))
}

// GeneratorProbe reads knee itself: its own CPU and the send lag the caller
// measures (the caller owns the histograms and passes the last interval's
// p99 in). A generator that is short of CPU or late sending measures itself,
// not the target.
type GeneratorProbe struct {
	Root string // roots /proc; "" is "/"
	Self string // knee's PID; "" or "self" is this process
	CPUs int    // 0 means runtime.NumCPU()
	// SendLagP99 returns the last interval's send-lag p99, and false when
	// nothing was sent in it. nil: send lag is not measured.
	SendLagP99 func() (time.Duration, bool)

	prevAt  time.Time
	prevCPU float64
	hasPrev bool
}

// Name is "generator".
func (p *GeneratorProbe) Name() string { return "generator" }

// Sample reads knee's CPU from /proc/PID/stat and calls SendLagP99.
func (p *GeneratorProbe) Sample(_ context.Context, now time.Time) ([]Reading, error) {
	cores := notMeasured(Generator, MetricGeneratorCores, Info, UnitCores, whyFirstSample)
	util := notMeasured(Generator, MetricGeneratorUtil, Utilization, UnitFraction, whyFirstSample)
	self, err := pidOf(p.Self)
	var st pidStat
	if err == nil {
		st, err = procFS{p.Root}.pidStat(self)
	}
	switch {
	case err != nil:
		cores.NotMeasured = fmt.Sprintf("read own CPU: %v", err)
		util.NotMeasured = cores.NotMeasured
		p.hasPrev = false
	case p.hasPrev && now.After(p.prevAt) && st.cpu >= p.prevCPU:
		c := (st.cpu - p.prevCPU) / now.Sub(p.prevAt).Seconds()
		cores = measured(Generator, MetricGeneratorCores, Info, c, UnitCores)
		util = measured(Generator, MetricGeneratorUtil, Utilization, c/float64(cpusOr(p.CPUs)), UnitFraction)
	}
	if err == nil {
		p.prevAt, p.prevCPU, p.hasPrev = now, st.cpu, true
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
