package hostinfo

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"syscall"
	"time"

	"github.com/knee-dev/knee/rundir"
	"github.com/prometheus/procfs"
)

// procTimes is one process's CPU time at a sample.
type procTimes struct {
	comm string
	cpu  float64 // utime + stime, seconds
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

// snapshot reads every /proc/PID/stat through procfs. Processes that exit
// while it reads are skipped.
func snapshot(procDir string) (map[int]procTimes, error) {
	fs, err := procfs.NewFS(procDir)
	if err != nil {
		return nil, fmt.Errorf("top processes: %w", err)
	}
	procs, err := fs.AllProcs()
	if err != nil {
		return nil, fmt.Errorf("top processes: %w", err)
	}
	out := map[int]procTimes{}
	for _, p := range procs {
		st, err := p.Stat()
		if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("top processes: pid %d: %w", p.PID, err)
		}
		out[p.PID] = procTimes{comm: st.Comm, cpu: st.CPUTime()}
	}
	return out, nil
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
		if !ok || pid == self || a.cpu <= b.cpu {
			continue
		}
		used := a.cpu - b.cpu
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
