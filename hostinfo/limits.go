package hostinfo

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/knee-dev/knee/fault"
)

// TargetLimits returns the CPU limits of the cgroup pid is in, from
// /proc/PID/cgroup and that cgroup's cpu.max (v2) or cpu.cfs_quota_us and
// cpu.cfs_period_us (v1), as fault.Cgroup.Limits reports them. Only the
// process's own cgroup is read, not limits set on its ancestors.
func TargetLimits(opts Options, pid int) (map[string]string, error) {
	opts = opts.withDefaults()
	h := fault.DetectAt(opts.Root).Hierarchy
	rel, version, err := cpuCgroupOf(opts.proc(fmt.Sprint(pid), "cgroup"))
	if err != nil {
		return nil, fmt.Errorf("limits of pid %d: %w", pid, err)
	}
	mount := h.V2
	if version == 1 {
		mount = h.V1["cpu"]
	}
	if mount == "" {
		return nil, fmt.Errorf("limits of pid %d: cgroup v%d cpu hierarchy is not mounted", pid, version)
	}
	dir := filepath.Join(mount, rel)
	if rel == "/" {
		return map[string]string{"cgroup": dir, "cpus": "max"}, nil // the root cgroup has no limit
	}
	cg, err := fault.OpenIn(h, dir)
	if err != nil {
		return nil, fmt.Errorf("limits of pid %d: %w", pid, err)
	}
	lim, err := cg.Limits()
	if err != nil {
		return lim, fmt.Errorf("limits of pid %d: %w", pid, err)
	}
	return lim, nil
}

// cpuCgroupOf reads /proc/PID/cgroup and returns the path of the cgroup
// holding the cpu controller: the v1 line naming "cpu" when there is one,
// else the v2 "0::" line.
func cpuCgroupOf(path string) (rel string, version int, err error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	v2 := ""
	for n := 1; sc.Scan(); n++ {
		// "4:cpu,cpuacct:/docker/abc" (v1) or "0::/system.slice/x.service" (v2)
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			return "", 0, fmt.Errorf("%s line %d: want id:controllers:path", path, n)
		}
		if parts[0] == "0" && parts[1] == "" {
			v2 = parts[2]
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			if c == "cpu" {
				return parts[2], 1, nil
			}
		}
	}
	if err := sc.Err(); err != nil {
		return "", 0, err
	}
	if v2 == "" {
		return "", 0, fmt.Errorf("%s: no cpu cgroup", path)
	}
	return v2, 2, nil
}
