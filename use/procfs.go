package use

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/knee-dev/knee/fault"
)

// defaultClockTick is USER_HZ, the unit of /proc/PID/stat times: 100 on
// every Linux architecture knee runs on.
const defaultClockTick = 100

// procFS reads /proc below root ("" is the real "/"), so tests can hand it a
// fake tree.
type procFS struct{ root string }

func (p procFS) path(elem ...string) string {
	root := p.root
	if root == "" {
		root = "/"
	}
	return filepath.Join(append([]string{root, "proc"}, elem...)...)
}

// pidStat is what knee reads from /proc/PID/stat.
type pidStat struct {
	ticks uint64 // utime + stime, in clock ticks
	state byte
}

// errGone marks a process that no longer exists.
var errGone = errors.New("process is gone")

// pidStat reads /proc/<pid>/stat; pid may be "self".
func (p procFS) pidStat(pid string) (pidStat, error) {
	b, err := os.ReadFile(p.path(pid, "stat"))
	if errors.Is(err, fs.ErrNotExist) {
		return pidStat{}, fmt.Errorf("process %s: %w", pid, errGone)
	}
	if err != nil {
		return pidStat{}, err
	}
	return parsePIDStat(b)
}

// parsePIDStat parses "pid (comm) state ppid ... utime stime ...". comm may
// hold spaces and parentheses, so fields count from the last ')'.
func parsePIDStat(b []byte) (pidStat, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return pidStat{}, errors.New("stat: no ')' after the command name")
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state); utime and stime are fields 14 and 15.
	if len(f) < 13 || len(f[0]) != 1 {
		return pidStat{}, fmt.Errorf("stat: %d fields after the command name, want at least 13", len(f))
	}
	ut, err1 := strconv.ParseUint(f[11], 10, 64)
	st, err2 := strconv.ParseUint(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return pidStat{}, fmt.Errorf("stat: utime/stime: %w", err)
	}
	return pidStat{ticks: ut + st, state: f[0][0]}, nil
}

// runnableThreads counts the threads of pid in state R.
func (p procFS) runnableThreads(pid string) (int, error) {
	tasks, err := os.ReadDir(p.path(pid, "task"))
	if errors.Is(err, fs.ErrNotExist) {
		return 0, fmt.Errorf("process %s: %w", pid, errGone)
	}
	if err != nil {
		return 0, err
	}
	n := 0
	for _, t := range tasks {
		st, err := p.pidStat(filepath.Join(pid, "task", t.Name()))
		if errors.Is(err, errGone) {
			continue // the thread ended while we looked
		}
		if err != nil {
			return 0, err
		}
		if st.state == 'R' {
			n++
		}
	}
	return n, nil
}

// cpuTimes is the aggregate "cpu" line of /proc/stat, in clock ticks.
type cpuTimes struct {
	busy, total uint64
	cpus        int // "cpuN" lines
}

// procStat reads /proc/stat.
func (p procFS) procStat() (cpuTimes, error) {
	f, err := os.Open(p.path("stat"))
	if err != nil {
		return cpuTimes{}, err
	}
	defer f.Close()
	var ct cpuTimes
	found := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		switch {
		case len(fields) == 0 || !strings.HasPrefix(fields[0], "cpu"):
		case fields[0] == "cpu":
			if ct.busy, ct.total, err = parseCPULine(fields[1:]); err != nil {
				return cpuTimes{}, err
			}
			found = true
		default:
			ct.cpus++
		}
	}
	if err := sc.Err(); err != nil {
		return cpuTimes{}, fmt.Errorf("read %s: %w", p.path("stat"), err)
	}
	if !found || ct.cpus == 0 {
		return cpuTimes{}, fmt.Errorf("%s: no cpu lines", p.path("stat"))
	}
	return ct, nil
}

// parseCPULine sums "user nice system idle iowait irq softirq steal": guest
// time is already in user and nice. Idle and iowait are not busy.
func parseCPULine(f []string) (busy, total uint64, err error) {
	if len(f) < 4 {
		return 0, 0, fmt.Errorf("/proc/stat: cpu line has %d values, want at least 4", len(f))
	}
	for i, s := range f[:min(len(f), 8)] {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("/proc/stat: cpu value %d: %w", i+1, err)
		}
		total += v
		if i != 3 && i != 4 {
			busy += v
		}
	}
	return busy, total, nil
}

// loadavg is /proc/loadavg: "0.50 0.40 0.30 3/200 1234".
type loadavg struct {
	load1    float64
	runnable int // tasks runnable now, the reader included
}

func (p procFS) loadavg() (loadavg, error) {
	b, err := os.ReadFile(p.path("loadavg"))
	if err != nil {
		return loadavg{}, err
	}
	f := strings.Fields(string(b))
	if len(f) < 4 {
		return loadavg{}, fmt.Errorf("loadavg: %d fields, want 5", len(f))
	}
	l1, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return loadavg{}, fmt.Errorf("loadavg: %w", err)
	}
	run, _, ok := strings.Cut(f[3], "/")
	n, err := strconv.Atoi(run)
	if !ok || err != nil {
		return loadavg{}, fmt.Errorf("loadavg: field 4 %q is not running/total", f[3])
	}
	return loadavg{load1: l1, runnable: n}, nil
}

// cgroupDir finds the directory of pid's CPU cgroup from /proc/PID/cgroup:
// the v1 line whose controllers include cpu, else the v2 "0::" line. It
// returns "" for the root cgroup, whose accounting is the whole machine's.
func (p procFS) cgroupDir(pid string, h fault.Hierarchy) (string, error) {
	b, err := os.ReadFile(p.path(pid, "cgroup"))
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("process %s: %w", pid, errGone)
	}
	if err != nil {
		return "", err
	}
	var v1, v2 string
	for _, line := range strings.Split(string(b), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[0] == "0" && parts[1] == "" {
			v2 = parts[2]
		}
		for _, c := range strings.Split(parts[1], ",") {
			if c == "cpu" {
				v1 = parts[2]
			}
		}
	}
	switch {
	case v1 != "" && h.V1["cpu"] != "":
		if v1 == "/" {
			return "", nil
		}
		return filepath.Join(h.V1["cpu"], v1), nil
	case v2 != "" && h.V2 != "":
		if v2 == "/" {
			return "", nil
		}
		return filepath.Join(h.V2, v2), nil
	}
	return "", nil
}
