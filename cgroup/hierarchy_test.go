package cgroup

import (
	"reflect"
	"strings"
	"testing"

	"github.com/knee-dev/knee/internal/kneetest"
)

func TestParseMountinfo(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    Hierarchy
		version int
	}{
		{"hybrid", kneetest.HybridMountinfo, Hierarchy{V2: "/sys/fs/cgroup/unified", V1: map[string]string{
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

func FuzzParseMountinfo(f *testing.F) {
	f.Add(kneetest.HybridMountinfo)
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
