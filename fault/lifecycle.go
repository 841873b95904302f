package fault

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"time"
)

// StartInCgroup starts cmd with its process inside cg. On v2 the child is
// born inside (clone3 with CLONE_INTO_CGROUP through SysProcAttr.CgroupFD).
// On v1 it is moved in right after Start, so for a few microseconds it runs
// outside, before it has executed anything of its own; a child that cannot
// be moved is killed and waited for. The caller owns cmd.Wait otherwise.
// Remove kills the processes started here that are still in the cgroup.
func StartInCgroup(ctx context.Context, cmd *exec.Cmd, cg *Cgroup) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("start %s: %w", cmd.Path, err)
	}
	if cg.version == 2 {
		dir, err := os.Open(cg.dirs[""])
		if err != nil {
			return fmt.Errorf("start in cgroup: %w", err)
		}
		defer dir.Close()
		if cmd.SysProcAttr == nil {
			cmd.SysProcAttr = &syscall.SysProcAttr{}
		}
		cmd.SysProcAttr.UseCgroupFD = true
		cmd.SysProcAttr.CgroupFD = int(dir.Fd())
		if err := cmd.Start(); err != nil {
			return fmt.Errorf("start %s in cgroup %s: %w", cmd.Path, cg, err)
		}
		cg.track(cmd.Process.Pid)
		return nil
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", cmd.Path, err)
	}
	if err := cg.AddPID(cmd.Process.Pid); err != nil {
		// We started it, so we may and must stop it.
		return errors.Join(err, cmd.Process.Kill(), ignoreExit(cmd.Wait()))
	}
	cg.track(cmd.Process.Pid)
	return nil
}

// ignoreExit drops the *exec.ExitError of a process we just killed.
func ignoreExit(err error) error {
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return nil
	}
	return err
}

// removeWait bounds how long Remove waits for killed processes to leave.
const removeWait = 5 * time.Second

// Remove thaws the cgroup and, for one knee created, kills the processes
// StartInCgroup started that are still in it, moves any others (added with
// AddPID) back to the hierarchy's root cgroup, and deletes its directories.
// The shared <mount>/knee parent stays. An opened cgroup is only thawed.
func (c *Cgroup) Remove() error {
	var errs []error
	if c.dir("freezer") != "" {
		errs = append(errs, c.Thaw())
	}
	if !c.created {
		return errors.Join(errs...)
	}
	procs, err := c.Procs()
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return errors.Join(append(errs, err)...)
	}
	c.mu.Lock()
	started := slices.Clone(c.started)
	c.mu.Unlock()
	for _, pid := range procs {
		if slices.Contains(started, pid) {
			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
				errs = append(errs, fmt.Errorf("kill pid %d: %w", pid, err))
			}
			continue
		}
		errs = append(errs, c.release(pid))
	}
	errs = append(errs, c.waitEmpty())
	for _, dir := range c.uniqueDirs() {
		if err := os.Remove(dir); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, fmt.Errorf("remove cgroup: %w", err))
		}
	}
	return errors.Join(errs...)
}

// release moves a process knee did not start back to the root cgroup of
// each hierarchy the cgroup spans.
func (c *Cgroup) release(pid int) error {
	for ctl, dir := range c.dirs {
		root := c.h.V2
		if c.version == 1 {
			root = c.h.V1[ctl]
		}
		if root == "" {
			root = filepath.Dir(filepath.Dir(dir)) // <root>/knee/<name>
		}
		err := writeFile(filepath.Join(root, "cgroup.procs"), strconv.Itoa(pid))
		if err != nil && !errors.Is(err, syscall.ESRCH) {
			return fmt.Errorf("move pid %d out of %s: %w", pid, dir, err)
		}
	}
	return nil
}

// waitEmpty waits until no process is left in the cgroup.
func (c *Cgroup) waitEmpty() error {
	deadline := time.Now().Add(removeWait)
	for {
		procs, err := c.Procs()
		if errors.Is(err, os.ErrNotExist) || (err == nil && len(procs) == 0) {
			return nil
		}
		if err != nil {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("cgroup %s still has processes %v", c, procs)
		}
		time.Sleep(pollEvery)
	}
}
