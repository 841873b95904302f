package cgroup

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/prometheus/procfs"
)

// ErrNoCPUCgroup marks a process whose CPU cgroup is in no mounted hierarchy.
var ErrNoCPUCgroup = errors.New("no mounted cpu cgroup")

// Place is the cgroup a process's CPU is accounted in.
type Place struct {
	Version int
	Mount   string // the hierarchy's mount point
	Path    string // the cgroup, relative to Mount ("/" is the root cgroup)
}

// Dir is the cgroup's directory.
func (p Place) Dir() string { return filepath.Join(p.Mount, p.Path) }

// IsRoot reports whether the process is in the root cgroup, whose
// accounting is the whole machine's and which has no limit.
func (p Place) IsRoot() bool { return p.Path == "/" }

// CPUPlace finds the cgroup holding proc's cpu controller from its
// /proc/PID/cgroup: the v1 line naming "cpu" when the v1 cpu hierarchy is
// mounted, else the v2 "0::" line when cgroup2 is. Without either it is
// an error matching ErrNoCPUCgroup.
func CPUPlace(proc procfs.Proc, h Hierarchy) (Place, error) {
	cgs, err := proc.Cgroups()
	if err != nil {
		return Place{}, fmt.Errorf("cgroup of pid %d: %w", proc.PID, err)
	}
	var v1, v2 string
	var hasV2 bool
	for _, cg := range cgs {
		if cg.HierarchyID == 0 && len(cg.Controllers) == 0 {
			v2, hasV2 = cg.Path, true
			continue
		}
		for _, c := range cg.Controllers {
			if c == "cpu" {
				v1 = cg.Path
			}
		}
	}
	switch {
	case v1 != "" && h.V1["cpu"] != "":
		return Place{Version: 1, Mount: h.V1["cpu"], Path: v1}, nil
	case hasV2 && h.V2 != "":
		return Place{Version: 2, Mount: h.V2, Path: v2}, nil
	case v1 != "":
		return Place{}, fmt.Errorf("pid %d: cgroup v1 cpu hierarchy is not mounted: %w", proc.PID, ErrNoCPUCgroup)
	case hasV2:
		return Place{}, fmt.Errorf("pid %d: cgroup v2 hierarchy is not mounted: %w", proc.PID, ErrNoCPUCgroup)
	}
	return Place{}, fmt.Errorf("pid %d: %w in its /proc/PID/cgroup", proc.PID, ErrNoCPUCgroup)
}
