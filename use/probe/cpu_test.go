package probe

import (
	"context"
	"fmt"
	"github.com/knee-dev/knee/use"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/knee-dev/knee/cgroup"
	"github.com/knee-dev/knee/internal/kneetest"
)

// statLine is a /proc/PID/stat line with the given state and utime/stime
// (fields 14 and 15); the other numeric fields are zero.
func statLine(pid int, comm string, state byte, utime, stime int) string {
	f := make([]string, 50) // fields 3..52
	for i := range f {
		f[i] = "0"
	}
	f[0] = string(state)
	f[11], f[12] = fmt.Sprint(utime), fmt.Sprint(stime)
	return fmt.Sprintf("%d (%s) %s\n", pid, comm, strings.Join(f, " "))
}

// byMetric indexes readings by metric name, failing on duplicates.
func byMetric(t *testing.T, rs []use.Reading) map[string]use.Reading {
	t.Helper()
	out := map[string]use.Reading{}
	for _, r := range rs {
		if _, dup := out[r.Metric]; dup {
			t.Fatalf("metric %s read twice", r.Metric)
		}
		out[r.Metric] = r
	}
	return out
}

// want is an expected reading: a value, or a not-measured reason substring.
type want struct {
	value float64
	why   string // non-empty: expect not measured, with this in the reason
}

func checkReadings(t *testing.T, got []use.Reading, wants map[string]want) {
	t.Helper()
	m := byMetric(t, got)
	for metric, w := range wants {
		r, ok := m[metric]
		switch {
		case !ok:
			t.Errorf("%s: missing", metric)
		case w.why != "" && (r.Measured() || !strings.Contains(r.NotMeasured, w.why)):
			t.Errorf("%s = %v (%q), want not measured: %q", metric, r.Value, r.NotMeasured, w.why)
		case w.why == "" && !r.Measured():
			t.Errorf("%s not measured: %s; want %v", metric, r.NotMeasured, w.value)
		case w.why == "" && math.Abs(r.Value-w.value) > 1e-9:
			t.Errorf("%s = %v, want %v", metric, r.Value, w.value)
		}
	}
}

func TestCPUProbeV1CgroupOfPID(t *testing.T) {
	root := t.TempDir()
	mount := filepath.Join(root, "cg")
	h := cgroup.Hierarchy{V1: map[string]string{"cpu": mount, "cpuacct": mount}}
	// Target PID 4242 in the v1 cgroup /docker/abc, limited to 0.5 CPU.
	kneetest.WriteFiles(t, root, map[string]string{
		"proc/4242/stat":                  statLine(4242, "book (store) x", 'S', 300, 100),
		"proc/4242/task/4242/stat":        statLine(4242, "book", 'R', 0, 0),
		"proc/4242/task/4243/stat":        statLine(4243, "book", 'S', 0, 0),
		"proc/4242/cgroup":                "5:freezer:/\n4:cpu,cpuacct:/docker/abc\n0::/\n",
		"cg/docker/abc/tasks":             "4242\n",
		"cg/docker/abc/cpu.cfs_quota_us":  "50000\n",
		"cg/docker/abc/cpu.cfs_period_us": "100000\n",
		"cg/docker/abc/cpu.stat":          "nr_periods 100\nnr_throttled 5\nthrottled_time 200000000\n",
		"cg/docker/abc/cpuacct.usage":     "1000000000\n",
	})
	p := &CPU{Root: root, PID: 4242, Hierarchy: h}
	t0 := time.Unix(1000, 0)
	first, err := p.Sample(context.Background(), t0)
	if err != nil {
		t.Fatal(err)
	}
	checkReadings(t, first, map[string]want{
		use.MetricCPUCores:         {why: whyFirstSample},
		use.MetricCPUUtilization:   {why: whyFirstSample},
		use.MetricThrottledPeriods: {why: whyFirstSample},
		use.MetricCPULimit:         {value: 0.5},
		use.MetricRunnableThreads:  {value: 1},
	})
	// One second later: 0.4 s more CPU, 10 more periods of which 2
	// throttled, 0.2 s more throttled time.
	kneetest.WriteFiles(t, root, map[string]string{
		"cg/docker/abc/cpu.stat":      "nr_periods 110\nnr_throttled 7\nthrottled_time 400000000\n",
		"cg/docker/abc/cpuacct.usage": "1400000000\n",
	})
	second, err := p.Sample(context.Background(), t0.Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	checkReadings(t, second, map[string]want{
		use.MetricCPUCores:         {value: 0.4},
		use.MetricCPULimit:         {value: 0.5},
		use.MetricCPUUtilization:   {value: 0.8}, // 0.4 of 0.5
		use.MetricThrottledPeriods: {value: 0.2}, // 2 of 10
		use.MetricThrottledTime:    {value: 0.2}, // 0.2 s per s
		use.MetricRunnableThreads:  {value: 1},
		// No schedstat in this tree (a kernel without it): that reading
		// alone is not measured, the rest stand.
		use.MetricRunQueueWait: {why: "schedstat"},
	})
}

func TestCPUProbeV2NoLimitAndPIDOnly(t *testing.T) {
	root := t.TempDir()
	kneetest.WriteFiles(t, root, map[string]string{
		"cg2/app/cgroup.controllers": "cpu\n",
		"cg2/app/cpu.max":            "max 100000\n",
		"cg2/app/cpu.stat":           "usage_usec 2000000\nnr_periods 0\nnr_throttled 0\nthrottled_usec 0\n",
		"proc/7/stat":                statLine(7, "api", 'S', 400, 0),
		"proc/7/task/7/stat":         statLine(7, "api", 'S', 0, 0),
		"proc/7/task/7/schedstat":    "900000000 100000000 40\n", // run, wait (ns), timeslices
		"proc/7/task/8/stat":         statLine(8, "api", 'S', 0, 0),
		"proc/7/task/8/schedstat":    "500000000 50000000 20\n",
		"proc/7/cgroup":              "0::/\n", // the root cgroup: no cgroup of its own
	})
	h := cgroup.Hierarchy{V2: filepath.Join(root, "cg2")}
	cg := &CPU{Root: root, Cgroup: filepath.Join(root, "cg2/app"), Hierarchy: h, CPUs: 4}
	pid := &CPU{Root: root, PID: 7, Hierarchy: h, CPUs: 4}
	t0 := time.Unix(1000, 0)
	for _, p := range []*CPU{cg, pid} {
		if _, err := p.Sample(context.Background(), t0); err != nil {
			t.Fatal(err)
		}
	}
	// Half a second later: the cgroup used 1.5 s more (3 cores), the PID
	// 150 ticks = 1.5 s more (3 cores); with no limit, utilization is of
	// the machine's 4 CPUs.
	// Its two threads waited 0.2 s and 0.1 s more for a CPU: 0.3 s in 0.5 s
	// is 0.6 s/s, with no cgroup to throttle it.
	kneetest.WriteFiles(t, root, map[string]string{
		"cg2/app/cpu.stat":        "usage_usec 3500000\nnr_periods 0\nnr_throttled 0\nthrottled_usec 0\n",
		"proc/7/stat":             statLine(7, "api", 'S', 500, 50),
		"proc/7/task/7/schedstat": "1300000000 300000000 60\n",
		"proc/7/task/8/schedstat": "600000000 150000000 25\n",
	})
	now := t0.Add(500 * time.Millisecond)
	got, _ := cg.Sample(context.Background(), now)
	checkReadings(t, got, map[string]want{
		use.MetricCPUCores:         {value: 3},
		use.MetricCPUUtilization:   {value: 0.75},
		use.MetricCPULimit:         {why: whyNoLimit},
		use.MetricThrottledPeriods: {why: whyNoLimit},
		use.MetricRunnableThreads:  {why: "no target PID"},
		use.MetricRunQueueWait:     {why: "no target PID"},
	})
	got, _ = pid.Sample(context.Background(), now)
	checkReadings(t, got, map[string]want{
		use.MetricCPUCores:         {value: 3},
		use.MetricCPUUtilization:   {value: 0.75},
		use.MetricCPULimit:         {why: whyNoCgroup},
		use.MetricThrottledPeriods: {why: whyNoCgroup},
		use.MetricRunnableThreads:  {value: 0},
		use.MetricRunQueueWait:     {value: 0.6},
	})
}

func TestCPUProbeNotMeasured(t *testing.T) {
	root := t.TempDir()
	kneetest.WriteFiles(t, root, map[string]string{"proc/1/stat": statLine(1, "init", 'S', 0, 0)})
	tests := []struct {
		name  string
		probe *CPU
		why   string
	}{
		{"gone PID", &CPU{Root: root, PID: 999}, "process 999: process is gone"},
		{"no target", &CPU{Root: root}, whyNoTarget},
		{"not a cgroup", &CPU{Root: root, Cgroup: filepath.Join(root, "proc")}, "is not a cgroup"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.probe.Sample(context.Background(), time.Unix(1, 0))
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 7 {
				t.Fatalf("%d readings, want all 7", len(got))
			}
			for _, r := range got {
				if r.Measured() || !strings.Contains(r.NotMeasured, tc.why) {
					t.Errorf("%s: %v %q, want not measured: %q", r.Metric, r.Value, r.NotMeasured, tc.why)
				}
			}
		})
	}
}

func TestGeneratorProbe(t *testing.T) {
	root := t.TempDir()
	kneetest.WriteFiles(t, root, map[string]string{"proc/9/stat": statLine(9, "knee", 'R', 100, 0)})
	lag, sent := 7*time.Millisecond, true
	p := &Generator{Root: root, Self: "9", CPUs: 2, SendLagP99: func() (time.Duration, bool) { return lag, sent }}
	t0 := time.Unix(1000, 0)
	first, _ := p.Sample(context.Background(), t0)
	checkReadings(t, first, map[string]want{
		use.MetricGeneratorCores: {why: whyFirstSample},
		use.MetricSendLagP99:     {value: 0.007},
	})
	kneetest.WriteFiles(t, root, map[string]string{"proc/9/stat": statLine(9, "knee", 'R', 120, 30)})
	sent = false
	got, _ := p.Sample(context.Background(), t0.Add(time.Second))
	checkReadings(t, got, map[string]want{
		use.MetricGeneratorCores: {value: 0.5},  // 50 ticks in 1 s
		use.MetricGeneratorUtil:  {value: 0.25}, // of 2 CPUs
		use.MetricSendLagP99:     {why: "nothing sent"},
	})
	none, _ := (&Generator{Root: root, Self: "9"}).Sample(context.Background(), t0)
	checkReadings(t, none, map[string]want{use.MetricSendLagP99: {why: "no send-lag source"}})
}
