package use_test

import (
	"strings"
	"testing"
	"time"

	"github.com/knee-dev/knee/use"
)

func stepTable(label string, readings ...use.Reading) use.Table {
	tab := use.Summarize([]use.Sample{{At: time.Second, Probe: "p", Readings: readings}}, 0, 0)
	tab.Label = label
	return tab
}

func reading(res use.Resource, metric string, kind use.Kind, v float64, unit string) use.Reading {
	return use.Reading{Resource: res, Metric: metric, Kind: kind, Value: v, Unit: unit}
}

func TestJudgeStepsSetsABusyMachineAside(t *testing.T) {
	// Processes that are neither the target nor knee use 80 % of the
	// machine, stress most of it, and have 3 runnable threads per CPU.
	busy := []use.Reading{
		reading(use.Machine, use.MetricMachineUtil, use.Info, 1, use.UnitFraction),
		reading(use.Machine, use.MetricOtherUtil, use.Utilization, 0.8, use.UnitFraction),
		reading(use.Machine, use.MetricOtherRunQueuePerCPU, use.Saturation, 3, use.UnitCount),
		reading(use.Machine, use.MetricOtherProcessPrefix+"stress", use.Info, 1.5, use.UnitCores),
		reading(use.Machine, use.MetricOtherProcessPrefix+"postgres", use.Info, 0.1, use.UnitCores),
		reading(use.Generator, use.MetricSendLagP99, use.Saturation, 0.02, use.UnitSeconds),
	}
	quiet := []use.Reading{
		reading(use.Machine, use.MetricMachineUtil, use.Info, 0.3, use.UnitFraction),
		reading(use.Machine, use.MetricOtherUtil, use.Utilization, 0.05, use.UnitFraction),
		reading(use.Generator, use.MetricSendLagP99, use.Saturation, 0.001, use.UnitSeconds),
	}
	db := func(waiting float64) use.Reading {
		return reading(use.Database, use.MetricDBQueueWaiting, use.Saturation, waiting, use.UnitCount)
	}
	pool := func(wait float64) use.Reading {
		return reading(use.ConnPool, use.MetricPoolWaitTime, use.Saturation, wait, use.UnitSecondsPerSec)
	}
	// The database queues from step 2 (1.6 > 0.5), the pool waits from step 3.
	steps := func(around []use.Reading) []use.Table {
		return []use.Table{
			stepTable("step 1: 50 req/s", append([]use.Reading{db(0.1), pool(0)}, around...)...),
			stepTable("step 2: 80 req/s", append([]use.Reading{db(1.6), pool(0)}, around...)...),
			stepTable("step 3: 140 req/s", append([]use.Reading{db(19), pool(40)}, around...)...),
		}
	}
	t.Run("busy machine", func(t *testing.T) {
		if v := use.Judge(steps(busy), nil); v.Bottleneck != use.Machine {
			t.Fatalf("use.Judge named %s; the case needs it to name the machine", v.Bottleneck)
		} else if !strings.HasSuffix(v.Summary, "; other work on the machine (neither the target nor knee): stress 1.50 cores, postgres 0.10 cores") {
			t.Errorf("use.Judge's summary does not name the other work: %s", v.Summary)
		}
		v := use.JudgeSteps(steps(busy), nil)
		if v.Bottleneck != use.Database || v.Step != 1 {
			t.Fatalf("verdict %s at step %d, want the database at step 2: %s", v.Bottleneck, v.Step+1, v.Summary)
		}
		all := strings.Join(v.SetAside, "\n")
		for _, w := range []string{"machine: saturated from the first step", "by other work: stress 1.50 cores, postgres 0.10 cores", "generator: past its threshold at 3 of 3 steps"} {
			if !strings.Contains(all, w) {
				t.Errorf("set aside lacks %q:\n%s", w, all)
			}
		}
		if !strings.Contains(v.Summary, "set aside: the machine") {
			t.Errorf("summary %q does not say the machine was set aside", v.Summary)
		}
	})
	t.Run("pool and database at once", func(t *testing.T) {
		// The pool is much further past its threshold (40/0.05 = 800 times)
		// than the database (19/0.5 = 38 times), but it only fills because
		// requests hold their connection while they wait for the database.
		tabs := []use.Table{
			stepTable("step 1: 50 req/s", append([]use.Reading{db(0), pool(0)}, quiet...)...),
			stepTable("step 2: 140 req/s", append([]use.Reading{db(19), pool(40)}, quiet...)...),
		}
		if v := use.Judge(tabs, nil); v.Bottleneck != use.ConnPool {
			t.Fatalf("use.Judge named %s; the case needs it to name the pool", v.Bottleneck)
		}
		v := use.JudgeSteps(tabs, nil)
		if v.Bottleneck != use.Database || v.Step != 1 || !hasResource(v.AlsoSaturated, use.ConnPool) {
			t.Fatalf("verdict %s at step %d, also %v: want the database at step 2, the pool beside it", v.Bottleneck, v.Step+1, v.AlsoSaturated)
		}
		if all := strings.Join(v.SetAside, "\n"); !strings.Contains(all, "the full pool is the database's consequence") {
			t.Errorf("ruled out does not explain the pool:\n%s", all)
		}
	})
	t.Run("quiet machine", func(t *testing.T) {
		got, want := use.JudgeSteps(steps(quiet), nil), use.Judge(steps(quiet), nil)
		if got.Bottleneck != use.Database || got.Step != 1 || got.Summary != want.Summary {
			t.Errorf("JudgeSteps %q, want use.Judge's %q", got.Summary, want.Summary)
		}
	})
}

func hasResource(sigs []use.Signal, res use.Resource) bool {
	for _, s := range sigs {
		if s.Resource == res {
			return true
		}
	}
	return false
}

// TestJudgeStepsUnnamedSaturation: the rest of the machine is saturated but
// no process could be named; the verdict says so and blames no "other work".
func TestJudgeStepsUnnamedSaturation(t *testing.T) {
	machine := reading(use.Machine, use.MetricOtherRunQueuePerCPU, use.Saturation, 2, use.UnitCount)
	db := func(w float64) use.Reading {
		return reading(use.Database, use.MetricDBQueueWaiting, use.Saturation, w, use.UnitCount)
	}
	v := use.JudgeSteps([]use.Table{stepTable("step 1", machine, db(0)), stepTable("step 2", machine, db(2))}, nil)
	text := v.Summary + "\n" + strings.Join(v.SetAside, "\n")
	if !strings.Contains(text, "by processes knee could not name") || strings.Contains(text, "other work") {
		t.Errorf("verdict should set the machine aside without blaming unnamed \"other work\":\n%s", text)
	}
}

// Scheduling latency past its threshold names the Go scheduler only where
// the target's CPU was busy enough for Go's run queue to form.
func TestJudgeStepsSchedulerLatencyWithIdleCPU(t *testing.T) {
	step := func(label string, cpu, sched, waiting float64) use.Table {
		return stepTable(label,
			reading(use.TargetCPU, use.MetricCPUUtilization, use.Utilization, cpu, use.UnitFraction),
			reading(use.Scheduler, use.MetricSchedP99, use.Saturation, sched, use.UnitSeconds),
			reading(use.Database, use.MetricDBQueueWaiting, use.Saturation, waiting, use.UnitCount))
	}
	tests := []struct {
		name     string
		steps    []use.Table
		want     use.Resource
		wantStep int
		setAside string // in SetAside, or "" for no scheduler line
	}{
		{"latency at 30% CPU is the OS's", []use.Table{
			step("step 1: 80 req/s", 0.30, 0.0166, 0.25),
			step("step 2: 140 req/s", 0.45, 0.004, 12),
		}, use.Database, 1, "Go scheduler: scheduling latency p99 16.6 ms (over 10 ms) at step 1: 80 req/s while the target used 30% of its CPU"},
		{"latency at 70% CPU is Go's run queue", []use.Table{
			step("step 1: 80 req/s", 0.70, 0.0166, 0.25),
			step("step 2: 140 req/s", 0.85, 0.004, 12),
		}, use.Scheduler, 0, ""},
		{"no latency, nothing said", []use.Table{
			step("step 1: 80 req/s", 0.30, 0.001, 0.25),
			step("step 2: 140 req/s", 0.45, 0.001, 12),
		}, use.Database, 1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := use.JudgeSteps(tt.steps, nil)
			if v.Bottleneck != tt.want || v.Step != tt.wantStep {
				t.Fatalf("verdict %s at step %d, want %s at step %d: %s", v.Bottleneck, v.Step+1, tt.want, tt.wantStep+1, v.Summary)
			}
			all := strings.Join(v.SetAside, "\n")
			if tt.setAside != "" && !strings.Contains(all, tt.setAside) {
				t.Errorf("set aside lacks %q:\n%s", tt.setAside, all)
			}
			if tt.setAside == "" && strings.Contains(all, "Go scheduler:") {
				t.Errorf("the scheduler set aside without cause:\n%s", all)
			}
		})
	}
}
