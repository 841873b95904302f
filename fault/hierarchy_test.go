package fault

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/knee-dev/knee/internal/kneetest"
)

func TestDetectAtFakeRoot(t *testing.T) {
	root := t.TempDir()
	kneetest.WriteFiles(t, root, map[string]string{
		"proc/self/mountinfo":                          kneetest.HybridMountinfo,
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
