package hostinfo

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/knee-dev/knee/rundir"
)

// clockTicks is USER_HZ, the unit of /proc/PID/stat times: 100 on every
// Linux architecture Go supports.
const clockTicks = 100

// procTimes is one process's CPU time at a sample.
type procTimes struct {
	comm  string
	ticks uint64 // utime + stime
}

// Top returns the TopN processes other than knee that used the most CPU
// over Options.Sample, busiest first; idle processes are left out.
func Top(ctx context.Context, opts Options) ([]rundir.Process, error) {
	opts = opts.withDefaults()
	if opts.TopN < 0 {
		return nil, nil
	}
	before, err := snapshot(opts.proc())
	if err != nil {
		return nil, err
	}
	start := time.Now()
	timer := time.NewTimer(opts.Sample)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return nil, fmt.Errorf("top processes: %w", ctx.Err())
	case <-timer.C:
	}
	after, err := snapshot(opts.proc())
	if err != nil {
		return nil, err
	}
	return rank(before, after, time.Since(start), opts.Self, opts.TopN), nil
}

// snapshot reads every /proc/PID/stat. Processes that exit while it reads
// are skipped.
func snapshot(procDir string) (map[int]procTimes, error) {
	entries, err := os.ReadDir(procDir)
	if err != nil {
		return nil, fmt.Errorf("top processes: %w", err)
	}
	out := map[int]procTimes{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || !e.IsDir() {
			continue
		}
		b, err := os.ReadFile(procDir + "/" + e.Name() + "/stat")
		if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("top processes: %w", err)
		}
		pt, err := parseStat(string(b))
		if err != nil {
			return nil, fmt.Errorf("top processes: pid %d: %w", pid, err)
		}
		out[pid] = pt
	}
	return out, nil
}

// parseStat reads the command name and utime+stime (fields 14 and 15) of a
// /proc/PID/stat line. The name may hold spaces and parentheses, so fields
// are counted from the last ')'.
func parseStat(s string) (procTimes, error) {
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || end < open {
		return procTimes{}, fmt.Errorf("stat %.40q: no (comm)", s)
	}
	rest := strings.Fields(s[end+1:])
	if len(rest) < 13 { // rest[0] is field 3
		return procTimes{}, fmt.Errorf("stat %.40q: want at least 15 fields", s)
	}
	utime, err1 := strconv.ParseUint(rest[11], 10, 64)
	stime, err2 := strconv.ParseUint(rest[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return procTimes{}, fmt.Errorf("stat times: %w", err)
	}
	return procTimes{comm: s[open+1 : end], ticks: utime + stime}, nil
}

// rank turns two samples elapsed apart into the n busiest processes other
// than self, in cores. Processes missing from either sample are left out.
func rank(before, after map[int]procTimes, elapsed time.Duration, self, n int) []rundir.Process {
	if elapsed <= 0 {
		return nil
	}
	var out []rundir.Process
	for pid, a := range after {
		b, ok := before[pid]
		if !ok || pid == self || a.ticks <= b.ticks {
			continue
		}
		used := float64(a.ticks-b.ticks) / clockTicks
		out = append(out, rundir.Process{PID: pid, Comm: a.comm, CPU: used / elapsed.Seconds()})
	}
	slices.SortFunc(out, func(x, y rundir.Process) int {
		if c := cmp.Compare(y.CPU, x.CPU); c != 0 {
			return c
		}
		return cmp.Compare(x.PID, y.PID)
	})
	if len(out) > n {
		out = out[:n]
	}
	return out
}
