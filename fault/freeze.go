package fault

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/knee-dev/knee/cgroup"
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
		done = c.group().Frozen
	default:
		state := filepath.Join(dir, "freezer.state")
		done = func() (bool, error) {
			// Writing FROZEN again retries tasks that could not be frozen yet.
			if err := writeFile(state, "FROZEN"); err != nil {
				return false, err
			}
			return c.group().Frozen()
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
type CPUStat = cgroup.CPUStat

// CPUStat reads v1 cpu.stat and cpuacct.usage, or v2 cpu.stat. Counters the
// cgroup does not have (no cpu controller) read as zero.
func (c *Cgroup) CPUStat() (CPUStat, error) { return c.group().CPUStat() }

// Limits returns the cgroup's CPU limit files for the environment note, plus
// "cpus": the quota in CPUs ("max" without one) and "cgroup": its directory.
func (c *Cgroup) Limits() (map[string]string, error) { return c.group().Limits() }
