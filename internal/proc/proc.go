// Package proc reads /proc through prometheus/procfs (and /proc/PID/stat
// itself, the file a process scan reads for every process), below a root
// that tests can point at a fake tree: the one reader of processes, CPU times and
// the load average for the environment note (hostinfo) and the USE probes.
package proc

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

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

// userHZ is the unit of /proc/PID/stat's CPU times: USER_HZ, 100 on every
// Linux architecture knee runs on (procfs assumes the same).
const userHZ = 100

// parseStat reads the fields knee uses from a /proc/PID/stat line. comm may
// hold spaces and parentheses: it ends at the line's last ')'.
func parseStat(line []byte) (Stat, error) {
	open, end := bytes.IndexByte(line, '('), bytes.LastIndexByte(line, ')')
	if open < 0 || end < open {
		return Stat{}, fmt.Errorf("no (comm) in %q", line)
	}
	// After comm: state (field 3), ppid (4), ..., utime (14), stime (15).
	f := bytes.Fields(line[end+1:])
	if len(f) < 13 {
		return Stat{}, fmt.Errorf("%d fields after comm, want at least 13", len(f))
	}
	ppid, err := strconv.Atoi(string(f[1]))
	if err != nil {
		return Stat{}, fmt.Errorf("ppid: %w", err)
	}
	utime, err := strconv.ParseUint(string(f[11]), 10, 64)
	if err != nil {
		return Stat{}, fmt.Errorf("utime: %w", err)
	}
	stime, err := strconv.ParseUint(string(f[12]), 10, 64)
	if err != nil {
		return Stat{}, fmt.Errorf("stime: %w", err)
	}
	return Stat{CPU: float64(utime+stime) / userHZ, State: string(f[0]), PPID: ppid, Comm: string(line[open+1 : end])}, nil
}

// statFile reads and parses one /proc/PID/stat into buf's space: a system
// call to open, one or two to read and one to close, where os.ReadFile
// adds a stat and the netpoller's attempt to register the file.
func (p FS) statFile(pid int, buf []byte) (Stat, []byte, error) {
	name := filepath.Join(p.dir(), strconv.Itoa(pid), "stat")
	fd, err := unix.Open(name, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return Stat{}, buf, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	defer unix.Close(fd) //nolint:errcheck // read-only
	buf = buf[:0]
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := unix.Read(fd, buf[len(buf):cap(buf)])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return Stat{}, buf, &fs.PathError{Op: "read", Path: name, Err: err}
		}
		if n == 0 {
			break
		}
		buf = buf[:len(buf)+n]
	}
	st, err := parseStat(buf)
	if err != nil {
		return Stat{}, buf, fmt.Errorf("%s: %w", name, err)
	}
	return st, buf, nil
}

// Stat reads /proc/<pid>/stat.
func (p FS) Stat(pid int) (Stat, error) {
	st, _, err := p.statFile(pid, make([]byte, 0, statBuf))
	if gone(err) {
		return Stat{}, fmt.Errorf("process %d: %w", pid, ErrGone)
	}
	if err != nil {
		return Stat{}, fmt.Errorf("process %d: %w", pid, err)
	}
	return st, nil
}

// statBuf holds a stat line whole: ~52 numbers and a comm of up to 64 bytes.
const statBuf = 1024

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
	buf := make([]byte, 0, statBuf)
	for _, proc := range procs {
		var st Stat
		st, buf, err = p.statFile(proc.PID, buf)
		if gone(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("process %d: %w", proc.PID, err)
		}
		out[proc.PID] = st
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
