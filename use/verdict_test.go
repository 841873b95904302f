package use

import (
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
)

// at builds one sample at second s.
func at(s float64, probe string, rs ...Reading) Sample {
	return Sample{At: time.Duration(s * float64(time.Second)), Probe: probe, Readings: rs}
}

func cpuReadings(cores, limit, throttled float64) []Reading {
	return []Reading{
		measured(TargetCPU, MetricCPUCores, Info, cores, UnitCores),
		measured(TargetCPU, MetricCPULimit, Info, limit, UnitCores),
		measured(TargetCPU, MetricCPUUtilization, Utilization, cores/limit, UnitFraction),
		measured(TargetCPU, MetricThrottledPeriods, Saturation, throttled, UnitFraction),
	}
}

func poolReadings(util, waitTime, timeouts float64) []Reading {
	return []Reading{
		measured(ConnPool, MetricPoolUtil, Utilization, util, UnitFraction),
		measured(ConnPool, MetricPoolWaitTime, Saturation, waitTime, UnitSecondsPerSec),
		measured(ConnPool, MetricPoolTimeouts, Errors, timeouts, UnitPerSec),
	}
}

func otherReadings(lag float64) []Reading {
	return []Reading{
		measured(Scheduler, MetricSchedP99, Saturation, 0.0002, UnitSeconds),
		measured(HTTPServer, MetricInFlight, Saturation, 3, UnitCount),
		notMeasured(Database, MetricPGConnUtilization, Utilization, UnitFraction, "database unreachable: refused"),
		measured(Machine, MetricMachineUtil, Utilization, 0.3, UnitFraction),
		measured(Machine, MetricRunQueuePerCPU, Saturation, 0.5, UnitCount),
		measured(Generator, MetricGeneratorUtil, Utilization, 0.05, UnitFraction),
		measured(Generator, MetricSendLagP99, Saturation, lag, UnitSeconds),
	}
}

// step is the tables of one step: two samples of each probe.
func step(i int, cpu, pool [2][]Reading, lag float64) Table {
	var ss []Sample
	for k := range 2 {
		s := float64(10*i + k)
		ss = append(ss, at(s, "target-cpu", cpu[k]...), at(s, "metrics", pool[k]...), at(s, "other", otherReadings(lag)...))
	}
	return Summarize(ss, time.Duration(10*i)*time.Second, time.Duration(10*i+10)*time.Second)
}

func TestSummarize(t *testing.T) {
	samples := []Sample{
		at(0, "p", measured(Machine, MetricMachineUtil, Utilization, 0.2, UnitFraction), notMeasured(Machine, MetricLoad1, Info, "", "first")),
		at(1, "p", measured(Machine, MetricMachineUtil, Utilization, 0.4, UnitFraction), notMeasured(Machine, MetricLoad1, Info, "", "second")),
		at(2, "p", measured(Machine, MetricMachineUtil, Utilization, 0.9, UnitFraction)), // outside [0, 2s)
		{At: time.Second, Probe: "q", Error: "boom"},
		at(1, "custom", measured("disk", "busy", Utilization, 0.5, UnitFraction)),
	}
	tab := Summarize(samples, 0, 2*time.Second)
	var names []Resource
	for _, r := range tab.Rows {
		names = append(names, r.Resource)
	}
	if want := append(Resources(), "disk"); !reflect.DeepEqual(names, want) {
		t.Errorf("rows %v, want %v", names, want)
	}
	m, _ := tab.Row(Machine)
	u, ok := m.Utilization.Headline()
	if !ok || math.Abs(u.Mean-0.3) > 1e-12 || u.Max != 0.4 || u.N != 2 {
		t.Errorf("machine utilization = %+v, want mean 0.3 max 0.4 over 2", u)
	}
	if m.Utilization.Text != "CPU busy 30%, max 40%" {
		t.Errorf("text %q", m.Utilization.Text)
	}
	if len(m.Info) != 1 || m.Info[0].Measured() || m.Info[0].NotMeasured != "second" {
		t.Errorf("load1 = %+v, want not measured with the last reason", m.Info)
	}
	// A cell no probe reads says so in two words beside measured ones; a
	// row with nothing measured names its resource once.
	if m.Errors.Text != "not measured" {
		t.Errorf("errors text %q, want %q", m.Errors.Text, "not measured")
	}
	g, _ := tab.Row(Generator)
	if g.Measured() {
		t.Errorf("generator measured without readings: %+v", g)
	}
	if got := []string{g.Utilization.Text, g.Saturation.Text, g.Errors.Text}; !reflect.DeepEqual(got, []string{"not measured: no probe reads the generator", "-", "-"}) {
		t.Errorf("unmeasured row %q", got)
	}
	if !reflect.DeepEqual(tab.Problems, []string{"probe q failed in 1 samples: boom"}) {
		t.Errorf("problems %q", tab.Problems)
	}
}

func TestJudgePoolBound(t *testing.T) {
	steps := []Table{
		step(0, [2][]Reading{cpuReadings(0.1, 0.5, 0), cpuReadings(0.1, 0.5, 0)},
			[2][]Reading{poolReadings(0.3, 0, 0), poolReadings(0.3, 0, 0)}, 0.0005),
		// The pool runs dry: full, 0.4 requests waiting on average, 2
		// timeouts a second; the CPU sits at 0.14 of 0.5.
		step(1, [2][]Reading{cpuReadings(0.12, 0.5, 0.02), cpuReadings(0.16, 0.5, 0.02)},
			[2][]Reading{poolReadings(1, 0.3, 2), poolReadings(1, 0.5, 2)}, 0.0005),
	}
	v := Judge(steps, nil)
	if v.Bottleneck != ConnPool || v.Step != 1 || len(v.AlsoSaturated) != 0 {
		t.Fatalf("verdict %+v, want the pool at step 2 alone", v)
	}
	wantEvidence := "connections in use 100% (at or over 90%), waiting for a connection 0.4 s/s (over 0.05 s/s), pool timeouts 2/s (over 0/s)"
	if got := joinSignals(v.Evidence); got != wantEvidence {
		t.Errorf("evidence %q\nwant %q", got, wantEvidence)
	}
	// Each line says one thing: ruled out with its values, or not measured
	// (and so not ruled out); a name is never followed by its own label.
	wantRuledOut := []string{
		"target CPU: 0.14 of 0.50 cores (28%), max 32%, throttled periods 2.0%",
		"Go scheduler: scheduling latency p99 0.2 ms",
		"HTTP server: requests in flight 3",
		"machine: CPU busy 30%, run queue per CPU 0.5",
		"generator: CPU 5.0%, send lag p99 0.5 ms",
	}
	if !reflect.DeepEqual(v.RuledOut, wantRuledOut) {
		t.Errorf("ruled out:\n%s\nwant:\n%s", strings.Join(v.RuledOut, "\n"), strings.Join(wantRuledOut, "\n"))
	}
	if want := []string{"database (database unreachable: refused)"}; !reflect.DeepEqual(v.NotMeasured, want) || len(v.SetAside) != 0 {
		t.Errorf("not measured %q, set aside %q; want %q and none", v.NotMeasured, v.SetAside, want)
	}
	if !strings.HasPrefix(v.Summary, "bottleneck: connection pool, saturated first at step 2: ") {
		t.Errorf("summary %q", v.Summary)
	}
}

func TestJudgeCPUBound(t *testing.T) {
	steps := []Table{
		step(0, [2][]Reading{cpuReadings(0.2, 0.5, 0), cpuReadings(0.2, 0.5, 0)},
			[2][]Reading{poolReadings(0.1, 0, 0), poolReadings(0.1, 0, 0)}, 0.0005),
		// The CPU is at its limit and throttled in 30 % of periods; the pool
		// has room.
		step(1, [2][]Reading{cpuReadings(0.49, 0.5, 0.3), cpuReadings(0.49, 0.5, 0.3)},
			[2][]Reading{poolReadings(0.4, 0, 0), poolReadings(0.4, 0, 0)}, 0.0005),
		// Later steps do not change which saturated first.
		step(2, [2][]Reading{cpuReadings(0.5, 0.5, 0.5), cpuReadings(0.5, 0.5, 0.5)},
			[2][]Reading{poolReadings(1, 2, 5), poolReadings(1, 2, 5)}, 0.0005),
	}
	v := Judge(steps, DefaultThresholds())
	if v.Bottleneck != TargetCPU || v.Step != 1 {
		t.Fatalf("verdict %+v, want target CPU at step 2", v)
	}
	if got := joinSignals(v.Evidence); got != "CPU 98% (at or over 90%), throttled periods 30% (over 5.0%)" {
		t.Errorf("evidence %q", got)
	}
	if v.RuledOut[2] != "connection pool: connections in use 40%, waiting for a connection 0 s/s" {
		t.Errorf("pool ruled out as %q", v.RuledOut[2])
	}
}

func TestJudgeNothingSaturated(t *testing.T) {
	calm := func(i int, lag float64) Table {
		return step(i, [2][]Reading{cpuReadings(0.1, 0.5, 0), cpuReadings(0.1, 0.5, 0)},
			[2][]Reading{poolReadings(0.2, 0, 0), poolReadings(0.2, 0, 0)}, lag)
	}
	tests := []struct {
		name string
		lag  float64
		want string
	}{
		{"quiet generator", 0.0005, "no resource saturated in 2 steps, up to step 2: the target kept up"},
		{"lagging generator", 0.004, "no resource saturated in 2 steps, up to step 2: the target kept up; but the generator's send lag p99 reached 4 ms: check the generator before trusting the highest rates"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := Judge([]Table{calm(0, 0.0001), calm(1, tc.lag)}, nil)
			if v.Bottleneck != "" || v.Step != -1 || v.Summary != tc.want || len(v.RuledOut) != 6 || len(v.NotMeasured) != 1 {
				t.Errorf("verdict %+v\nwant summary %q", v, tc.want)
			}
		})
	}
	if v := Judge(nil, nil); v.Summary != "no steps to judge" {
		t.Errorf("no steps: %+v", v)
	}
}

func TestJudgeGeneratorBound(t *testing.T) {
	s := step(0, [2][]Reading{cpuReadings(0.1, 0.5, 0), cpuReadings(0.1, 0.5, 0)},
		[2][]Reading{poolReadings(0.2, 0, 0), poolReadings(0.2, 0, 0)}, 0.05)
	v := Judge([]Table{s}, nil)
	if v.Bottleneck != Generator || !strings.Contains(v.Summary, "measured the generator, not the target") {
		t.Errorf("verdict %+v", v)
	}
}
