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
	"math"
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
// hold spaces and parentheses: it ends at the line's last ')'. The fields
// after it are walked in place (a scan reads every process's line, four
// times a run: bytes.Fields and strconv on copies were a third of its CPU).
func parseStat(line []byte) (Stat, error) {
	open, end := bytes.IndexByte(line, '('), bytes.LastIndexByte(line, ')')
	if open < 0 || end < open {
		return Stat{}, fmt.Errorf("no (comm) in %q", line)
	}
	// After comm: state (field 3), ppid (4), ..., utime (14), stime (15).
	var f [13][]byte
	n := 0
	for rest := line[end+1:]; n < len(f); n++ {
		rest = bytes.TrimLeft(rest, " \t\n")
		if len(rest) == 0 {
			break
		}
		i := bytes.IndexAny(rest, " \t\n")
		if i < 0 {
			i = len(rest)
		}
		f[n], rest = rest[:i], rest[i:]
	}
	if n < len(f) {
		return Stat{}, fmt.Errorf("%d fields after comm, want at least 13", n)
	}
	ppid, err := decimal(f[1])
	if err != nil || ppid > math.MaxInt32 {
		return Stat{}, fmt.Errorf("ppid: %q is not a process id", f[1])
	}
	utime, err := decimal(f[11])
	if err != nil {
		return Stat{}, fmt.Errorf("utime: %w", err)
	}
	stime, err := decimal(f[12])
	if err != nil {
		return Stat{}, fmt.Errorf("stime: %w", err)
	}
	return Stat{CPU: float64(utime+stime) / userHZ, State: string(f[0]), PPID: int(ppid), Comm: string(line[open+1 : end])}, nil
}

// decimal parses an unsigned decimal number of 64 bits, as
// strconv.ParseUint(s, 10, 64) does, without a string copy.
func decimal(b []byte) (uint64, error) {
	if len(b) == 0 {
		return 0, errors.New("empty number")
	}
	var v uint64
	for _, c := range b {
		d := uint64(c - '0')
		if d > 9 {
			return 0, fmt.Errorf("%q is not a decimal number", b)
		}
		if v > (math.MaxUint64-d)/10 {
			return 0, fmt.Errorf("%q is out of range", b)
		}
		v = v*10 + d
	}
	return v, nil
}

// statFile reads and parses one /proc/PID/stat into buf's space: a system
// call to open, one to read (see readStat) and one to close, where
// os.ReadFile adds a stat and the netpoller's attempt to register the file.
// dir is an open descriptor of the proc directory, or -1 to open by the
// whole path.
func (p FS) statFile(dir, pid int, buf []byte) (Stat, []byte, error) {
	fd, err := p.openStat(dir, pid)
	if err != nil {
		return Stat{}, buf, err
	}
	defer unix.Close(fd) //nolint:errcheck // read-only
	return p.readStat(fd, pid, buf)
}

// statName is pid's stat file, for errors.
func (p FS) statName(pid int) string { return filepath.Join(p.dir(), strconv.Itoa(pid), "stat") }

// openStat opens pid's stat file, relative to dir (an open descriptor of
// the proc directory) or by the whole path when dir is -1.
func (p FS) openStat(dir, pid int) (int, error) {
	var fd int
	var err error
	if dir >= 0 {
		fd, err = unix.Openat(dir, strconv.Itoa(pid)+"/stat", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	} else {
		fd, err = unix.Open(p.statName(pid), unix.O_RDONLY|unix.O_CLOEXEC, 0)
	}
	if err != nil {
		return -1, &fs.PathError{Op: "open", Path: p.statName(pid), Err: err}
	}
	return fd, nil
}

// readStat reads and parses the stat line of fd, pid's open stat file,
// from its start, into buf's space: one system call (a second only when
// the line did not fit or came without its newline). The kernel makes the
// line again at each read from the start, so a file kept open reads the
// process as it is now.
func (p FS) readStat(fd, pid int, buf []byte) (Stat, []byte, error) {
	buf = buf[:0]
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := unix.Pread(fd, buf[len(buf):cap(buf)], int64(len(buf)))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return Stat{}, buf, &fs.PathError{Op: "read", Path: p.statName(pid), Err: err}
		}
		if n == 0 {
			break
		}
		buf = buf[:len(buf)+n]
		// The kernel makes the whole line at the first read of a
		// buffer it fits in: a line ending in its newline is all.
		if len(buf) < cap(buf) && buf[len(buf)-1] == '\n' {
			break
		}
	}
	st, err := parseStat(buf)
	if err != nil {
		return Stat{}, buf, fmt.Errorf("%s: %w", p.statName(pid), err)
	}
	return st, buf, nil
}

// Stat reads /proc/<pid>/stat.
func (p FS) Stat(pid int) (Stat, error) {
	st, _, err := p.statFile(-1, pid, make([]byte, 0, statBuf))
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
	sc, stats, err := p.scan(0)
	if err != nil {
		return nil, err
	}
	sc.Close()
	return stats, nil
}

// heldScanFiles is how many stat files a Scan keeps open for its second
// reading; past them, a process's file is opened again by its name.
const heldScanFiles = 256

// Scan is a reading of every process's stat that can be made again for
// the same processes (Again) through the files it keeps open: no listing
// of /proc and no open or close per process the second time, the half of
// a scan's system calls. Close it after.
type Scan struct {
	p     FS
	pids  []int       // the processes of the first reading
	files map[int]int // pid -> its stat file, kept open (up to heldScanFiles)
	buf   []byte
}

// StartScan reads every process's stat, as AllStats does, and keeps the
// files open for Again.
func (p FS) StartScan() (*Scan, map[int]Stat, error) { return p.scan(heldScanFiles) }

// scan reads every process's stat, keeping up to hold files open.
func (p FS) scan(hold int) (*Scan, map[int]Stat, error) {
	fsys, err := p.fs()
	if err != nil {
		return nil, nil, err
	}
	procs, err := fsys.AllProcs()
	if err != nil {
		return nil, nil, err
	}
	// Each stat file is opened relative to the proc directory: a path
	// walk of two names instead of four.
	dir, err := unix.Open(p.dir(), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, &fs.PathError{Op: "open", Path: p.dir(), Err: err}
	}
	defer unix.Close(dir) //nolint:errcheck // read-only
	sc := &Scan{p: p, files: map[int]int{}, buf: make([]byte, 0, statBuf)}
	out := make(map[int]Stat, len(procs))
	for _, proc := range procs {
		fd, err := p.openStat(dir, proc.PID)
		if errors.Is(err, syscall.EMFILE) && len(sc.files) > 0 {
			// Out of descriptors (a run's connections hold them): keep
			// none, the second reading opens each file again.
			sc.Close()
			hold = 0
			fd, err = p.openStat(dir, proc.PID)
		}
		if gone(err) {
			continue
		}
		if err != nil {
			sc.Close()
			return nil, nil, fmt.Errorf("process %d: %w", proc.PID, err)
		}
		var st Stat
		st, sc.buf, err = p.readStat(fd, proc.PID, sc.buf)
		if err != nil || len(sc.files) >= hold {
			unix.Close(fd) //nolint:errcheck // read-only
		} else {
			sc.files[proc.PID] = fd
		}
		if gone(err) {
			continue
		}
		if err != nil {
			sc.Close()
			return nil, nil, fmt.Errorf("process %d: %w", proc.PID, err)
		}
		out[proc.PID] = st
		sc.pids = append(sc.pids, proc.PID)
	}
	return sc, out, nil
}

// Again reads the first reading's processes again, through their open
// files (or by name past heldScanFiles). Those gone meanwhile are left
// out, as is one whose PID now names another process (its kept file reads
// as gone); processes started since are not read.
func (sc *Scan) Again() (map[int]Stat, error) {
	out := make(map[int]Stat, len(sc.pids))
	for _, pid := range sc.pids {
		var st Stat
		var err error
		if fd, ok := sc.files[pid]; ok {
			st, sc.buf, err = sc.p.readStat(fd, pid, sc.buf)
		} else {
			st, sc.buf, err = sc.p.statFile(-1, pid, sc.buf)
		}
		if gone(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("process %d: %w", pid, err)
		}
		out[pid] = st
	}
	return out, nil
}

// Close closes the files the scan kept open.
func (sc *Scan) Close() {
	for _, fd := range sc.files {
		unix.Close(fd) //nolint:errcheck // read-only
	}
	clear(sc.files)
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
