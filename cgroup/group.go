package cgroup

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ErrNotCgroup marks a path that is not a cgroup directory.
var ErrNotCgroup = errors.New("not a cgroup")

// V1Controller is a v1 controller knee uses, with a file only a cgroup of
// that controller has.
type V1Controller struct{ Name, Marker string }

// V1Controllers are the v1 controllers a knee cgroup spans: cpu (quota and
// throttling), cpuacct (usage) and freezer.
func V1Controllers() []V1Controller {
	return []V1Controller{
		{"cpu", "cpu.cfs_quota_us"},
		{"cpuacct", "cpuacct.usage"},
		{"freezer", "freezer.state"},
	}
}

// Group is one cgroup to read. On v1 it spans one directory per controller
// (cpu, cpuacct, freezer); on v2 it is one directory.
type Group struct {
	version int
	dirs    map[string]string // v1: controller → directory; v2: "" → directory
}

// New is the cgroup of the given version in dirs: on v1, controller →
// directory; on v2, "" → the directory. For a cgroup whose directories the
// caller made; Open finds them for an existing one.
func New(version int, dirs map[string]string) *Group {
	return &Group{version: version, dirs: dirs}
}

// Open returns the existing cgroup at path. On v1, path may name the cgroup
// in any controller's mount: the same cgroup under the cpu, cpuacct and
// freezer mounts is used when it exists. A path that is not a cgroup
// directory is an error matching ErrNotCgroup that says why.
func Open(h Hierarchy, path string) (*Group, error) {
	path = filepath.Clean(path)
	notCgroup := func(why string) error {
		return fmt.Errorf("%s is %w (%s)", path, ErrNotCgroup, why)
	}
	info, err := os.Stat(path)
	if err != nil {
		return nil, notCgroup(err.Error())
	}
	if !info.IsDir() {
		return nil, notCgroup("not a directory")
	}
	switch {
	case exists(filepath.Join(path, "cgroup.controllers")):
		return New(2, map[string]string{"": path}), nil
	case !exists(filepath.Join(path, "tasks")):
		return nil, notCgroup("no cgroup.controllers or tasks file")
	}
	g := New(1, map[string]string{})
	rel, inMount := "", false
	for _, mount := range h.V1 {
		if r, err := filepath.Rel(mount, path); err == nil && !strings.HasPrefix(r, "..") {
			rel, inMount = r, true
			break
		}
	}
	for _, ctl := range V1Controllers() {
		dir := path
		if inMount && h.V1[ctl.Name] != "" {
			dir = filepath.Join(h.V1[ctl.Name], rel)
		}
		if exists(filepath.Join(dir, ctl.Marker)) {
			g.dirs[ctl.Name] = dir
		}
	}
	return g, nil
}

// Version is 1 or 2.
func (g *Group) Version() int { return g.version }

// Dir is the cgroup's directory: on v1, the freezer's, else the cpu's,
// else the cpuacct's.
func (g *Group) Dir() string {
	if g.version == 2 {
		return g.dirs[""]
	}
	for _, ctl := range []string{"freezer", "cpu", "cpuacct"} {
		if d := g.dirs[ctl]; d != "" {
			return d
		}
	}
	return ""
}

// ControllerDir is the directory holding controller's files ("" when the
// cgroup has none): on v2 the cgroup's one directory.
func (g *Group) ControllerDir(controller string) string {
	if g.version == 2 {
		return g.dirs[""]
	}
	return g.dirs[controller]
}

// Dirs lists the cgroup's distinct directories, sorted.
func (g *Group) Dirs() []string {
	var out []string
	for _, d := range g.dirs {
		if !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	slices.Sort(out)
	return out
}

// Procs lists the processes in the cgroup (on v1, in its first directory).
func (g *Group) Procs() ([]int, error) {
	dirs := g.Dirs()
	if len(dirs) == 0 {
		return nil, nil
	}
	return readPIDs(filepath.Join(dirs[0], "cgroup.procs"))
}

// CPUStat is a cgroup's CPU accounting, cumulative since it was created.
type CPUStat struct {
	Usage         time.Duration // CPU time used by its processes
	Periods       int64         // CFS periods with runnable tasks
	Throttled     int64         // periods in which the quota ran out
	ThrottledTime time.Duration // time its tasks waited for the next period
}

// CPUStat reads v1 cpu.stat and cpuacct.usage, or v2 cpu.stat. Counters the
// cgroup does not have (no cpu controller) read as zero.
func (g *Group) CPUStat() (CPUStat, error) {
	if g.version == 2 {
		kv, err := readKeyValues(filepath.Join(g.dirs[""], "cpu.stat"))
		if err != nil {
			return CPUStat{}, err
		}
		return CPUStat{
			Usage:         time.Duration(kv["usage_usec"]) * time.Microsecond,
			Periods:       kv["nr_periods"],
			Throttled:     kv["nr_throttled"],
			ThrottledTime: time.Duration(kv["throttled_usec"]) * time.Microsecond,
		}, nil
	}
	var st CPUStat
	if dir := g.ControllerDir("cpu"); dir != "" {
		kv, err := readKeyValues(filepath.Join(dir, "cpu.stat"))
		if err != nil {
			return CPUStat{}, err
		}
		st.Periods, st.Throttled = kv["nr_periods"], kv["nr_throttled"]
		st.ThrottledTime = time.Duration(kv["throttled_time"]) // nanoseconds
	}
	if dir := g.ControllerDir("cpuacct"); dir != "" {
		s, err := readTrim(filepath.Join(dir, "cpuacct.usage"))
		if err != nil {
			return CPUStat{}, err
		}
		ns, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return CPUStat{}, fmt.Errorf("%s/cpuacct.usage: %w", dir, err)
		}
		st.Usage = time.Duration(ns)
	}
	return st, nil
}

// Limits returns the cgroup's CPU limit files for the environment note, plus
// "cpus": the quota in CPUs ("max" without one) and "cgroup": its directory.
func (g *Group) Limits() (map[string]string, error) {
	dir := g.ControllerDir("cpu")
	if dir == "" {
		return map[string]string{"cgroup": g.Dir()}, nil
	}
	out := map[string]string{"cgroup": dir}
	files := []string{"cpu.cfs_quota_us", "cpu.cfs_period_us"}
	if g.version == 2 {
		files = []string{"cpu.max"}
	}
	for _, f := range files {
		v, err := readTrim(filepath.Join(dir, f))
		if err != nil {
			return out, fmt.Errorf("cpu limits of %s: %w", g.Dir(), err)
		}
		out[f] = v
	}
	quota, period := out["cpu.cfs_quota_us"], out["cpu.cfs_period_us"]
	if g.version == 2 {
		quota, period, _ = strings.Cut(out["cpu.max"], " ")
	}
	out["cpus"] = FormatCPUs(quota, period)
	return out, nil
}

// CPUQuota is the cgroup's CFS quota in cores; 0 when it has none ("max",
// -1) or no cpu controller.
func (g *Group) CPUQuota() (float64, error) {
	lim, err := g.Limits()
	if err != nil {
		return 0, err
	}
	quota, period := lim["cpu.cfs_quota_us"], lim["cpu.cfs_period_us"]
	if v, ok := lim["cpu.max"]; ok {
		quota, period, _ = strings.Cut(v, " ")
	}
	q, err1 := strconv.ParseFloat(quota, 64)
	p, err2 := strconv.ParseFloat(period, 64)
	if err1 != nil || err2 != nil || q <= 0 || p <= 0 {
		return 0, nil
	}
	return q / p, nil
}

// Frozen reports whether the kernel says every process of the cgroup is
// frozen: v2 cgroup.events has "frozen 1", v1 freezer.state reads FROZEN.
func (g *Group) Frozen() (bool, error) {
	dir := g.ControllerDir("freezer")
	switch {
	case dir == "":
		return false, fmt.Errorf("%s has no freezer controller", g.Dir())
	case g.version == 2:
		events, err := readKeyValues(filepath.Join(dir, "cgroup.events"))
		return events["frozen"] == 1, err
	}
	s, err := readTrim(filepath.Join(dir, "freezer.state"))
	return s == "FROZEN", err
}

// FormatCPUs turns a CFS quota and period (microseconds, as the cgroup files
// hold them) into CPUs with two decimals: "50000", "100000" → "0.50". No
// quota ("max" or "-1") is "max"; unreadable values are "?".
func FormatCPUs(quota, period string) string {
	if quota == "max" || quota == "-1" {
		return "max"
	}
	q, errQ := strconv.ParseInt(quota, 10, 64)
	p, errP := strconv.ParseInt(period, 10, 64)
	if errQ != nil || errP != nil || p <= 0 {
		return "?"
	}
	return fmt.Sprintf("%.2f", float64(q)/float64(p))
}

func readPIDs(path string) ([]int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("%s: bad pid %q", path, f)
		}
		pids = append(pids, pid)
	}
	return pids, nil
}

// readKeyValues reads a flat keyed file ("nr_periods 12" per line).
func readKeyValues(path string) (map[string]int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]int64{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), " ")
		if !ok {
			continue
		}
		i, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s line %d: %w", path, n, err)
		}
		out[k] = i
	}
	return out, sc.Err()
}

func readTrim(path string) (string, error) {
	b, err := os.ReadFile(path)
	return strings.TrimSpace(string(b)), err
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return !errors.Is(err, fs.ErrNotExist) && err == nil
}
