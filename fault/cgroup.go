package fault

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/knee-dev/knee/cgroup"
)

// cfsPeriod is the CFS period knee writes with a quota, as docker --cpus does.
const cfsPeriod = 100 * time.Millisecond

// Cgroup is a cgroup knee created (NewCgroup) or was given (Open). On v1 it
// spans one directory per controller (cpu, cpuacct, freezer).
type Cgroup struct {
	h       Hierarchy
	version int
	dirs    map[string]string // v1: controller → directory; v2: "" → directory
	created bool              // Remove deletes only what knee created
	cpuErr  error             // v2: why the cpu controller is not enabled

	mu      sync.Mutex
	started []int // PIDs StartInCgroup started here; Remove kills only these
}

// NewCgroup creates (or reuses) the knee cgroup <mount>/knee/<name>: on v1
// under the cpu, cpuacct and freezer mounts, on v2 under the cgroup2 mount
// with +cpu enabled in subtree_control when the cpu controller is available.
func NewCgroup(h Hierarchy, name string) (*Cgroup, error) {
	if name == "" || name == "." || name == ".." || strings.ContainsRune(name, '/') {
		return nil, invalid(ErrBadName, fmt.Sprintf("cgroup name %q must be a single path element", name))
	}
	c := &Cgroup{h: h, version: h.Version(), dirs: map[string]string{}, created: true}
	switch c.version {
	case 0:
		return nil, fmt.Errorf("create cgroup %s: no cgroup filesystem is mounted: %w", name, ErrUnsupported)
	case 1:
		for _, ctl := range cgroup.V1Controllers() {
			if mount := h.V1[ctl.Name]; mount != "" {
				c.dirs[ctl.Name] = filepath.Join(mount, "knee", name)
			}
		}
	case 2:
		c.dirs[""] = filepath.Join(h.V2, "knee", name)
		c.cpuErr = enableCPU(h.V2)
	}
	for _, dir := range c.uniqueDirs() {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("create cgroup: %w", err)
		}
	}
	return c, nil
}

// enableCPU turns the cpu controller on for <root>/knee's children. Its
// failure only disables SetCPUs: a freeze needs no controller.
func enableCPU(root string) error {
	avail, err := os.ReadFile(filepath.Join(root, "cgroup.controllers"))
	if err != nil {
		return fmt.Errorf("cpu controller: %w", err)
	}
	if !hasWord(string(avail), "cpu") {
		return fmt.Errorf("cpu controller is not available in %s: %w", root, ErrUnsupported)
	}
	parent := filepath.Join(root, "knee")
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("cpu controller: %w", err)
	}
	for _, dir := range []string{root, parent} {
		on, err := os.ReadFile(filepath.Join(dir, "cgroup.subtree_control"))
		if err == nil && hasWord(string(on), "cpu") {
			continue
		}
		if err := writeFile(filepath.Join(dir, "cgroup.subtree_control"), "+cpu"); err != nil {
			return fmt.Errorf("enable cpu controller: %w", err)
		}
	}
	return nil
}

// Open returns the existing cgroup at path (--target-cgroup), as found by
// Detect. A path that is not a cgroup directory is a *ValidationError
// matching ErrNotCgroup. Remove never deletes an opened cgroup.
func Open(path string) (*Cgroup, error) { return OpenIn(Detect().Hierarchy, path) }

// OpenIn is Open on the given hierarchy. On v1, path may name the cgroup in
// any controller's mount: the same cgroup under the cpu, cpuacct and freezer
// mounts is used when it exists.
func OpenIn(h Hierarchy, path string) (*Cgroup, error) {
	g, err := cgroup.Open(h, path)
	if errors.Is(err, cgroup.ErrNotCgroup) {
		return nil, invalid(ErrNotCgroup, err.Error())
	}
	if err != nil {
		return nil, err
	}
	c := &Cgroup{h: h, version: g.Version(), dirs: map[string]string{}}
	if c.version == 2 {
		c.dirs[""] = g.Dir()
		return c, nil
	}
	for _, ctl := range cgroup.V1Controllers() {
		if d := g.ControllerDir(ctl.Name); d != "" {
			c.dirs[ctl.Name] = d
		}
	}
	return c, nil
}

// group is the cgroup as package cgroup reads it.
func (c *Cgroup) group() *cgroup.Group { return cgroup.New(c.version, c.dirs) }

// Version is 1 or 2.
func (c *Cgroup) Version() int { return c.version }

// Dir is the cgroup's directory: on v1, the freezer's, else the cpu's.
func (c *Cgroup) Dir() string { return c.group().Dir() }

// String is the cgroup's directory, as recorded in rundir.Fault.Target.
func (c *Cgroup) String() string { return c.Dir() }

// Method names how Freeze works, as recorded in rundir.Fault.Method.
func (c *Cgroup) Method() string {
	if c.version == 2 {
		return MethodV2Freeze
	}
	return MethodV1Freezer
}

// dir returns the directory holding controller's files ("" when absent).
func (c *Cgroup) dir(controller string) string { return c.group().ControllerDir(controller) }

func (c *Cgroup) uniqueDirs() []string { return c.group().Dirs() }

// SetCPUs limits the cgroup to cpus CPUs with a CFS quota over a 100 ms
// period, as docker --cpus does: 0.5 writes cfs_quota_us=50000 with
// cfs_period_us=100000 (v1), or cpu.max "50000 100000" (v2).
func (c *Cgroup) SetCPUs(cpus float64) error {
	period := cfsPeriod.Microseconds()
	quota := int64(math.Round(cpus * float64(period)))
	if math.IsNaN(cpus) || cpus <= 0 || cpus > float64(c.h.NumCPU()) || quota < 1000 {
		return invalid(ErrBadCPUs, fmt.Sprintf("cpus %g out of range: want at least 0.01 and at most %d, the CPUs of this machine", cpus, c.h.NumCPU()))
	}
	return c.writeQuota(strconv.FormatInt(quota, 10), period)
}

// ClearCPUs removes the CPU quota.
func (c *Cgroup) ClearCPUs() error { return c.writeQuota("", cfsPeriod.Microseconds()) }

// writeQuota writes quota ("" for none) over period microseconds.
func (c *Cgroup) writeQuota(quota string, period int64) error {
	dir := c.dir("cpu")
	switch {
	case c.cpuErr != nil:
		return fmt.Errorf("set cpu limit on %s: %w", c, c.cpuErr)
	case dir == "":
		return fmt.Errorf("set cpu limit on %s: no cpu controller: %w", c, ErrUnsupported)
	case c.version == 2:
		if quota == "" {
			quota = "max"
		}
		return writeFile(filepath.Join(dir, "cpu.max"), fmt.Sprintf("%s %d", quota, period))
	}
	if quota == "" {
		quota = "-1"
	}
	// The period first: the quota is checked against it.
	if err := writeFile(filepath.Join(dir, "cpu.cfs_period_us"), strconv.FormatInt(period, 10)); err != nil {
		return err
	}
	return writeFile(filepath.Join(dir, "cpu.cfs_quota_us"), quota)
}

// AddPID moves a process (all its threads) into the cgroup.
func (c *Cgroup) AddPID(pid int) error {
	if pid <= 0 {
		return invalid(ErrNoSuchPID, fmt.Sprintf("pid %d does not exist", pid))
	}
	for _, dir := range c.uniqueDirs() {
		err := writeFile(filepath.Join(dir, "cgroup.procs"), strconv.Itoa(pid))
		if errors.Is(err, syscall.ESRCH) {
			return invalid(ErrNoSuchPID, fmt.Sprintf("pid %d does not exist", pid))
		}
		if err != nil {
			return fmt.Errorf("add pid %d: %w", pid, err)
		}
	}
	return nil
}

// Procs lists the processes in the cgroup (on v1, in its first directory).
func (c *Cgroup) Procs() ([]int, error) { return c.group().Procs() }

func (c *Cgroup) track(pid int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.started = append(c.started, pid)
}

// writeFile writes one value to a cgroup file; errors name the file.
func writeFile(path, value string) error {
	if err := os.WriteFile(path, []byte(value), 0o644); err != nil {
		return fmt.Errorf("write %q to %s: %w", value, path, err)
	}
	return nil
}
