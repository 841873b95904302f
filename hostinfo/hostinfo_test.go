package hostinfo

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/knee-dev/knee/internal/kneetest"
	"github.com/knee-dev/knee/rundir"
)

// stat is a /proc/PID/stat line with utime and stime set.
func stat(pid int, comm string, utime, stime int) string {
	return fmt.Sprintf("%d (%s) S 1 1 1 0 -1 4194304 10 0 0 0 %d %d 0 0 20 0 1 0 100 1000 200 18446744073709551615"+
		" 1 1 0 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n", pid, comm, utime, stime)
}

const cpuinfo = `processor	: 0
vendor_id	: GenuineIntel
model name	: Intel(R) Xeon(R) CPU @ 2.20GHz
cpu MHz		: 2200.000

processor	: 1
vendor_id	: GenuineIntel
model name	: Intel(R) Xeon(R) CPU @ 2.20GHz
`

// fakeRoot is a v2 host: knee is pid 50, the target pid 70 sits in a
// 1.5-CPU cgroup, pid 80 in the root cgroup.
func fakeRoot(t *testing.T) string {
	root := t.TempDir()
	kneetest.WriteFiles(t, root, map[string]string{
		"proc/sys/kernel/hostname":         "loadbox\n",
		"proc/sys/kernel/osrelease":        "6.8.0-45-generic\n",
		"proc/cpuinfo":                     cpuinfo,
		"proc/loadavg":                     "0.52 0.31 0.20 2/345 6789\n",
		"proc/self/mountinfo":              "29 23 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n",
		"proc/50/stat":                     stat(50, "knee", 900, 100),
		"proc/60/stat":                     stat(60, "postgres: writer", 10, 5),
		"proc/70/stat":                     stat(70, "bookstore", 300, 20),
		"proc/70/cgroup":                   "0::/system.slice/bookstore.service\n",
		"proc/80/cgroup":                   "0::/\n",
		"sys/fs/cgroup/cgroup.controllers": "cpu memory\n",
		"sys/fs/cgroup/system.slice/bookstore.service/cgroup.controllers": "cpu memory\n",
		"sys/fs/cgroup/system.slice/bookstore.service/cpu.max":            "150000 100000\n",
	})
	return root
}

func TestCollectFakeRoot(t *testing.T) {
	root := fakeRoot(t)
	synctest.Test(t, func(t *testing.T) {
		env, err := Collect(context.Background(), Options{
			Root: root, Self: 50, TargetPID: 70, KneeVersion: "v0.1.0", TargetCommit: "abc123",
		})
		if err != nil {
			t.Fatal(err)
		}
		want := rundir.Environment{
			KneeVersion:  "v0.1.0",
			TargetCommit: "abc123",
			Host:         "loadbox",
			CPUModel:     "Intel(R) Xeon(R) CPU @ 2.20GHz",
			CPUs:         2,
			Kernel:       "6.8.0-45-generic",
			GoVersion:    runtime.Version(),
			LoadBefore:   [3]float64{0.52, 0.31, 0.20},
			TargetLimits: map[string]string{
				"cgroup":  filepath.Join(root, "sys/fs/cgroup/system.slice/bookstore.service"),
				"cpu.max": "150000 100000",
				"cpus":    "1.50",
			},
		}
		// The floor is this machine's, whatever the fake /proc says.
		if env.WakeFloor == nil || env.WakeFloor.Waits != floorWaits {
			t.Errorf("wake floor %+v, want %d waits measured", env.WakeFloor, floorWaits)
		}
		env.WakeFloor = nil
		// The fake /proc does not change between samples: nobody used CPU.
		if !reflect.DeepEqual(env, want) {
			t.Errorf("Collect =\n%+v\nwant\n%+v", env, want)
		}
	})
}

func TestTargetLimits(t *testing.T) {
	root := fakeRoot(t)
	kneetest.WriteFiles(t, root, map[string]string{
		// A hybrid host: v1 cpu,cpuacct co-mounted, and a container limited to 0.5 CPU.
		"hybrid/proc/self/mountinfo": "35 25 0:31 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n" +
			"41 31 0:38 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n",
		"hybrid/proc/90/cgroup":                                         "12:freezer:/docker/abc\n4:cpu,cpuacct:/docker/abc\n0::/docker/abc\n",
		"hybrid/sys/fs/cgroup/cpu,cpuacct/docker/abc/tasks":             "90\n",
		"hybrid/sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_quota_us":  "50000\n",
		"hybrid/sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_period_us": "100000\n",
		"hybrid/proc/91/cgroup":                                         "garbage\n",
	})
	hybrid := filepath.Join(root, "hybrid")
	tests := []struct {
		name string
		root string
		pid  int
		want map[string]string
		err  string
	}{
		{"v2 root cgroup", root, 80, map[string]string{"cgroup": filepath.Join(root, "sys/fs/cgroup"), "cpus": "max"}, ""},
		{"v1 docker", hybrid, 90, map[string]string{
			"cgroup":            filepath.Join(hybrid, "sys/fs/cgroup/cpu,cpuacct/docker/abc"),
			"cpu.cfs_quota_us":  "50000",
			"cpu.cfs_period_us": "100000",
			"cpus":              "0.50",
		}, ""},
		{"no such pid", root, 99, nil, "no such file"},
		{"bad cgroup file", hybrid, 91, nil, "3+ fields required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := TargetLimits(Options{Root: tt.root}, tt.pid)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Errorf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("TargetLimits = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

func TestRank(t *testing.T) {
	before := map[int]procTimes{
		10: {"idle", 5}, 20: {"postgres", 10}, 30: {"knee", 0}, 40: {"api", 1}, 50: {"gone", 0.07}, 60: {"tie", 0},
	}
	after := map[int]procTimes{
		10: {"idle", 5},        // no CPU: left out
		20: {"postgres", 11.5}, // 1.5 s over 2 s = 0.75 cores
		30: {"knee", 4},        // ourselves: left out
		40: {"api", 2},         // 1 s → 0.5 cores
		60: {"tie", 1},         // 0.5 cores too: the lower PID first
		70: {"new", 0.5},       // not in the first sample: left out
	}
	got := rank(before, after, 2*time.Second, 30, 5)
	want := []rundir.Process{{PID: 20, Comm: "postgres", CPU: 0.75}, {PID: 40, Comm: "api", CPU: 0.5}, {PID: 60, Comm: "tie", CPU: 0.5}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("rank = %+v, want %+v", got, want)
	}
	if got := rank(before, after, 2*time.Second, 30, 1); len(got) != 1 || got[0].PID != 20 {
		t.Errorf("rank top 1 = %+v", got)
	}
}

func TestLoadAvgAndCPUInfoErrors(t *testing.T) {
	root := t.TempDir()
	kneetest.WriteFiles(t, root, map[string]string{"short/proc/loadavg": "0.1 0.2\n", "nan/proc/loadavg": "x 0.2 0.3\n", "arm": "processor\t: 0\nHardware\t: BCM2835\n"})
	if _, err := loadAvg(Options{Root: filepath.Join(root, "short")}); err == nil || !strings.Contains(err.Error(), "Malformed line") {
		t.Errorf("short loadavg: %v", err)
	}
	if _, err := loadAvg(Options{Root: filepath.Join(root, "nan")}); err == nil {
		t.Error("non-numeric loadavg: want an error")
	}
	if model, n, err := CPUInfo(filepath.Join(root, "arm")); err != nil || model != "BCM2835" || n != 1 {
		t.Errorf("ARM cpuinfo = %q, %d, %v", model, n, err)
	}
}

func TestCollectPartialFailure(t *testing.T) {
	root := t.TempDir()
	kneetest.WriteFiles(t, root, map[string]string{"proc/loadavg": "1.00 2.00 3.00 1/2 3\n"})
	env, err := Collect(context.Background(), Options{Root: root, TopN: -1})
	if err == nil || !strings.Contains(err.Error(), "hostname") || !strings.Contains(err.Error(), "cpu info") {
		t.Errorf("err = %v, want the missing files named", err)
	}
	if env.LoadBefore != [3]float64{1, 2, 3} || env.GoVersion != runtime.Version() {
		t.Errorf("partial env = %+v, want what could be read", env)
	}
}

func TestSmokeRealProc(t *testing.T) {
	ctx := context.Background()
	env, err := Collect(ctx, Options{Sample: 100 * time.Millisecond, TargetPID: os.Getpid()})
	if err != nil {
		t.Fatalf("Collect on the real /proc: %v", err)
	}
	if env.Host == "" || env.Kernel == "" || env.CPUs < 1 || env.TargetLimits["cpus"] == "" {
		t.Errorf("real environment looks empty: %+v", env)
	}
	for _, p := range env.TopBefore {
		if p.PID == os.Getpid() || p.CPU <= 0 {
			t.Errorf("top has %+v: want other, busy processes only", p)
		}
	}
	if err := Finish(ctx, Options{Sample: 100 * time.Millisecond}, &env); err != nil {
		t.Fatal(err)
	}
	if env.LoadAfter == [3]float64{} {
		t.Errorf("load after = %v, want the real load average", env.LoadAfter)
	}
	if env.Generator != (rundir.Generator{}) {
		t.Errorf("generator = %+v, want it left to the caller (the run's own figures)", env.Generator)
	}
	g, err := Self()
	if err != nil || g.CPUSeconds <= 0 || g.PeakRSSMB <= 0 {
		t.Errorf("Self() = %+v, %v, want positive CPU and RSS", g, err)
	}
}
