package probe

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"github.com/knee-dev/knee/internal/proc"
	"github.com/knee-dev/knee/use"
	"slices"
	"strings"
	"time"
)

// Naming other processes: a command is named once it uses at least
// use.MinNamedCores over a sample, and at most maxNamed commands are
// followed (once named, a command keeps its reading, 0 when idle, so its
// mean over a step is over the same samples as the machine's).
const maxNamed = 5

// Machine reads the machine: its CPUs, how busy they are, and how much
// of that is the rest of the machine — processes that are neither the
// target (TargetPIDs and their descendants) nor knee (Self and its
// descendants). Only the rest is judged: a target and a generator that
// keep the machine busy are the test itself, not a saturated machine. The
// rest's CPU (other_utilization), its runnable threads (other_runq_per_cpu)
// and the busiest other commands by name (other_cpu:COMM) are read; the
// whole machine's load, run queue and busy CPU are context.
type Machine struct {
	Root       string // roots /proc; "" is "/"
	TargetPIDs []int  // the target; other load is what neither it nor knee uses
	Self       string // knee's PID; "" or "self" is this process

	prev  *machineSnap
	named []string // commands named so far, in the order first named
}

type machineSnap struct {
	at    time.Time
	cpu   proc.CPUTimes
	procs map[int]proc.Stat // every process; nil when unreadable
	err   error             // why procs is nil
}

// Name is "machine".
func (p *Machine) Name() string { return "machine" }

// Sample reads /proc/stat, /proc/loadavg, every /proc/PID/stat, and the
// threads of the target and knee.
func (p *Machine) Sample(_ context.Context, now time.Time) ([]use.Reading, error) {
	fs := proc.FS{Root: p.Root}
	var out []use.Reading
	ct, err := fs.CPUTimes()
	if err != nil {
		p.prev = nil
		why := fmt.Sprintf("read /proc/stat: %v", err)
		out = append(out, notMeasured(use.Machine, use.MetricMachineCPUs, use.Info, use.UnitCount, why),
			notMeasured(use.Machine, use.MetricMachineBusy, use.Info, use.UnitCores, why),
			notMeasured(use.Machine, use.MetricMachineUtil, use.Info, use.UnitFraction, why),
			notMeasured(use.Machine, use.MetricOtherCores, use.Info, use.UnitCores, why),
			notMeasured(use.Machine, use.MetricOtherUtil, use.Utilization, use.UnitFraction, why),
			notMeasured(use.Machine, use.MetricOtherRunQueuePerCPU, use.Saturation, use.UnitCount, why))
		return append(out, loadReadings(fs, 0, -1)...), nil
	}
	cur := &machineSnap{at: now, cpu: ct}
	cur.procs, cur.err = fs.AllStats()
	out = append(out, measured(use.Machine, use.MetricMachineCPUs, use.Info, float64(ct.CPUs), use.UnitCount))
	out = append(out, p.busy(p.prev, cur)...)
	out = append(out, p.otherRunnable(fs, cur))
	p.prev = cur
	return append(out, loadReadings(fs, ct.CPUs, ct.Running)...), nil
}

// own is the set of PIDs of the test itself: knee, the targets, and every
// descendant of either (a target's workers, a target knee started).
func (p *Machine) own(procs map[int]proc.Stat) (map[int]bool, error) {
	self, err := proc.PIDOf(p.Self)
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
			q = st.PPID
		}
	}
	return own, nil
}

// busy turns two readings of the machine into busy cores and, split by
// process, the rest of the machine's share.
func (p *Machine) busy(prev, cur *machineSnap) []use.Reading {
	why := ""
	switch {
	case prev == nil:
		why = whyFirstSample
	case cur.cpu.Total <= prev.cpu.Total || cur.cpu.Busy < prev.cpu.Busy || !cur.at.After(prev.at):
		why = "no CPU time passed since the previous sample"
	}
	if why != "" {
		return []use.Reading{notMeasured(use.Machine, use.MetricMachineBusy, use.Info, use.UnitCores, why),
			notMeasured(use.Machine, use.MetricMachineUtil, use.Info, use.UnitFraction, why),
			notMeasured(use.Machine, use.MetricOtherCores, use.Info, use.UnitCores, why),
			notMeasured(use.Machine, use.MetricOtherUtil, use.Utilization, use.UnitFraction, why)}
	}
	// The busy share of all CPU time is exact whatever the tick rate; times
	// the CPUs it is cores.
	util := (cur.cpu.Busy - prev.cpu.Busy) / (cur.cpu.Total - prev.cpu.Total)
	cpus := float64(cur.cpu.CPUs)
	cores := util * cpus
	out := []use.Reading{measured(use.Machine, use.MetricMachineBusy, use.Info, cores, use.UnitCores),
		measured(use.Machine, use.MetricMachineUtil, use.Info, util, use.UnitFraction)}
	own, perProc, why := p.split(prev, cur)
	if why != "" {
		return append(out, notMeasured(use.Machine, use.MetricOtherCores, use.Info, use.UnitCores, why),
			notMeasured(use.Machine, use.MetricOtherUtil, use.Utilization, use.UnitFraction, why))
	}
	// Tick rounding can make own exceed busy by a hair: other load is never negative.
	other := max(cores-own, 0)
	out = append(out, measured(use.Machine, use.MetricOtherCores, use.Info, other, use.UnitCores),
		measured(use.Machine, use.MetricOtherUtil, use.Utilization, other/cpus, use.UnitFraction))
	return append(out, p.nameOthers(perProc)...)
}

// split is the test's own CPU between two samples, in cores, and every
// other command's; why says what kept it from being read.
func (p *Machine) split(prev, cur *machineSnap) (own float64, others map[string]float64, why string) {
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
		case a.CPU < b.CPU:
			return 0, nil, "target CPU counter went backwards (restarted?)"
		}
	}
	dt := cur.at.Sub(prev.at).Seconds()
	others = map[string]float64{}
	for pid, a := range cur.procs {
		b, ok := prev.procs[pid]
		if !ok || a.CPU < b.CPU {
			continue // started since the last sample, or a reused PID
		}
		used := (a.CPU - b.CPU) / dt
		if mine[pid] {
			own += used
		} else if used > 0 {
			others[a.Comm] += used
		}
	}
	return own, others, ""
}

// nameOthers returns the other_cpu:COMM readings: the busiest commands
// that are neither the target nor knee, and every command named before.
func (p *Machine) nameOthers(perProc map[string]float64) []use.Reading {
	comms := make([]string, 0, len(perProc))
	for c, v := range perProc {
		if v >= use.MinNamedCores {
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
	out := make([]use.Reading, 0, len(p.named))
	for _, c := range p.named {
		out = append(out, measured(use.Machine, use.MetricOtherProcessPrefix+c, use.Info, perProc[c], use.UnitCores))
	}
	return out
}

// otherRunnable is the rest of the machine's runnable threads per CPU: the
// tasks the kernel counts runnable now (procs_running) less the runnable
// threads of the target and knee (the thread reading is one of knee's).
func (p *Machine) otherRunnable(fs proc.FS, cur *machineSnap) use.Reading {
	nm := func(why string) use.Reading {
		return notMeasured(use.Machine, use.MetricOtherRunQueuePerCPU, use.Saturation, use.UnitCount, why)
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
		n, err := fs.RunnableThreads(pid)
		switch {
		case err == nil:
			ownRunnable += n
		case !errors.Is(err, proc.ErrGone):
			return nm(fmt.Sprintf("read threads of pid %d: %v", pid, err))
		}
	}
	other := max(cur.cpu.Running-ownRunnable, 0)
	return measured(use.Machine, use.MetricOtherRunQueuePerCPU, use.Saturation, float64(other)/float64(cur.cpu.CPUs), use.UnitCount)
}

// loadReadings are context: the load average and run queue of the whole
// machine, the target and knee included. running < 0 when unknown.
func loadReadings(fs proc.FS, cpus, running int) []use.Reading {
	la, err := fs.LoadAvg()
	load1 := la[0]
	out := []use.Reading{}
	switch {
	case err != nil:
		why := fmt.Sprintf("read /proc/loadavg: %v", err)
		out = append(out, notMeasured(use.Machine, use.MetricLoad1, use.Info, use.UnitCount, why),
			notMeasured(use.Machine, use.MetricLoadPerCPU, use.Info, use.UnitCount, why))
	case cpus <= 0:
		out = append(out, measured(use.Machine, use.MetricLoad1, use.Info, load1, use.UnitCount),
			notMeasured(use.Machine, use.MetricLoadPerCPU, use.Info, use.UnitCount, "CPU count unknown"))
	default:
		out = append(out, measured(use.Machine, use.MetricLoad1, use.Info, load1, use.UnitCount),
			measured(use.Machine, use.MetricLoadPerCPU, use.Info, load1/float64(cpus), use.UnitCount))
	}
	if cpus <= 0 || running < 0 {
		return append(out, notMeasured(use.Machine, use.MetricRunQueuePerCPU, use.Info, use.UnitCount, "CPU count unknown"))
	}
	// The runnable count includes the thread reading the file: leave it out.
	return append(out, measured(use.Machine, use.MetricRunQueuePerCPU, use.Info, float64(max(running-1, 0))/float64(cpus), use.UnitCount))
}

// Generator reads knee itself: its own CPU and the send lag the caller
// measures (the caller owns the histograms and passes the last interval's
// p99 in). A generator that is short of CPU or late sending measures itself,
// not the target.
type Generator struct {
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
func (p *Generator) Name() string { return "generator" }

// Sample reads knee's CPU from /proc/PID/stat and calls SendLagP99.
func (p *Generator) Sample(_ context.Context, now time.Time) ([]use.Reading, error) {
	cores := notMeasured(use.Generator, use.MetricGeneratorCores, use.Info, use.UnitCores, whyFirstSample)
	util := notMeasured(use.Generator, use.MetricGeneratorUtil, use.Utilization, use.UnitFraction, whyFirstSample)
	self, err := proc.PIDOf(p.Self)
	var st proc.Stat
	if err == nil {
		st, err = proc.FS{Root: p.Root}.Stat(self)
	}
	switch {
	case err != nil:
		cores.NotMeasured = fmt.Sprintf("read own CPU: %v", err)
		util.NotMeasured = cores.NotMeasured
		p.hasPrev = false
	case p.hasPrev && now.After(p.prevAt) && st.CPU >= p.prevCPU:
		c := (st.CPU - p.prevCPU) / now.Sub(p.prevAt).Seconds()
		cores = measured(use.Generator, use.MetricGeneratorCores, use.Info, c, use.UnitCores)
		util = measured(use.Generator, use.MetricGeneratorUtil, use.Utilization, c/float64(cpusOr(p.CPUs)), use.UnitFraction)
	}
	if err == nil {
		p.prevAt, p.prevCPU, p.hasPrev = now, st.CPU, true
	}
	lag := notMeasured(use.Generator, use.MetricSendLagP99, use.Saturation, use.UnitSeconds, "no send-lag source given")
	if p.SendLagP99 != nil {
		if d, ok := p.SendLagP99(); ok {
			lag = measured(use.Generator, use.MetricSendLagP99, use.Saturation, d.Seconds(), use.UnitSeconds)
		} else {
			lag.NotMeasured = "nothing sent in the last interval"
		}
	}
	return []use.Reading{cores, util, lag}, nil
}
