// Package runner runs a scenario configuration into a run directory: it wires
// the load engine (package load) to the requests (request), the recorder
// (record), the faults (fault) and the run directory writer (run), flushes
// every interval as it goes and prints progress.
//
// It is the one place where these meet, so load never imports record and the
// CLI and the lab stay thin. The end-of-run summary is computed by reading the
// run directory back (analyze.Summarize), the same path every import takes.
// Steps is a stepped run (knee steps, the lab's curves) measured by
// analyze.Analyze; printing and plots are its callers'.
package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/knee-dev/knee/fault"
	"github.com/knee-dev/knee/hostinfo"
	"github.com/knee-dev/knee/internal/version"
	"github.com/knee-dev/knee/load"
	"github.com/knee-dev/knee/record"
	"github.com/knee-dev/knee/redact"
	"github.com/knee-dev/knee/request"
	"github.com/knee-dev/knee/rundir"
	"github.com/knee-dev/knee/scenario"
	"github.com/knee-dev/knee/use"
	"github.com/knee-dev/knee/use/probe"
)

// DefaultInterval is how often histograms are rotated and flushed.
const DefaultInterval = time.Second

// Options tune Execute, ExecuteScript and Steps. Dir is required.
type Options struct {
	Dir          string        // the run directory to create
	Interval     time.Duration // histogram rotation; 0 means DefaultInterval
	SendLagLimit time.Duration // send-lag p99 that flags the generator; 0 means analyze.DefaultSendLagLimit
	Progress     io.Writer     // progress lines; nil for none
	Live         bool          // Progress is a terminal: rewrite one line instead of printing lines
	Abort        <-chan struct{}
	// Target is what a fault without its own target freezes (the lab's
	// Bookstore cgroup, or --target-pid / --target-cgroup); nil for none.
	Target       fault.Freezer
	FaultState   string // directory of the frozen-targets state file; "" for the default
	TargetPID    int    // the target's PID, for its cgroup limits in the environment note
	TargetCommit string
	Notes        []string
	StepPlan     *rundir.StepPlan    // a stepped run's plan, for run.json (Steps sets it)
	Getenv       func(string) string // for the default fault state directory; nil means none
	// Resources turns on USE sampling every second into resources.jsonl:
	// Probes (the target's CPU, /metrics, PostgreSQL) plus the machine and
	// the generator, which are always sampled when it is on.
	Resources bool
	Probes    []probe.Probe
	// SkipEnvironment leaves out the environment note's /proc sampling (tests).
	SkipEnvironment bool
	Split           Split // this runner's part of a test split among runners
	// OnInterval, if set, is given every interval as it is written, with
	// its wall-clock end (live outputs such as prometheus-rw). It must not
	// block, and must copy or merge what it keeps of snap's histograms: they
	// are recycled for a later interval once it returns.
	OnInterval func(meta *rundir.Meta, end time.Time, snap record.IntervalSnapshot)
	// OnRecord, if set, is given every interval as the run directory records
	// it (rundir.NewInterval: with each scenario's offered rate and VUs) and
	// the run's meta so far: the live dashboard's feed, so it need not read
	// the directory back. It must not block nor change what it is given,
	// and must copy what it keeps of iv's histograms (recycled, as
	// OnInterval's).
	OnRecord func(meta rundir.Meta, iv rundir.Interval)
	// Iterations, when set, gives each scenario's iteration instead of a
	// request.Sender built from its Requests (a k6 script's VUs).
	Iterations func(scenario.Scenario) load.Iteration
	// Completed is a cause of ctx's cancellation that means the run is
	// complete (a script's iteration count was reached), not interrupted.
	Completed error
	// AfterLoad, when set, is called once the load has stopped; its notes
	// go into run.json.
	AfterLoad func() []string
	// OnLoad, when set, is called as the load starts (at t0, before the
	// first iteration), with its live counters (load.Generator.Stats, safe
	// to call from any goroutine, during and after the load): for what
	// samples the VUs beside the intervals (a script's vus and vus_max).
	OnLoad func(stats func() []load.Stats)
	// OnDropped, when set, is told of every n iterations of a scenario
	// dropped (no free VU, or the generator too late to start them), on
	// load's scheduler goroutines: a script's dropped_iterations samples.
	// It must not block.
	OnDropped func(scenario string, n int64)
}

// Result is what a run left behind.
type Result struct {
	Dir       string
	Run       *rundir.Dir
	Summary   rundir.Summary
	Resources []use.Sample // USE samples, when Options.Resources
	// Notices are what must be read before the summary: each scenario's
	// dropped iterations, how many, why and the setting that avoids them.
	Notices []string
}

// ErrRunDir is wrapped by every error of writing the run directory: a
// failure of the run (exit 1 at the command line), not of its configuration.
var ErrRunDir = errors.New("writing the run directory failed")

// Execute runs cfg until its scenarios end or ctx is cancelled (graceful stop:
// in-flight requests get the scenario's gracefulStop), writing the run
// directory as it goes. An interrupted run still returns its Result, with
// Summary.Interrupted set, and a nil error: what it measured is kept.
//
// A nil Result means nothing ran: the configuration or its targets were
// wrong, or the run directory could not be created (the error wraps
// ErrRunDir). Once the load has run, the Result is never nil, even with an
// error: a run directory that could not be written whole (ErrRunDir) or a
// load that failed still leaves a summary of what was measured.
func Execute(ctx context.Context, cfg *scenario.Config, opt Options) (*Result, error) {
	if opt.Dir == "" {
		return nil, errors.New("runner: no run directory given")
	}
	if opt.Interval <= 0 {
		opt.Interval = DefaultInterval
	}
	// Secrets stop here: requests are named without them, and every text
	// run.json and resources.jsonl take from outside (notes, errors, probe
	// errors) is scrubbed by red.
	red := cfg.Redactor()
	cfg = cfg.Redacted(red)
	opt.Probes = redactProbes(opt.Probes, red)
	faults, err := ResolveFaults(cfg.Faults, opt.Target)
	if err != nil {
		return nil, err
	}
	var part *rundir.Part
	if opt.Split.active() {
		var notes []string
		if cfg, part, notes, err = splitConfig(cfg, opt.Split); err != nil {
			return nil, err
		}
		opt.Notes = append(opt.Notes, notes...)
	}
	// An impossible rate is refused before the start (this runner's share
	// of a split test is what it has to start).
	for _, sc := range cfg.Scenarios {
		if err := load.CheckPeakRate(sc.Executor, runtime.NumCPU()); err != nil {
			return nil, fmt.Errorf("scenario %s: %w", sc.Name, err)
		}
	}
	scs, senders, err := build(cfg, opt.Iterations)
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, s := range senders {
			s.Close()
		}
	}()

	meta := newMeta(cfg)
	meta.Notes = append(meta.Notes, opt.Notes...)
	fileNote := fileLimitNote(cfg, openFileLimit())
	if fileNote != "" {
		meta.Notes = append(meta.Notes, fileNote)
		if opt.Progress != nil {
			fmt.Fprintln(opt.Progress, "knee: WARNING: "+fileNote)
		}
	}
	meta.Part = part
	meta.StepPlan = opt.StepPlan
	scaleTargets(&meta, opt.Split.Share)
	hostOpts := hostinfo.Options{KneeVersion: version.String(), TargetPID: opt.TargetPID, TargetCommit: opt.TargetCommit}
	if !opt.SkipEnvironment {
		env, err := hostinfo.Collect(ctx, hostOpts)
		if err != nil {
			meta.Notes = append(meta.Notes, "environment note incomplete: "+err.Error())
		}
		meta.Env = env
	}
	meta.Env.KneeVersion = version.String()
	if err := waitUntil(ctx, opt.Split.StartAt); err != nil {
		return nil, err
	}
	if opt.Split.Release != nil {
		at, err := opt.Split.Release(ctx)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrNotReleased, err)
		}
		meta.Part.StartAt = at
	}

	redactMeta(&meta, red)
	w, err := rundir.Create(opt.Dir, meta)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrRunDir, err)
	}
	e := &engine{opt: opt, red: red, w: w, meta: meta, rec: record.NewRecorder(time.Now()), mem: newTotals(), source: cfg.Source}
	runErr := e.run(ctx, scs, faults, gracefulStop(cfg))
	if p := e.meta.Part; p != nil && !e.t0.IsZero() {
		p.T0, p.Interval = e.t0, opt.Interval
		if !p.StartAt.IsZero() {
			p.StartOffset = e.t0.Sub(p.StartAt)
		}
	}
	if opt.Completed != nil && errors.Is(runErr, opt.Completed) {
		runErr = nil
	}
	if opt.AfterLoad != nil {
		e.meta.Notes = append(e.meta.Notes, opt.AfterLoad()...)
	}

	if !opt.SkipEnvironment {
		if err := hostinfo.Finish(context.WithoutCancel(ctx), hostOpts, &e.meta.Env); err != nil {
			e.meta.Notes = append(e.meta.Notes, "environment note after the run incomplete: "+err.Error())
		}
	}
	res, err := e.finish(runErr)
	if res != nil && fileNote != "" {
		res.Notices = append([]string{"WARNING: " + fileNote}, res.Notices...)
	}
	return res, err
}

// build turns every scenario into a load.Scenario driven by a request.Sender.
func build(cfg *scenario.Config, iterations func(scenario.Scenario) load.Iteration) ([]load.Scenario, []*request.Sender, error) {
	var scs []load.Scenario
	var senders []*request.Sender
	for _, sc := range cfg.Scenarios {
		if iterations != nil {
			scs = append(scs, sc.Load(iterations(sc)))
			continue
		}
		s, err := request.NewSender(sc.Requests, cfg.SenderOptions())
		if err != nil {
			for _, o := range senders {
				o.Close()
			}
			return nil, nil, fmt.Errorf("scenario %q: %w", sc.Name, err)
		}
		senders = append(senders, s)
		scs = append(scs, sc.Load(s))
	}
	return scs, senders, nil
}

// newMeta notes what was asked.
func newMeta(cfg *scenario.Config) rundir.Meta {
	m := rundir.Meta{
		KneeVersion: version.String(),
		Source:      "knee",
		SourceFile:  cfg.Source,
		Started:     time.Now(),
	}
	models := map[string]bool{}
	for _, sc := range cfg.Scenarios {
		models[sc.Model()] = true
		d, err := sc.RunMeta()
		if err != nil {
			m.Notes = append(m.Notes, err.Error())
		}
		m.Scenarios = append(m.Scenarios, d)
	}
	switch {
	case len(models) == 1 && models[load.ModelOpen]:
		m.Model = load.ModelOpen
	case len(models) == 1 && models[load.ModelClosed]:
		m.Model = load.ModelClosed
	default:
		m.Model = "mixed"
	}
	m.ID = m.Started.UTC().Format("2006-01-02T15-04-05")
	return m
}

// engine is one run in progress.
type engine struct {
	opt  Options
	red  *redact.Redactor // scrubs what run.json takes from outside
	w    *rundir.Writer
	meta rundir.Meta
	rec  *record.Recorder

	lr    *load.Generator // set before the load starts
	total time.Duration   // how long the scenarios start iterations
	open  map[string]bool // scenarios of the open model
	cpu   float64         // generator CPU seconds spent on the load

	// due is, per scenario, the iterations due (started or dropped) by the
	// last interval written; guarded by mu.
	due map[string]int64

	returned atomic.Int64 // when returnMemory last ran, Unix ns

	mu      sync.Mutex // guards the fields below and meta's Faults, Notes and Counters
	t0      time.Time
	stopped time.Time // when the run's context ended (a signal), zero if it did not
	last    lastInterval
	scratch *record.Histogram // summarize's, reused
	werr    error             // the first failure writing latency.hlog or counters.jsonl; they get nothing after it
	rerr    error             // the first failure writing resources.jsonl
	mem     *totals           // the whole run in memory, for the summary when the files fail

	drops  firstDrops     // when each scenario first dropped an iteration (its own lock)
	fail   firstFailure   // the first failed request's error (its own lock)
	maxVUs map[string]int // per scenario, the most VUs it may run
	source string         // the scenario file, "" when built from flags

	resources []use.Sample

	pmu  sync.Mutex // one writer of the progress stream at a time
	line string     // the live progress line on the terminal now, guarded by pmu
}
