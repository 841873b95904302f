package use

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/knee-dev/knee/cgroup"
	"github.com/prometheus/procfs"
)

// procFS reads /proc below root ("" is the real "/") through procfs, so
// tests can hand it a fake tree.
type procFS struct{ root string }

func (p procFS) dir() string {
	root := p.root
	if root == "" {
		root = "/"
	}
	return filepath.Join(root, "proc")
}

func (p procFS) fs() (procfs.FS, error) { return procfs.NewFS(p.dir()) }

// errGone marks a process that no longer exists.
var errGone = errors.New("process is gone")

// gone says whether err means the process (or thread) went away.
func gone(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH)
}

// pidOf turns a probe's PID field into a number: "" and "self" are this
// process (so fake trees name it by number like any other).
func pidOf(s string) (int, error) {
	if s == "" || s == "self" {
		return os.Getpid(), nil
	}
	pid, err := strconv.Atoi(s)
	if err != nil || pid <= 0 {
		return 0, fmt.Errorf("pid %q is not a process id", s)
	}
	return pid, nil
}

// pidStat is what knee reads from /proc/PID/stat.
type pidStat struct {
	cpu   float64 // utime + stime, seconds
	state string
	ppid  int
	comm  string
}

func statOf(st procfs.ProcStat) pidStat {
	return pidStat{cpu: st.CPUTime(), state: st.State, ppid: st.PPID, comm: st.Comm}
}

// pidStat reads /proc/<pid>/stat.
func (p procFS) pidStat(pid int) (pidStat, error) {
	fsys, err := p.fs()
	if err != nil {
		return pidStat{}, err
	}
	proc, err := fsys.Proc(pid)
	if err == nil {
		var st procfs.ProcStat
		if st, err = proc.Stat(); err == nil {
			return statOf(st), nil
		}
	}
	if gone(err) {
		return pidStat{}, fmt.Errorf("process %d: %w", pid, errGone)
	}
	return pidStat{}, fmt.Errorf("process %d: %w", pid, err)
}

// exists checks that pid is a process a probe can read.
func (p procFS) exists(pid int) error {
	if pid <= 0 {
		return fmt.Errorf("pid %d does not exist", pid)
	}
	_, err := p.pidStat(pid)
	if errors.Is(err, errGone) {
		return fmt.Errorf("pid %d does not exist", pid)
	}
	return err
}

// runnableThreads counts the threads of pid in state R.
func (p procFS) runnableThreads(pid int) (int, error) {
	fsys, err := p.fs()
	if err != nil {
		return 0, err
	}
	threads, err := fsys.AllThreads(pid)
	if gone(err) {
		return 0, fmt.Errorf("process %d: %w", pid, errGone)
	}
	if err != nil {
		return 0, err
	}
	n := 0
	for _, t := range threads {
		st, err := t.Stat()
		if gone(err) {
			continue // the thread ended while we looked
		}
		if err != nil {
			return 0, fmt.Errorf("process %d thread %d: %w", pid, t.PID, err)
		}
		if st.State == "R" {
			n++
		}
	}
	return n, nil
}

// cpuTimes is /proc/stat: the aggregate CPU times, the CPU count and the
// tasks runnable now.
type cpuTimes struct {
	busy, total float64 // seconds
	cpus        int     // "cpuN" lines
	running     int     // procs_running: runnable tasks, the reader included
}

// procStat reads /proc/stat. Busy is user, nice, system, irq, softirq and
// steal (guest time is already in user and nice); idle and iowait are not.
func (p procFS) procStat() (cpuTimes, error) {
	fsys, err := p.fs()
	if err != nil {
		return cpuTimes{}, err
	}
	st, err := fsys.Stat()
	if err != nil {
		return cpuTimes{}, err
	}
	if len(st.CPU) == 0 {
		return cpuTimes{}, fmt.Errorf("%s: no cpu lines", filepath.Join(p.dir(), "stat"))
	}
	c := st.CPUTotal
	busy := c.User + c.Nice + c.System + c.IRQ + c.SoftIRQ + c.Steal
	return cpuTimes{busy: busy, total: busy + c.Idle + c.Iowait, cpus: len(st.CPU), running: int(st.ProcessesRunning)}, nil
}

// load1 reads the 1-minute load average.
func (p procFS) load1() (float64, error) {
	fsys, err := p.fs()
	if err != nil {
		return 0, err
	}
	la, err := fsys.LoadAvg()
	if err != nil {
		return 0, err
	}
	return la.Load1, nil
}

// allStats reads every process's /proc/PID/stat. Processes that exit while
// it reads are skipped.
func (p procFS) allStats() (map[int]pidStat, error) {
	fsys, err := p.fs()
	if err != nil {
		return nil, err
	}
	procs, err := fsys.AllProcs()
	if err != nil {
		return nil, err
	}
	out := make(map[int]pidStat, len(procs))
	for _, proc := range procs {
		st, err := proc.Stat()
		if gone(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("process %d: %w", proc.PID, err)
		}
		out[proc.PID] = statOf(st)
	}
	return out, nil
}

// cgroupDir finds the directory of pid's CPU cgroup. It returns "" for the
// root cgroup, whose accounting is the whole machine's, and for a process
// in no mounted cpu hierarchy.
func (p procFS) cgroupDir(pid int, h cgroup.Hierarchy) (string, error) {
	fsys, err := p.fs()
	if err != nil {
		return "", err
	}
	proc, err := fsys.Proc(pid)
	if gone(err) {
		return "", fmt.Errorf("process %d: %w", pid, errGone)
	}
	if err != nil {
		return "", err
	}
	place, err := cgroup.CPUPlace(proc, h)
	switch {
	case errors.Is(err, cgroup.ErrNoCPUCgroup):
		return "", nil
	case gone(err):
		return "", fmt.Errorf("process %d: %w", pid, errGone)
	case err != nil:
		return "", err
	case place.IsRoot():
		return "", nil
	}
	return place.Dir(), nil
}
