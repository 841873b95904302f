// Package proc reads /proc through prometheus/procfs, below a root that
// tests can point at a fake tree: the one reader of processes, CPU times and
// the load average for the environment note (hostinfo) and the USE probes.
package proc

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/knee-dev/knee/cgroup"
	"github.com/prometheus/procfs"
)

// FS reads /proc below Root ("" is the real "/").
type FS struct{ Root string }

func (p FS) dir() string {
	root := p.Root
	if root == "" {
		root = "/"
	}
	return filepath.Join(root, "proc")
}

func (p FS) fs() (procfs.FS, error) { return procfs.NewFS(p.dir()) }

// ErrGone marks a process that no longer exists.
var ErrGone = errors.New("process is gone")

// gone says whether err means the process (or thread) went away.
func gone(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH)
}

// PIDOf turns a probe's PID field into a number: "" and "self" are this
// process (so fake trees name it by number like any other).
func PIDOf(s string) (int, error) {
	if s == "" || s == "self" {
		return os.Getpid(), nil
	}
	pid, err := strconv.Atoi(s)
	if err != nil || pid <= 0 {
		return 0, fmt.Errorf("pid %q is not a process id", s)
	}
	return pid, nil
}

// Stat is what knee reads from /proc/PID/stat.
type Stat struct {
	CPU   float64 // utime + stime, seconds
	State string
	PPID  int
	Comm  string
}

func statOf(st procfs.ProcStat) Stat {
	return Stat{CPU: st.CPUTime(), State: st.State, PPID: st.PPID, Comm: st.Comm}
}

// Stat reads /proc/<pid>/stat.
func (p FS) Stat(pid int) (Stat, error) {
	fsys, err := p.fs()
	if err != nil {
		return Stat{}, err
	}
	proc, err := fsys.Proc(pid)
	if err == nil {
		var st procfs.ProcStat
		if st, err = proc.Stat(); err == nil {
			return statOf(st), nil
		}
	}
	if gone(err) {
		return Stat{}, fmt.Errorf("process %d: %w", pid, ErrGone)
	}
	return Stat{}, fmt.Errorf("process %d: %w", pid, err)
}

// Exists checks that pid is a process knee can read.
func (p FS) Exists(pid int) error {
	if pid <= 0 {
		return fmt.Errorf("pid %d does not exist", pid)
	}
	_, err := p.Stat(pid)
	if errors.Is(err, ErrGone) {
		return fmt.Errorf("pid %d does not exist", pid)
	}
	return err
}

// threads are pid's threads; ErrGone when the process is.
func (p FS) threads(pid int) (procfs.Procs, error) {
	fsys, err := p.fs()
	if err != nil {
		return nil, err
	}
	threads, err := fsys.AllThreads(pid)
	if gone(err) {
		return nil, fmt.Errorf("process %d: %w", pid, ErrGone)
	}
	return threads, err
}

// RunnableThreads counts the threads of pid in state R.
func (p FS) RunnableThreads(pid int) (int, error) {
	threads, err := p.threads(pid)
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

// RunQueueWait is how long pid's threads have spent runnable but waiting
// for a CPU, summed over /proc/PID/task/*/schedstat (its second field, in
// ns): the kernel's own account of the process's CPU saturation, with or
// without a cgroup. A thread that ends takes its share with it.
func (p FS) RunQueueWait(pid int) (time.Duration, error) {
	threads, err := p.threads(pid)
	if err != nil {
		return 0, err
	}
	var wait uint64
	read := 0
	for _, t := range threads {
		st, err := t.Schedstat()
		if gone(err) {
			continue // the thread ended while we looked
		}
		if err != nil {
			return 0, fmt.Errorf("process %d thread %d schedstat: %w", pid, t.PID, err)
		}
		wait += st.WaitingNanoseconds
		read++
	}
	if read == 0 {
		// No file at all is a kernel without schedstat, not a wait of 0.
		return 0, fmt.Errorf("process %d: no /proc/%d/task/*/schedstat to read", pid, pid)
	}
	return time.Duration(wait), nil
}

// CPUTimes is /proc/stat: the aggregate CPU times, the CPU count and the
// tasks runnable now.
type CPUTimes struct {
	Busy, Total float64 // seconds
	CPUs        int     // "cpuN" lines
	Running     int     // procs_running: runnable tasks, the reader included
}

// CPUTimes reads /proc/stat. Busy is user, nice, system, irq, softirq and
// steal (guest time is already in user and nice); idle and iowait are not.
func (p FS) CPUTimes() (CPUTimes, error) {
	fsys, err := p.fs()
	if err != nil {
		return CPUTimes{}, err
	}
	st, err := fsys.Stat()
	if err != nil {
		return CPUTimes{}, err
	}
	if len(st.CPU) == 0 {
		return CPUTimes{}, fmt.Errorf("%s: no cpu lines", filepath.Join(p.dir(), "stat"))
	}
	c := st.CPUTotal
	busy := c.User + c.Nice + c.System + c.IRQ + c.SoftIRQ + c.Steal
	return CPUTimes{Busy: busy, Total: busy + c.Idle + c.Iowait, CPUs: len(st.CPU), Running: int(st.ProcessesRunning)}, nil
}

// LoadAvg reads the 1, 5 and 15 minute load averages.
func (p FS) LoadAvg() ([3]float64, error) {
	fsys, err := p.fs()
	if err != nil {
		return [3]float64{}, err
	}
	la, err := fsys.LoadAvg()
	if err != nil {
		return [3]float64{}, err
	}
	return [3]float64{la.Load1, la.Load5, la.Load15}, nil
}

// AllStats reads every process's /proc/PID/stat. Processes that exit while
// it reads are skipped.
func (p FS) AllStats() (map[int]Stat, error) {
	fsys, err := p.fs()
	if err != nil {
		return nil, err
	}
	procs, err := fsys.AllProcs()
	if err != nil {
		return nil, err
	}
	out := make(map[int]Stat, len(procs))
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

// CgroupDir finds the directory of pid's CPU cgroup. It returns "" for the
// root cgroup, whose accounting is the whole machine's, and for a process
// in no mounted cpu hierarchy.
func (p FS) CgroupDir(pid int, h cgroup.Hierarchy) (string, error) {
	fsys, err := p.fs()
	if err != nil {
		return "", err
	}
	proc, err := fsys.Proc(pid)
	if gone(err) {
		return "", fmt.Errorf("process %d: %w", pid, ErrGone)
	}
	if err != nil {
		return "", err
	}
	place, err := cgroup.CPUPlace(proc, h)
	switch {
	case errors.Is(err, cgroup.ErrNoCPUCgroup):
		return "", nil
	case gone(err):
		return "", fmt.Errorf("process %d: %w", pid, ErrGone)
	case err != nil:
		return "", err
	case place.IsRoot():
		return "", nil
	}
	return place.Dir(), nil
}

// Proc is the procfs view of pid, for readers outside this package that
// take one (cgroup.CPUPlace).
func (p FS) Proc(pid int) (procfs.Proc, error) {
	fsys, err := p.fs()
	if err != nil {
		return procfs.Proc{}, err
	}
	return fsys.Proc(pid)
}

// Memory reads pid's resident set now and its high-water mark (VmRSS and
// VmHWM of /proc/PID/status), in bytes.
func (p FS) Memory(pid int) (rss, hwm uint64, err error) {
	pr, err := p.Proc(pid)
	if err != nil {
		return 0, 0, err
	}
	st, err := pr.NewStatus()
	if err != nil {
		return 0, 0, err
	}
	return st.VmRSS, st.VmHWM, nil
}
