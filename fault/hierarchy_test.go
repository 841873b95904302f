package fault

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/knee-dev/knee/internal/kneetest"
)

// hybridMountinfo is this development machine's cgroup part of
// /proc/self/mountinfo: v1 controllers plus a cgroup2 "unified" mount.
const hybridMountinfo = `31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct
37 31 0:34 / /sys/fs/cgroup/freezer rw,relatime - cgroup cgroup rw,freezer
40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,xattr,name=systemd
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
`

func TestParseMountinfo(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    Hierarchy
		version int
	}{
		{"hybrid", hybridMountinfo, Hierarchy{V2: "/sys/fs/cgroup/unified", V1: map[string]string{
			"cpu": "/sys/fs/cgroup/cpu", "cpuacct": "/sys/fs/cgroup/cpuacct", "freezer": "/sys/fs/cgroup/freezer",
			"name=systemd": "/sys/fs/cgroup/systemd",
		}}, 1},
		{"pure v2 (systemd, docker)",
			"29 23 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot\n",
			Hierarchy{V2: "/sys/fs/cgroup", V1: map[string]string{}}, 2},
		{"co-mounted cpu,cpuacct",
			"35 25 0:31 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid shared:15 - cgroup cgroup rw,cpu,cpuacct\n",
			Hierarchy{V1: map[string]string{"cpu": "/sys/fs/cgroup/cpu,cpuacct", "cpuacct": "/sys/fs/cgroup/cpu,cpuacct"}}, 1},
		{"escaped space in mount point",
			`50 1 0:40 / /mnt/my\040cgroups rw - cgroup2 cgroup2 rw` + "\n",
			Hierarchy{V2: "/mnt/my cgroups", V1: map[string]string{}}, 2},
		{"no cgroups", "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n", Hierarchy{V1: map[string]string{}}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseMountinfo(strings.NewReader(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v\nwant %+v", got, tt.want)
			}
			if v := got.Version(); v != tt.version {
				t.Errorf("Version = %d, want %d", v, tt.version)
			}
		})
	}
	if _, err := ParseMountinfo(strings.NewReader("1 2 / - cgroup2 cgroup2 rw\n")); err == nil ||
		!strings.Contains(err.Error(), "line 1") {
		t.Errorf("short line: err = %v, want an error naming line 1", err)
	}
}

func TestDetectAtFakeRoot(t *testing.T) {
	root := t.TempDir()
	kneetest.WriteFiles(t, root, map[string]string{
		"proc/self/mountinfo":                          hybridMountinfo,
		"sys/fs/cgroup/cpu/cgroup.procs":               "",
		"sys/fs/cgroup/freezer/cgroup.procs":           "",
		"sys/fs/cgroup/unified/cgroup.controllers":     "",
		"sys/fs/cgroup/unified/cgroup.subtree_control": "",
	})
	c := DetectAt(root)
	if c.Version != 1 || c.Hierarchy.V1["cpu"] != filepath.Join(root, "sys/fs/cgroup/cpu") ||
		c.Hierarchy.V2 != filepath.Join(root, "sys/fs/cgroup/unified") {
		t.Errorf("DetectAt = %+v", c)
	}
	if !c.CPU || !c.Freezer {
		t.Errorf("CPU %v (%s) Freezer %v (%s); want both (tests run as root or own the temp dir)", c.CPU, c.CPUReason, c.Freezer, c.FreezerReason)
	}

	v2root := t.TempDir()
	kneetest.WriteFiles(t, v2root, map[string]string{
		"proc/self/mountinfo":              "29 23 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n",
		"sys/fs/cgroup/cgroup.controllers": "memory pids\n",
	})
	c = DetectAt(v2root)
	if c.Version != 2 || c.CPU || !strings.Contains(c.CPUReason, "cpu controller is not available") || !c.Freezer {
		t.Errorf("v2 without cpu: %+v", c)
	}

	c = DetectAt(t.TempDir())
	if c.Version != 0 || c.CPU || c.Freezer || !strings.Contains(c.CPUReason, "mountinfo") {
		t.Errorf("no mountinfo: %+v", c)
	}
}

func FuzzParseMountinfo(f *testing.F) {
	f.Add(hybridMountinfo)
	f.Add(`50 1 0:40 / /mnt/a\040b\ rw - cgroup cgroup rw,cpu` + "\n")
	f.Add("1 2 3 - cgroup\n")
	f.Fuzz(func(t *testing.T, s string) {
		h, err := ParseMountinfo(strings.NewReader(s))
		if err != nil {
			return
		}
		if v := h.Version(); v < 0 || v > 2 {
			t.Fatalf("Version %d", v)
		}
	})
}
