package fault

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"

	"github.com/prometheus/procfs"
)

// SignalFreezer freezes one process with SIGSTOP and thaws it with SIGCONT,
// where no cgroup is available. Unlike a cgroup freeze it stops only that
// process, not its children, and the process's parent can see the stop.
type SignalFreezer struct {
	pid      int
	start    uint64 // starttime from /proc/PID/stat: detects a reused PID
	procRoot string
}

// procStat is what knee reads from /proc/PID/stat.
type procStat struct {
	state byte
	ppid  int
	start uint64 // clock ticks after boot
}

// NewSignalFreezer validates pid: it must exist and must not be knee
// itself, pid 1 or an ancestor of knee; when knee is not root it must
// belong to knee's user. Failures are *ValidationError.
func NewSignalFreezer(pid int) (*SignalFreezer, error) {
	return newSignalFreezer(procEnv{root: "/proc", self: os.Getpid(), euid: os.Geteuid()}, pid)
}

// procEnv is the process view the validation uses, injectable for tests.
type procEnv struct {
	root string // usually /proc
	self int
	euid int
}

func newSignalFreezer(env procEnv, pid int) (*SignalFreezer, error) {
	switch {
	case pid <= 0:
		return nil, invalid(ErrNoSuchPID, fmt.Sprintf("pid %d does not exist", pid))
	case pid == 1:
		return nil, invalid(ErrForbiddenPID, "pid 1 is init: knee will not stop it")
	case pid == env.self:
		return nil, invalid(ErrForbiddenPID, fmt.Sprintf("pid %d is knee itself", pid))
	}
	st, err := readProcStat(env.root, pid)
	if errors.Is(err, os.ErrNotExist) {
		return nil, invalid(ErrNoSuchPID, fmt.Sprintf("pid %d does not exist", pid))
	}
	if err != nil {
		return nil, err
	}
	for p := env.self; p > 1; {
		parent, err := readProcStat(env.root, p)
		if err != nil {
			return nil, fmt.Errorf("read ancestors of knee: %w", err)
		}
		if parent.ppid == pid {
			return nil, invalid(ErrForbiddenPID, fmt.Sprintf("pid %d is an ancestor of knee: stopping it would stop knee's own shell", pid))
		}
		p = parent.ppid
	}
	if env.euid != 0 {
		uids, err := procUIDs(env.root, pid)
		if err != nil {
			return nil, err
		}
		// kill(2) lets an unprivileged sender signal a process whose real
		// or saved uid is its own.
		if len(uids) < 3 || (uids[0] != env.euid && uids[2] != env.euid) {
			return nil, invalid(ErrNotOurs, fmt.Sprintf("pid %d belongs to another user (uids %v, knee runs as %d)", pid, uids, env.euid))
		}
	}
	return &SignalFreezer{pid: pid, start: st.start, procRoot: env.root}, nil
}

// PID is the process this freezer stops.
func (s *SignalFreezer) PID() int { return s.pid }

// String is "pid:N", as recorded in rundir.Fault.Target.
func (s *SignalFreezer) String() string { return "pid:" + strconv.Itoa(s.pid) }

// Method is "sigstop", as recorded in rundir.Fault.Method.
func (s *SignalFreezer) Method() string { return MethodSIGSTOP }

// Freeze sends SIGSTOP and waits until the process is stopped.
func (s *SignalFreezer) Freeze(ctx context.Context) error {
	if err := s.same(); err != nil {
		return err
	}
	if err := syscall.Kill(s.pid, syscall.SIGSTOP); err != nil {
		return fmt.Errorf("freeze %s: %w", s, err)
	}
	err := waitFor(ctx, func() (bool, error) {
		st, err := readProcStat(s.procRoot, s.pid)
		switch {
		case err != nil:
			return false, err
		case st.state == 'Z' || st.state == 'X':
			return false, fmt.Errorf("process exited")
		}
		return st.state == 'T' || st.state == 't', nil
	})
	if err != nil {
		return errors.Join(fmt.Errorf("freeze %s: %w", s, err), s.Thaw())
	}
	return nil
}

// Thaw sends SIGCONT. A process that has exited needs no thaw.
func (s *SignalFreezer) Thaw() error {
	if err := syscall.Kill(s.pid, syscall.SIGCONT); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("thaw %s: %w", s, err)
	}
	return nil
}

// same checks that the PID still names the process that was validated.
func (s *SignalFreezer) same() error {
	st, err := readProcStat(s.procRoot, s.pid)
	if err != nil || st.start != s.start {
		return invalid(ErrNoSuchPID, fmt.Sprintf("pid %d has exited", s.pid))
	}
	return nil
}

// readProcStat reads /proc/PID/stat under root (usually /proc) through
// procfs. A missing process is an error matching os.ErrNotExist.
func readProcStat(root string, pid int) (procStat, error) {
	p, err := proc(root, pid)
	if err != nil {
		return procStat{}, err
	}
	st, err := p.Stat()
	if err != nil {
		return procStat{}, fmt.Errorf("pid %d stat: %w", pid, err)
	}
	if len(st.State) != 1 {
		return procStat{}, fmt.Errorf("pid %d stat: state %q is not one letter", pid, st.State)
	}
	return procStat{state: st.State[0], ppid: st.PPID, start: st.Starttime}, nil
}

// procUIDs returns the real, effective, saved and filesystem uids of pid.
func procUIDs(root string, pid int) ([]int, error) {
	p, err := proc(root, pid)
	if err != nil {
		return nil, err
	}
	st, err := p.NewStatus()
	if err != nil {
		return nil, fmt.Errorf("pid %d status: %w", pid, err)
	}
	uids := make([]int, len(st.UIDs))
	for i, u := range st.UIDs {
		uids[i] = int(u)
	}
	return uids, nil
}

func proc(root string, pid int) (procfs.Proc, error) {
	fs, err := procfs.NewFS(root)
	if err != nil {
		return procfs.Proc{}, err
	}
	return fs.Proc(pid)
}
