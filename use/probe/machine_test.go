package probe

import (
	"context"
	"fmt"
	"github.com/knee-dev/knee/use"
	"strings"
	"testing"
	"time"

	"github.com/knee-dev/knee/internal/kneetest"
)

// procLine is a /proc/PID/stat line with a parent, a state and CPU ticks
// (utime; stime 0); the other fields are zero.
func procLine(pid, ppid int, comm string, state byte, ticks int) string {
	f := make([]string, 50) // fields 3..52
	for i := range f {
		f[i] = "0"
	}
	f[0], f[1], f[11] = string(state), fmt.Sprint(ppid), fmt.Sprint(ticks)
	return fmt.Sprintf("%d (%s) %s\n", pid, comm, strings.Join(f, " "))
}

// fakeProc is one process of a fake /proc: its CPU ticks at the two
// samples and the states of its threads.
type fakeProc struct {
	pid, ppid      int
	comm           string
	ticks0, ticks1 int
	threads        string // one state letter per thread, e.g. "RRS"
}

// machineTree writes a 2-CPU /proc at one of two samples (at = 0 or 1):
// /proc/stat with busy and total ticks, procs_running, and every process.
func machineTree(t *testing.T, root string, at int, busy, total, running int, procs []fakeProc) {
	t.Helper()
	files := map[string]string{
		"proc/stat": fmt.Sprintf("cpu  %d 0 0 %d 0 0 0 0 0 0\ncpu0 1 1 1 1\ncpu1 1 1 1 1\nintr 5\nprocs_running %d\nprocs_blocked 0\n",
			busy, total-busy, running),
		"proc/loadavg": "3.00 2.00 1.00 5/300 999\n",
	}
	for _, p := range procs {
		ticks := p.ticks0
		if at == 1 {
			ticks = p.ticks1
		}
		files[fmt.Sprintf("proc/%d/stat", p.pid)] = procLine(p.pid, p.ppid, p.comm, 'S', ticks)
		for i, st := range p.threads {
			tid := p.pid*100 + i
			files[fmt.Sprintf("proc/%d/task/%d/stat", p.pid, tid)] = procLine(tid, p.ppid, p.comm, byte(st), 0)
		}
	}
	kneetest.WriteFiles(t, root, files)
}

// The test itself: knee (pid 50), the target (42) and a worker the target
// started (43). Over 5 s knee uses 2.5 s (0.5 cores), the target 1.5 s and
// its worker 1 s (0.5 cores together).
var testItself = []fakeProc{
	{pid: 50, ppid: 1, comm: "knee", ticks0: 100, ticks1: 350, threads: "RRS"},
	{pid: 42, ppid: 1, comm: "bookstore", ticks0: 1000, ticks1: 1150, threads: "RS"},
	{pid: 43, ppid: 42, comm: "bookstore-worker", ticks0: 0, ticks1: 100, threads: "R"},
}

// sampleMachine samples a Machine over the two fake samples, 5 s
// apart, and returns the second sample's readings.
func sampleMachine(t *testing.T, busy1, running int, procs []fakeProc) []use.Reading {
	t.Helper()
	root := t.TempDir()
	p := &Machine{Root: root, TargetPIDs: []int{42}, Self: "50"}
	t0 := time.Unix(1000, 0)
	machineTree(t, root, 0, 200, 1000, running, procs)
	if _, err := p.Sample(context.Background(), t0); err != nil {
		t.Fatal(err)
	}
	// 1000 more ticks of CPU time on 2 CPUs over 5 s.
	machineTree(t, root, 1, 200+busy1, 2000, running, procs)
	got, err := p.Sample(context.Background(), t0.Add(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestMachineProbeOnlyTheTestRuns(t *testing.T) {
	// Both CPUs fully busy over 5 s (1000 ticks busy of 1000), all of it the
	// test itself: knee 1.0 cores, the target 0.6 and its worker 0.4.
	procs := []fakeProc{
		{pid: 50, ppid: 1, comm: "knee", ticks0: 100, ticks1: 600, threads: "RRS"},          // 5 s: 1.0 cores
		{pid: 42, ppid: 1, comm: "bookstore", ticks0: 1000, ticks1: 1300, threads: "RS"},    // 3 s: 0.6 cores
		{pid: 43, ppid: 42, comm: "bookstore-worker", ticks0: 0, ticks1: 200, threads: "R"}, // 2 s: 0.4 cores
		{pid: 7, ppid: 1, comm: "sshd", ticks0: 10, ticks1: 10, threads: "S"},               // idle
	}
	// procs_running 4: knee's two R threads, the target's and its worker's.
	got := sampleMachine(t, 1000, 4, procs)
	checkReadings(t, got, map[string]want{
		use.MetricMachineCPUs:         {value: 2},
		use.MetricMachineBusy:         {value: 2},
		use.MetricMachineUtil:         {value: 1},
		use.MetricOtherCores:          {value: 0},
		use.MetricOtherUtil:           {value: 0},
		use.MetricOtherRunQueuePerCPU: {value: 0},
		use.MetricRunQueuePerCPU:      {value: 1.5}, // the whole machine, context: (4 - the reader) / 2
		use.MetricLoadPerCPU:          {value: 1.5},
	})
	for _, r := range got {
		if strings.HasPrefix(r.Metric, use.MetricOtherProcessPrefix) {
			t.Errorf("%s named as other work; only the test itself ran", r.Metric)
		}
	}
	if sigs := use.DefaultThresholds().Signals(machineRow(t, got)); len(sigs) > 0 {
		t.Errorf("machine saturated by the test itself: %v", sigs)
	}
}

func TestMachineProbeThirdProcessBurnsCPU(t *testing.T) {
	procs := []fakeProc{
		{pid: 50, ppid: 1, comm: "knee", ticks0: 100, ticks1: 350, threads: "RRS"},          // 0.5 cores
		{pid: 42, ppid: 1, comm: "bookstore", ticks0: 1000, ticks1: 1150, threads: "RS"},    // 0.3 cores
		{pid: 43, ppid: 42, comm: "bookstore-worker", ticks0: 0, ticks1: 100, threads: "S"}, // 0.2 cores
		{pid: 60, ppid: 1, comm: "stress", ticks0: 0, ticks1: 500, threads: "R"},            // 1.0 cores
		{pid: 61, ppid: 1, comm: "sshd", ticks0: 0, ticks1: 1, threads: "S"},                // 0.002 cores: too little to name
	}
	// procs_running 5: knee's two, the target's one, stress's one, and one
	// more the kernel counted (a thread of another process).
	got := sampleMachine(t, 1000, 5, procs)
	checkReadings(t, got, map[string]want{
		use.MetricMachineBusy:                   {value: 2},
		use.MetricOtherCores:                    {value: 1},   // 2 busy - 0.5 knee - 0.5 target and worker
		use.MetricOtherUtil:                     {value: 0.5}, // of 2 CPUs
		use.MetricOtherRunQueuePerCPU:           {value: 1},   // (5 - 3 of the test's) / 2
		use.MetricOtherProcessPrefix + "stress": {value: 1},
	})
	if _, named := byMetric(t, got)[use.MetricOtherProcessPrefix+"sshd"]; named {
		t.Error("sshd named at 0.002 cores; only commands using 0.05 cores or more are")
	}
	sigs := use.DefaultThresholds().Signals(machineRow(t, got))
	if len(sigs) != 1 || sigs[0].Stat.Metric != use.MetricOtherUtil {
		t.Errorf("signals %v, want the other processes' CPU at 50%%", sigs)
	}
}

// machineRow is the machine's row of the USE table of one sample's readings.
func machineRow(t *testing.T, rs []use.Reading) use.Row {
	t.Helper()
	row, ok := use.Summarize([]use.Sample{{Readings: rs}}, 0, 0).Row(use.Machine)
	if !ok {
		t.Fatal("no machine row")
	}
	return row
}

func TestMachineProbeWithoutTarget(t *testing.T) {
	root := t.TempDir()
	machineTree(t, root, 0, 200, 1000, 3, testItself)
	p := &Machine{Root: root, Self: "50"}
	t0 := time.Unix(1000, 0)
	p.Sample(context.Background(), t0)
	machineTree(t, root, 1, 400, 1800, 3, testItself)
	got, _ := p.Sample(context.Background(), t0.Add(time.Second))
	checkReadings(t, got, map[string]want{
		use.MetricMachineUtil:         {value: 0.25}, // 200 more busy of 800 more ticks
		use.MetricOtherCores:          {why: "no target PID given"},
		use.MetricOtherUtil:           {why: "no target PID given"},
		use.MetricOtherRunQueuePerCPU: {why: "no target PID given"},
	})
}

func TestMachineProbeTargetGone(t *testing.T) {
	root := t.TempDir()
	machineTree(t, root, 0, 200, 1000, 3, testItself)
	p := &Machine{Root: root, TargetPIDs: []int{77}, Self: "50"}
	t0 := time.Unix(1000, 0)
	first, _ := p.Sample(context.Background(), t0)
	checkReadings(t, first, map[string]want{use.MetricOtherUtil: {why: whyFirstSample}, use.MetricLoad1: {value: 3}})
	machineTree(t, root, 1, 400, 1800, 3, testItself)
	got, _ := p.Sample(context.Background(), t0.Add(time.Second))
	checkReadings(t, got, map[string]want{use.MetricOtherUtil: {why: "target pid 77 is gone"}})
}

// TestJudgeStepsOnMachineProbe runs the stepped verdict on the machine
// probe's readings of the two fake machines, a database that queues from
// step 2 beside them. Where only the test runs, the machine is neither
// saturated nor set aside and no "other work" is blamed; where stress burns
// a CPU, the machine is set aside from the first step, naming stress and
// its share.
func TestJudgeStepsOnMachineProbe(t *testing.T) {
	onlyTest := []fakeProc{
		{pid: 50, ppid: 1, comm: "knee", ticks0: 100, ticks1: 600, threads: "RRS"},
		{pid: 42, ppid: 1, comm: "bookstore", ticks0: 1000, ticks1: 1300, threads: "RS"},
		{pid: 43, ppid: 42, comm: "bookstore-worker", ticks0: 0, ticks1: 200, threads: "R"},
	}
	withStress := []fakeProc{
		{pid: 50, ppid: 1, comm: "knee", ticks0: 100, ticks1: 350, threads: "RRS"},
		{pid: 42, ppid: 1, comm: "bookstore", ticks0: 1000, ticks1: 1250, threads: "RS"},
		{pid: 60, ppid: 1, comm: "stress", ticks0: 0, ticks1: 500, threads: "R"},
	}
	steps := func(machine []use.Reading) []use.Table {
		db := func(waiting float64) use.Reading {
			return measured(use.Database, use.MetricDBQueueWaiting, use.Saturation, waiting, use.UnitCount)
		}
		var tabs []use.Table
		for i, w := range []float64{0.1, 1.6} {
			tab := use.Summarize([]use.Sample{{At: time.Second, Probe: "p", Readings: append([]use.Reading{db(w)}, machine...)}}, 0, 0)
			tab.Label = fmt.Sprintf("step %d", i+1)
			tabs = append(tabs, tab)
		}
		return tabs
	}
	t.Run("only the target and knee", func(t *testing.T) {
		v := use.JudgeSteps(steps(sampleMachine(t, 1000, 4, onlyTest)), nil)
		text := v.Summary + "\n" + strings.Join(v.SetAside, "\n")
		if v.Bottleneck != use.Database || v.Step != 1 {
			t.Errorf("verdict %s at step %d, want the database at step 2:\n%s", v.Bottleneck, v.Step+1, text)
		}
		for _, bad := range []string{"other work", "set aside", "machine: saturated"} {
			if strings.Contains(text, bad) {
				t.Errorf("verdict says %q where only the test ran:\n%s", bad, text)
			}
		}
	})
	t.Run("a third process burns a CPU", func(t *testing.T) {
		v := use.JudgeSteps(steps(sampleMachine(t, 1000, 4, withStress)), nil)
		text := v.Summary + "\n" + strings.Join(v.SetAside, "\n")
		if v.Bottleneck != use.Database || v.Step != 1 {
			t.Errorf("verdict %s at step %d, want the database at step 2:\n%s", v.Bottleneck, v.Step+1, text)
		}
		for _, w := range []string{"(CPU of other processes 50% (at or over 50%)), by other work: stress 1.00 cores", "set aside: the machine"} {
			if !strings.Contains(text, w) {
				t.Errorf("verdict lacks %q:\n%s", w, text)
			}
		}
	})
}
