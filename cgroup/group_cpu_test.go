package cgroup

import (
	"errors"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/knee-dev/knee/internal/kneetest"
	"github.com/prometheus/procfs"
)

func TestOpenAndRead(t *testing.T) {
	root := t.TempDir()
	kneetest.WriteFiles(t, root, map[string]string{
		// v1: cpu and cpuacct mounted apart, freezer too; one cgroup in all three.
		"v1/cpu/docker/abc/tasks":             "1\n",
		"v1/cpu/docker/abc/cgroup.procs":      "7\n8\n",
		"v1/cpu/docker/abc/cpu.cfs_quota_us":  "50000\n",
		"v1/cpu/docker/abc/cpu.cfs_period_us": "100000\n",
		"v1/cpu/docker/abc/cpu.stat":          "nr_periods 100\nnr_throttled 5\nthrottled_time 200000000\n",
		"v1/cpuacct/docker/abc/tasks":         "1\n",
		"v1/cpuacct/docker/abc/cpuacct.usage": "1500000000\n",
		"v1/freezer/docker/abc/tasks":         "1\n",
		"v1/freezer/docker/abc/freezer.state": "FROZEN\n",
		"v2/app/cgroup.controllers":           "cpu\n",
		"v2/app/cgroup.procs":                 "9\n",
		"v2/app/cpu.max":                      "max 100000\n",
		"v2/app/cpu.stat":                     "usage_usec 2000000\nnr_periods 10\nnr_throttled 1\nthrottled_usec 3000\n",
		"v2/app/cgroup.events":                "populated 1\nfrozen 0\n",
		"v2/plain/file":                       "",
	})
	h := Hierarchy{V2: filepath.Join(root, "v2"), V1: map[string]string{
		"cpu": filepath.Join(root, "v1/cpu"), "cpuacct": filepath.Join(root, "v1/cpuacct"), "freezer": filepath.Join(root, "v1/freezer"),
	}}
	v1, err := Open(h, filepath.Join(root, "v1/cpuacct/docker/abc")) // any controller's copy finds the others
	if err != nil {
		t.Fatal(err)
	}
	if v1.Version() != 1 || v1.Dir() != filepath.Join(root, "v1/freezer/docker/abc") || len(v1.Dirs()) != 3 {
		t.Errorf("v1 group: version %d dir %s dirs %v", v1.Version(), v1.Dir(), v1.Dirs())
	}
	st, err := v1.CPUStat()
	if want := (CPUStat{Usage: 1500 * time.Millisecond, Periods: 100, Throttled: 5, ThrottledTime: 200 * time.Millisecond}); err != nil || st != want {
		t.Errorf("v1 CPUStat = %+v, %v; want %+v", st, err, want)
	}
	if q, err := v1.CPUQuota(); err != nil || q != 0.5 {
		t.Errorf("v1 CPUQuota = %v, %v; want 0.5", q, err)
	}
	if lim, err := v1.Limits(); err != nil || lim["cpus"] != "0.50" {
		t.Errorf("v1 Limits = %v, %v", lim, err)
	}
	if f, err := v1.Frozen(); err != nil || !f {
		t.Errorf("v1 Frozen = %v, %v; want true", f, err)
	}
	if pids, err := v1.Procs(); err != nil || !reflect.DeepEqual(pids, []int{7, 8}) {
		t.Errorf("v1 Procs = %v, %v", pids, err)
	}

	v2, err := Open(h, filepath.Join(root, "v2/app"))
	if err != nil {
		t.Fatal(err)
	}
	st, err = v2.CPUStat()
	if want := (CPUStat{Usage: 2 * time.Second, Periods: 10, Throttled: 1, ThrottledTime: 3 * time.Millisecond}); err != nil || st != want {
		t.Errorf("v2 CPUStat = %+v, %v; want %+v", st, err, want)
	}
	if q, err := v2.CPUQuota(); err != nil || q != 0 {
		t.Errorf("v2 CPUQuota = %v, %v; want 0 (max)", q, err)
	}
	if f, err := v2.Frozen(); err != nil || f {
		t.Errorf("v2 Frozen = %v, %v; want false", f, err)
	}
	for _, bad := range []string{"v2/plain", "v2/plain/file", "nowhere"} {
		if _, err := Open(h, filepath.Join(root, bad)); !errors.Is(err, ErrNotCgroup) {
			t.Errorf("Open(%s) = %v, want ErrNotCgroup", bad, err)
		}
	}
}

func TestCPUPlace(t *testing.T) {
	root := t.TempDir()
	kneetest.WriteFiles(t, root, map[string]string{
		"10/cgroup": "12:freezer:/docker/abc\n4:cpu,cpuacct:/docker/abc\n0::/docker/abc\n",
		"11/cgroup": "0::/system.slice/db.service\n",
		"12/cgroup": "0::/\n",
		"13/cgroup": "garbage\n",
		"14/cgroup": "4:memory:/x\n",
	})
	fs, err := procfs.NewFS(root)
	if err != nil {
		t.Fatal(err)
	}
	v1 := Hierarchy{V1: map[string]string{"cpu": "/cg/cpu"}, V2: "/cg/unified"}
	v2 := Hierarchy{V2: "/cg"}
	tests := []struct {
		name string
		pid  int
		h    Hierarchy
		want Place
		err  error
	}{
		{"v1 cpu line first", 10, v1, Place{1, "/cg/cpu", "/docker/abc"}, nil},
		{"v2 when v1 cpu is not mounted", 10, v2, Place{2, "/cg", "/docker/abc"}, nil},
		{"v2 only", 11, v2, Place{2, "/cg", "/system.slice/db.service"}, nil},
		{"root cgroup", 12, v2, Place{2, "/cg", "/"}, nil},
		{"nothing mounted", 11, Hierarchy{}, Place{}, ErrNoCPUCgroup},
		{"no cpu line", 14, v1, Place{}, ErrNoCPUCgroup},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			proc, err := fs.Proc(tt.pid)
			if err != nil {
				t.Fatal(err)
			}
			got, err := CPUPlace(proc, tt.h)
			if got != tt.want || !errors.Is(err, tt.err) {
				t.Errorf("CPUPlace = %+v, %v; want %+v, %v", got, err, tt.want, tt.err)
			}
		})
	}
	if got := (Place{2, "/cg", "/a/b"}).Dir(); got != "/cg/a/b" {
		t.Errorf("Dir = %s", got)
	}
	proc, _ := fs.Proc(13)
	if _, err := CPUPlace(proc, v2); err == nil {
		t.Error("malformed /proc/PID/cgroup: want an error")
	}
}

func TestMounts(t *testing.T) {
	root := t.TempDir()
	kneetest.WriteFiles(t, root, map[string]string{"proc/self/mountinfo": kneetest.HybridMountinfo})
	h, err := Mounts(root)
	if err != nil || h.Version() != 1 || h.V1["freezer"] != filepath.Join(root, "sys/fs/cgroup/freezer") || h.V2 != filepath.Join(root, "sys/fs/cgroup/unified") {
		t.Errorf("Mounts = %+v, %v", h, err)
	}
	if _, err := Mounts(t.TempDir()); err == nil {
		t.Error("no mountinfo: want an error")
	}
}
