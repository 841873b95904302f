package hostinfo

import (
	"cmp"
	"context"
	"fmt"
	"github.com/knee-dev/knee/internal/proc"
	"slices"
	"time"

	"github.com/knee-dev/knee/rundir"
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
	// The second sample reads the first one's processes again through the
	// files it kept open: a process started between the two is not ranked
	// anyway.
	sc, first, err := proc.FS{Root: opts.Root}.StartScan()
	if err != nil {
		return nil, fmt.Errorf("top processes: %w", err)
	}
	defer sc.Close()
	start := time.Now()
	timer := time.NewTimer(opts.Sample)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return nil, fmt.Errorf("top processes: %w", ctx.Err())
	case <-timer.C:
	}
	second, err := sc.Again()
	if err != nil {
		return nil, fmt.Errorf("top processes: %w", err)
	}
	return rank(times(first), times(second), time.Since(start), opts.Self, opts.TopN), nil
}

// times is every process's CPU time of a sample.
func times(stats map[int]proc.Stat) map[int]procTimes {
	out := make(map[int]procTimes, len(stats))
	for pid, st := range stats {
		out[pid] = procTimes{comm: st.Comm, cpu: st.CPU}
	}
	return out
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
