package fault

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/knee-dev/knee/cgroup"
)

// Hierarchy says where the cgroup filesystems are mounted (package cgroup
// reads them; fault writes).
type Hierarchy = cgroup.Hierarchy

// Capabilities is what this machine lets knee do with cgroups, and why not.
type Capabilities struct {
	Hierarchy     Hierarchy
	Version       int    // 1, 2, or 0 without cgroups
	CPU           bool   // knee can create a cgroup with a CPU quota
	CPUReason     string // why CPU is false
	Freezer       bool   // knee can create a cgroup and freeze it
	FreezerReason string // why Freezer is false; callers fall back to SIGSTOP
}

// Detect reads /proc/self/mountinfo and checks which cgroup directories knee
// may write.
func Detect() Capabilities { return DetectAt("/") }

// DetectAt is Detect on a filesystem rooted at root: root/proc/self/mountinfo
// is read and every mount point is taken under root.
func DetectAt(root string) Capabilities {
	var c Capabilities
	h, err := cgroup.Mounts(root)
	if err != nil {
		c.CPUReason = err.Error()
		c.FreezerReason = c.CPUReason
		return c
	}
	c.Hierarchy, c.Version = h, h.Version()
	c.CPU, c.CPUReason = canUse(h, "cpu")
	c.Freezer, c.FreezerReason = canUse(h, "freezer")
	return c
}

// canUse says whether knee can create cgroups using controller, and why not.
func canUse(h Hierarchy, controller string) (bool, string) {
	switch h.Version() {
	case 0:
		return false, "no cgroup filesystem is mounted"
	case 1:
		dir := h.V1[controller]
		if dir == "" {
			return false, fmt.Sprintf("cgroup v1 %s controller is not mounted", controller)
		}
		return writable(dir)
	}
	if controller == "cpu" {
		avail, err := os.ReadFile(filepath.Join(h.V2, "cgroup.controllers"))
		if err != nil {
			return false, fmt.Sprintf("cannot read cgroup.controllers: %v", err)
		}
		if !hasWord(string(avail), "cpu") {
			return false, "cgroup v2 cpu controller is not available in " + h.V2
		}
	}
	// cgroup.freeze is part of the v2 core: any writable cgroup2 can freeze.
	return writable(h.V2)
}

func writable(dir string) (bool, string) {
	const wOK = 2
	if err := syscall.Access(dir, wOK); err != nil {
		return false, fmt.Sprintf("%s is not writable: %v (run as root or delegate a cgroup)", dir, err)
	}
	return true, ""
}

func hasWord(s, w string) bool {
	for _, f := range strings.Fields(s) {
		if f == w {
			return true
		}
	}
	return false
}
