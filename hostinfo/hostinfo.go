// Package hostinfo writes the environment note kept with every result
// (rundir.Environment): the host, its CPUs and kernel, the Go version, the load
// average and the other busiest processes before and after the run, the
// target's cgroup CPU limits, and what knee itself used.
//
// Everything is read from /proc and /sys under Options.Root, so tests run on
// hand-written trees. A piece that cannot be read is left empty and its error
// returned, joined with the others: a partial note is still worth keeping.
package hostinfo

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"github.com/knee-dev/knee/internal/proc"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/knee-dev/knee/rundir"
)

// Options says where to look and what to include. The zero value reads the
// real /proc, lists the top 5 other processes over a 250 ms sample and
// reports no target.
type Options struct {
	Root         string        // filesystem root holding proc/ and sys/; "" means "/"
	Self         int           // knee's PID, left out of the top list; 0 means os.Getpid()
	TopN         int           // other processes to list; 0 means 5, negative means none
	Sample       time.Duration // between the two /proc samples; 0 means 250 ms
	TargetPID    int           // the target whose cgroup limits are noted; 0 for none
	KneeVersion  string
	TargetCommit string
}

func (o Options) withDefaults() Options {
	if o.Root == "" {
		o.Root = "/"
	}
	if o.Self == 0 {
		o.Self = os.Getpid()
	}
	if o.TopN == 0 {
		o.TopN = 5
	}
	if o.Sample == 0 {
		o.Sample = 250 * time.Millisecond
	}
	return o
}

func (o Options) proc(parts ...string) string {
	return filepath.Join(append([]string{o.Root, "proc"}, parts...)...)
}

// floorWaits is how many timed waits of 1 ms WakeFloor takes at the start
// of a run: about Options.Sample's 250 ms, and enough for a p99.
const floorWaits = 200

// Collect notes the environment before a run: everything but LoadAfter,
// TopAfter and Generator, which Finish adds. It takes about Options.Sample.
func Collect(ctx context.Context, opts Options) (rundir.Environment, error) {
	opts = opts.withDefaults()
	env := rundir.Environment{
		KneeVersion:  opts.KneeVersion,
		TargetCommit: opts.TargetCommit,
		GoVersion:    runtime.Version(),
	}
	var errs []error
	add := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	var err error
	env.Host, err = readLine(opts.proc("sys/kernel/hostname"))
	add(err)
	env.Kernel, err = readLine(opts.proc("sys/kernel/osrelease"))
	add(err)
	env.CPUModel, env.CPUs, err = CPUInfo(opts.proc("cpuinfo"))
	add(err)
	env.LoadBefore, err = loadAvg(opts)
	add(err)
	// The floor is measured while Top waits between its two samples, so it
	// costs the run's start no time; Top's own work is two reads of /proc.
	floor := make(chan *rundir.WakeFloor, 1)
	go func() { floor <- WakeFloor(ctx, floorWaits, time.Millisecond) }()
	env.TopBefore, err = Top(ctx, opts)
	add(err)
	env.WakeFloor = <-floor
	if opts.TargetPID > 0 {
		env.TargetLimits, err = TargetLimits(opts, opts.TargetPID)
		add(err)
	}
	return env, errors.Join(errs...)
}

// Finish notes the environment after a run: LoadAfter and TopAfter. The
// Generator's figures are the run's own, which the caller measures around
// the load (Self, PeakRSS): the process's totals would include earlier runs.
func Finish(ctx context.Context, opts Options, env *rundir.Environment) error {
	opts = opts.withDefaults()
	var errs []error
	var err error
	if env.LoadAfter, err = loadAvg(opts); err != nil {
		errs = append(errs, err)
	}
	if env.TopAfter, err = Top(ctx, opts); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Self is what this process has used so far: user+system CPU seconds and
// peak resident memory, from getrusage(RUSAGE_SELF). Both are the process's
// totals since it started; for one run's peak use PeakRSS.
func Self() (rundir.Generator, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return rundir.Generator{}, fmt.Errorf("getrusage: %w", err)
	}
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	// Linux reports ru_maxrss in KiB.
	return rundir.Generator{CPUSeconds: cpu.Seconds(), PeakRSSMB: float64(ru.Maxrss) / 1024}, nil
}

// CPUInfo reads the CPU model (the first "model name", or "Hardware" on
// some ARM kernels) and the number of "processor" entries of /proc/cpuinfo.
func CPUInfo(path string) (model string, cpus int, err error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, fmt.Errorf("cpu info: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		key, value, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		switch key {
		case "processor":
			cpus++
		case "model name", "Hardware":
			if model == "" {
				model = value
			}
		}
	}
	if err := sc.Err(); err != nil {
		return "", 0, fmt.Errorf("cpu info: %w", err)
	}
	if cpus == 0 {
		cpus = runtime.NumCPU()
	}
	return model, cpus, nil
}

// loadAvg reads the 1, 5 and 15 minute load averages below opts.Root.
func loadAvg(opts Options) ([3]float64, error) {
	la, err := proc.FS{Root: opts.Root}.LoadAvg()
	if err != nil {
		return [3]float64{}, fmt.Errorf("load average: %w", err)
	}
	return la, nil
}

func readLine(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	return strings.TrimSpace(line), nil
}
