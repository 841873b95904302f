package fault

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"
)

// Freezer stops a target and lets it run again. Freeze returns once the
// target is stopped; when it fails it leaves the target thawed. Thaw of a
// target that is not frozen is not an error.
type Freezer interface {
	Freeze(ctx context.Context) error
	Thaw() error
	String() string
}

var (
	_ Freezer = (*Cgroup)(nil)
	_ Freezer = (*SignalFreezer)(nil)
)

// freezeTimeout bounds the wait for a freeze to complete when ctx has no
// deadline: a task stuck in the kernel can keep a cgroup FREEZING for ever.
const freezeTimeout = 10 * time.Second

// pollEvery is how often a freeze's progress is read back.
const pollEvery = 2 * time.Millisecond

// Freeze stops every process of the cgroup and waits until the kernel says
// they all are (v1 freezer.state reads FROZEN, v2 cgroup.events has
// "frozen 1").
func (c *Cgroup) Freeze(ctx context.Context) error {
	var done func() (bool, error)
	switch dir := c.dir("freezer"); {
	case dir == "":
		return fmt.Errorf("freeze %s: no freezer controller: %w", c, ErrUnsupported)
	case c.version == 2:
		if err := writeFile(filepath.Join(dir, "cgroup.freeze"), "1"); err != nil {
			return fmt.Errorf("freeze: %w", err)
		}
		done = func() (bool, error) {
			events, err := readKeyValues(filepath.Join(dir, "cgroup.events"))
			return events["frozen"] == 1, err
		}
	default:
		state := filepath.Join(dir, "freezer.state")
		done = func() (bool, error) {
			// Writing FROZEN again retries tasks that could not be frozen yet.
			if err := writeFile(state, "FROZEN"); err != nil {
				return false, err
			}
			s, err := readTrim(state)
			return s == "FROZEN", err
		}
	}
	if err := waitFor(ctx, done); err != nil {
		return errors.Join(fmt.Errorf("freeze %s: %w", c, err), c.Thaw())
	}
	return nil
}

// Thaw lets the cgroup's processes run again.
func (c *Cgroup) Thaw() error {
	dir := c.dir("freezer")
	switch {
	case dir == "":
		return fmt.Errorf("thaw %s: no freezer controller: %w", c, ErrUnsupported)
	case c.version == 2:
		return writeFile(filepath.Join(dir, "cgroup.freeze"), "0")
	}
	return writeFile(filepath.Join(dir, "freezer.state"), "THAWED")
}

// waitFor polls done until it reports true, fails, ctx ends or
// freezeTimeout passes.
func waitFor(ctx context.Context, done func() (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, freezeTimeout)
	defer cancel()
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		ok, err := done()
		if err != nil || ok {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not frozen in time: %w", ctx.Err())
		case <-tick.C:
		}
	}
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
func (c *Cgroup) CPUStat() (CPUStat, error) {
	if c.version == 2 {
		kv, err := readKeyValues(filepath.Join(c.dirs[""], "cpu.stat"))
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
	if dir := c.dir("cpu"); dir != "" {
		kv, err := readKeyValues(filepath.Join(dir, "cpu.stat"))
		if err != nil {
			return CPUStat{}, err
		}
		st.Periods, st.Throttled = kv["nr_periods"], kv["nr_throttled"]
		st.ThrottledTime = time.Duration(kv["throttled_time"]) // nanoseconds
	}
	if dir := c.dir("cpuacct"); dir != "" {
		s, err := readTrim(filepath.Join(dir, "cpuacct.usage"))
		if err != nil {
			return CPUStat{}, err
		}
		ns, err := parseInt(s)
		if err != nil {
			return CPUStat{}, fmt.Errorf("%s/cpuacct.usage: %w", dir, err)
		}
		st.Usage = time.Duration(ns)
	}
	return st, nil
}

// Limits returns the cgroup's CPU limit files for the environment note, plus
// "cpus": the quota in CPUs ("max" without one) and "cgroup": its directory.
func (c *Cgroup) Limits() (map[string]string, error) {
	dir := c.dir("cpu")
	if dir == "" {
		return map[string]string{"cgroup": c.Dir()}, nil
	}
	out := map[string]string{"cgroup": dir}
	files := []string{"cpu.cfs_quota_us", "cpu.cfs_period_us"}
	if c.version == 2 {
		files = []string{"cpu.max"}
	}
	for _, f := range files {
		v, err := readTrim(filepath.Join(dir, f))
		if err != nil {
			return out, fmt.Errorf("cpu limits of %s: %w", c, err)
		}
		out[f] = v
	}
	if c.version == 2 {
		quota, period, _ := strings.Cut(out["cpu.max"], " ")
		out["cpus"] = FormatCPUs(quota, period)
	} else {
		out["cpus"] = FormatCPUs(out["cpu.cfs_quota_us"], out["cpu.cfs_period_us"])
	}
	return out, nil
}

// FormatCPUs turns a CFS quota and period (microseconds, as the cgroup files
// hold them) into CPUs with two decimals: "50000", "100000" → "0.50". No
// quota ("max" or "-1") is "max"; unreadable values are "?".
func FormatCPUs(quota, period string) string {
	if quota == "max" || quota == "-1" {
		return "max"
	}
	q, errQ := parseInt(quota)
	p, errP := parseInt(period)
	if errQ != nil || errP != nil || p <= 0 {
		return "?"
	}
	return fmt.Sprintf("%.2f", float64(q)/float64(p))
}
