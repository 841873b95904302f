package hostinfo

import (
	"fmt"

	"github.com/knee-dev/knee/cgroup"
	"github.com/knee-dev/knee/internal/proc"
)

// TargetLimits returns the CPU limits of the cgroup pid is in, from
// /proc/PID/cgroup and that cgroup's cpu.max (v2) or cpu.cfs_quota_us and
// cpu.cfs_period_us (v1), as cgroup.Group.Limits reports them. Only the
// process's own cgroup is read, not limits set on its ancestors.
func TargetLimits(opts Options, pid int) (map[string]string, error) {
	opts = opts.withDefaults()
	h, err := cgroup.Mounts(opts.Root)
	if err != nil {
		return nil, fmt.Errorf("limits of pid %d: %w", pid, err)
	}
	pr, err := proc.FS{Root: opts.Root}.Proc(pid)
	if err != nil {
		return nil, fmt.Errorf("limits of pid %d: %w", pid, err)
	}
	place, err := cgroup.CPUPlace(pr, h)
	if err != nil {
		return nil, fmt.Errorf("limits of pid %d: %w", pid, err)
	}
	if place.IsRoot() {
		return map[string]string{"cgroup": place.Dir(), "cpus": "max"}, nil // the root cgroup has no limit
	}
	g, err := cgroup.Open(h, place.Dir())
	if err != nil {
		return nil, fmt.Errorf("limits of pid %d: %w", pid, err)
	}
	lim, err := g.Limits()
	if err != nil {
		return lim, fmt.Errorf("limits of pid %d: %w", pid, err)
	}
	return lim, nil
}
