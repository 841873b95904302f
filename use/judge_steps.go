package use

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// JudgeSteps is Judge over the step tables, with two refinements.
//
// A shared machine: the machine's saturation is judged on the rest of the
// machine only (MachineProbe discounts the target's and knee's own CPU and
// runnable threads). When the rest is saturated at the first step already,
// before the offered load could matter, what surrounds the target (the
// machine, and knee beside it, whose send lag then shows the same
// contention) says nothing about where the target's capacity ends. Both
// are set aside and the target's own resources are judged without them.
// The other processes are named with their share of CPU; "other work" is
// said only when there are some to name.
//
// A pool in front of a database: requests hold their connection while they
// wait for the database, so when both saturate at the same step the full
// pool is the database's consequence, however far past its (small)
// thresholds it is. The database is named and the pool listed beside it.
//
// Scheduling latency with idle CPU: Go's scheduling latency is the time a
// runnable goroutine waits to run, which includes the time the OS did not
// run the process's threads. At a step where the target used less than
// half its CPU (of its limit, or of the machine without one) its Ps were
// mostly idle, so no run queue of Go's formed: the wait was the CPU quota's
// throttling or other threads on the machine. The scheduler's signals at
// such a step are set aside (a probe of a noisy machine saw 16.6 ms p99 at
// 30 % CPU, naming the Go scheduler at a load the database served easily).
//
// What is set aside is said in SetAside and the summary, with its evidence.
func JudgeSteps(steps []Table, t Thresholds) Verdict {
	if t == nil {
		t = DefaultThresholds()
	}
	if len(steps) == 0 {
		return Judge(steps, t)
	}
	aside := map[Resource]bool{}
	var why, notes []string
	if machine, ok := steps[0].Row(Machine); ok {
		if busy := t.Signals(machine); len(busy) > 0 {
			aside[Machine], aside[Generator] = true, true
			by := "by processes knee could not name (neither the target nor knee)"
			if others := otherProcesses(machine); others != "" {
				by = "by other work: " + others
			}
			why = append(why, fmt.Sprintf("machine: saturated from the first step, before the offered load could matter (%s), %s; set aside, and every latency measured beside it is less certain", signalsText(busy), by))
			if lag := generatorSignals(steps, t); lag != "" {
				why = append(why, "generator: "+lag+"; on a machine this busy that is the same contention, so it is set aside with the machine")
			}
			notes = append(notes, "set aside: the machine, saturated from the first step "+by+", and the generator beside it")
		}
	}
	steps, idle := withoutIdleScheduler(steps, t)
	why = append(why, idle...)
	v := Judge(without(steps, aside), t)
	if v.Bottleneck == ConnPool && hasSignal(v.AlsoSaturated, Database) {
		pool := v.Evidence
		aside[ConnPool] = true
		if dv := Judge(without(steps, aside), t); dv.Bottleneck == Database && dv.Step == v.Step {
			dv.AlsoSaturated = append(dv.AlsoSaturated, pool...)
			why = append(why, fmt.Sprintf("connection pool: saturated at the same step (%s): requests hold their connection while they wait for the database, so the full pool is the database's consequence", signalsText(pool)))
			notes = append(notes, "the connection pool filled at the same step, as a consequence")
			v = dv
		}
	}
	v.SetAside = append(v.SetAside, why...)
	if len(notes) > 0 {
		v.Summary += "; " + strings.Join(notes, "; ")
	}
	return v
}

// idleSchedulerBelow is the target CPU utilization under which its Ps were
// mostly idle: scheduling latency there is the OS's, not Go's run queue.
const idleSchedulerBelow = 0.5

// withoutIdleScheduler removes the scheduler's row from the steps where it
// signals while the target's CPU was mostly idle, and says why for each.
func withoutIdleScheduler(steps []Table, t Thresholds) ([]Table, []string) {
	var out []Table
	var why []string
	for i, st := range steps {
		sched, ok := st.Row(Scheduler)
		if !ok {
			continue
		}
		sigs := t.Signals(sched)
		cpu, _ := st.Row(TargetCPU)
		u, measured := cpu.Utilization.Headline()
		if len(sigs) == 0 || !measured || u.Mean >= idleSchedulerBelow {
			continue
		}
		if out == nil {
			out = slices.Clone(steps)
		}
		out[i] = without([]Table{st}, map[Resource]bool{Scheduler: true})[0]
		why = append(why, fmt.Sprintf("Go scheduler: %s at %s while the target used %s of its CPU: with its Ps mostly idle the wait was the OS not running its threads (CPU quota or other threads), not Go's run queue; set aside at that step", signalsText(sigs), st.Label, FormatValue(u.Mean, u.Unit)))
	}
	if out == nil {
		return steps, nil
	}
	return out, why
}

// without returns the tables with the rows of the aside resources removed.
func without(steps []Table, aside map[Resource]bool) []Table {
	if len(aside) == 0 {
		return steps
	}
	out := make([]Table, len(steps))
	for i, st := range steps {
		out[i] = st
		out[i].Rows = nil
		for _, r := range st.Rows {
			if !aside[r.Resource] {
				out[i].Rows = append(out[i].Rows, r)
			}
		}
	}
	return out
}

func hasSignal(sigs []Signal, res Resource) bool {
	for _, s := range sigs {
		if s.Resource == res {
			return true
		}
	}
	return false
}

// generatorSignals says at which steps the generator was past a threshold,
// and the worst evidence; "" when it never was.
func generatorSignals(steps []Table, t Thresholds) string {
	var at []string
	var worst Signal
	for _, st := range steps {
		r, ok := st.Row(Generator)
		if !ok {
			continue
		}
		sigs := t.Signals(r)
		if len(sigs) > 0 {
			at = append(at, st.Label)
		}
		for _, s := range sigs {
			if s.Severity > worst.Severity {
				worst = s
			}
		}
	}
	if len(at) == 0 {
		return ""
	}
	return fmt.Sprintf("past its threshold at %d of %d steps (worst: %s)", len(at), len(steps), worst)
}

// Spread lists, in step order, the first step at which each resource of
// the target other than the bottleneck saturated.
func Spread(steps []Table, t Thresholds, bottleneck Resource) []string {
	if t == nil {
		t = DefaultThresholds()
	}
	seen := map[Resource]bool{bottleneck: true, Machine: true, Generator: true}
	var out []string
	for _, st := range steps {
		for _, r := range st.Rows {
			if seen[r.Resource] {
				continue
			}
			if sigs := t.Signals(r); len(sigs) > 0 {
				seen[r.Resource] = true
				out = append(out, fmt.Sprintf("%s at %s: %s", r.Resource.Title(), st.Label, signalsText(sigs)))
			}
		}
	}
	return out
}

func signalsText(sigs []Signal) string {
	parts := make([]string, len(sigs))
	for i, s := range sigs {
		parts[i] = s.String()
	}
	return strings.Join(parts, ", ")
}

// otherProcesses names the commands on the machine that are neither the
// target nor knee, busiest first, with their mean CPU over the step: "stress
// 0.98 cores, postgres 0.10 cores"; "" when none used any.
func otherProcesses(machine Row) string {
	type named struct {
		comm  string
		cores float64
	}
	var ps []named
	for _, s := range machine.Info {
		comm, ok := strings.CutPrefix(s.Metric, MetricOtherProcessPrefix)
		if ok && s.Measured() && s.Mean >= MinNamedCores/2 {
			ps = append(ps, named{comm, s.Mean})
		}
	}
	slices.SortStableFunc(ps, func(a, b named) int { return cmp.Compare(b.cores, a.cores) })
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = p.comm + " " + FormatValue(p.cores, UnitCores)
	}
	return strings.Join(parts, ", ")
}
