package runner

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"github.com/knee-dev/knee/analyze"
	"github.com/knee-dev/knee/fault"
	"github.com/knee-dev/knee/hostinfo"
	"github.com/knee-dev/knee/load"
	"github.com/knee-dev/knee/record"
	"github.com/knee-dev/knee/rundir"
	"github.com/knee-dev/knee/scenario"
	"github.com/knee-dev/knee/use"
)

// run drives the load, the interval rotation and the faults, and returns
// load's error. Every interval is written before it returns.
func (e *engine) run(ctx context.Context, scs []load.Scenario, faults []fault.Fault, grace time.Duration) error {
	// started is closed once load knows t0; the rotation and the faults both wait for it.
	started := make(chan struct{})
	lr, err := load.NewGenerator(scs, sinkAdapter{r: e.rec, drops: &e.drops, fail: &e.fail, onDrop: e.opt.OnDropped}, load.Options{
		GracefulStop: grace,
		Abort:        e.opt.Abort,
		// OnStart runs before the first iteration, so nothing is recorded
		// yet: intervals and faults both count from load's t0.
		OnStart: func(t0 time.Time) {
			e.rec.Begin(t0)
			e.mu.Lock()
			e.t0 = t0
			e.mu.Unlock()
			if e.opt.OnLoad != nil {
				e.opt.OnLoad(e.lr.Stats)
			}
			close(started)
		},
		OnShrink: e.returnMemory,
	})
	if err != nil {
		return err
	}
	e.lr = lr
	e.total = span(scs)
	e.due = map[string]int64{}
	e.open = map[string]bool{}
	e.maxVUs = map[string]int{}
	for _, sc := range scs {
		e.open[sc.Name] = sc.Executor.Model() == load.ModelOpen
		e.maxVUs[sc.Name] = sc.Executor.PeakVUs()
	}
	// When a signal stops the run, iterations stop starting then: the
	// summary's rate is over the time up to it. AfterFunc runs the note in
	// a goroutine of its own, which the load's end can outrun: once it has
	// started, the run waits for it, so finish always finds the stop.
	noted := make(chan struct{})
	unwatch := context.AfterFunc(ctx, func() {
		e.mu.Lock()
		e.stopped = time.Now()
		e.mu.Unlock()
		close(noted)
	})
	defer func() {
		if !unwatch() {
			<-noted
		}
	}()
	cpu0, cpuErr := hostinfo.Self()
	if cpuErr != nil {
		e.note("generator CPU not measured: reading it at the start failed: " + cpuErr.Error())
	}
	peak := hostinfo.StartPeakRSS(hostinfo.Options{}) // this run's own peak, not the process's (--repeat)
	defer func() {
		// The generator's CPU is what the load itself cost, not start-up or the environment note.
		cpu1, err := hostinfo.Self()
		switch {
		case err != nil:
			e.note("generator CPU not measured: reading it at the end failed: " + err.Error())
		case cpuErr == nil:
			e.cpu = cpu1.CPUSeconds - cpu0.CPUSeconds
		}
		mb, note, err := peak.Stop()
		e.meta.Env.Generator.PeakRSSMB = mb
		if note != "" {
			e.note(note)
		}
		if err != nil {
			e.note("environment note incomplete: " + err.Error())
		}
	}()

	loadDone := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { e.rotateLoop(started, loadDone) })
	faultCtx, stopFaults := context.WithCancel(context.WithoutCancel(ctx))
	if len(faults) > 0 {
		wg.Go(func() { e.runFaults(faultCtx, started, loadDone, faults) })
	}
	stopResources := func() []use.Sample { return nil }
	resourcesStarted := make(chan struct{})
	go func() {
		defer close(resourcesStarted)
		if t0, ok := e.awaitStart(started, loadDone); ok {
			stopResources = e.startResources(t0)
		}
	}()
	stopFloors := e.startFloors(ctx, scs, started, loadDone)
	runErr := lr.Run(ctx)
	stopFaults() // thaws whatever is still frozen
	close(loadDone)
	stopFloors()
	wg.Wait()
	<-resourcesStarted
	e.resources = stopResources()
	e.writeInterval(time.Now()) // the last, partial interval
	if e.opt.Live && e.opt.Progress != nil {
		fmt.Fprintln(e.opt.Progress)
	}
	return runErr
}

// rotateLoop closes an interval every opt.Interval after t0, on absolute
// deadlines so the intervals do not drift.
func (e *engine) rotateLoop(started, done <-chan struct{}) {
	t0, ok := e.awaitStart(started, done)
	if !ok {
		return
	}
	e.mu.Lock()
	e.beginLog(t0)
	e.mu.Unlock()
	timer := time.NewTimer(e.opt.Interval)
	defer timer.Stop()
	for n := 1; ; n++ {
		select {
		case <-done:
			return
		case <-timer.C:
		}
		now := time.Now()
		e.writeInterval(now)
		e.progress(now.Sub(t0))
		timer.Reset(time.Until(t0.Add(time.Duration(n+1) * e.opt.Interval)))
	}
}

// awaitStart returns t0 once the load has started; false if it ended first.
func (e *engine) awaitStart(started, done <-chan struct{}) (time.Time, bool) {
	select {
	case <-started:
	case <-done:
		return time.Time{}, false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.t0, true
}

// writeInterval rotates the recorder and appends the interval to the run directory.
func (e *engine) writeInterval(now time.Time) {
	snap := e.rec.Rotate(now)
	// Its histograms go back to the recorder once it is written: every
	// consumer below copies or merges what it keeps.
	defer e.rec.Recycle(snap)
	e.mu.Lock()
	defer e.mu.Unlock()
	extra := map[string]rundir.IntervalCounters{}
	if e.lr != nil {
		secs := (snap.End - snap.Start).Seconds()
		for _, st := range e.lr.Stats() {
			ic := rundir.IntervalCounters{BusyVUs: st.BusyVUs, VUs: st.VUs}
			// The offered rate is what the schedule made due in this interval,
			// whether or not the generator kept up: exact, unlike the rate at
			// the moment of writing or the starts (which trail a generator
			// behind its schedule and bunch up when it catches up).
			due := st.Due
			if e.open[st.Scenario] && secs > 0 {
				ic.TargetRate = float64(due-e.due[st.Scenario]) / secs
			}
			e.due[st.Scenario] = due
			extra[st.Scenario] = ic
		}
	}
	e.last = e.summarize(snap)
	// run.json's counters are the sum of every interval: what was sent,
	// whether or not the interval's own lines reach the disk.
	for _, c := range snap.Counters {
		e.meta.Counters.Add(c)
	}
	e.mem.add(snap, extra)
	if e.opt.OnInterval != nil && !e.t0.IsZero() {
		e.opt.OnInterval(&e.meta, e.t0.Add(snap.End), snap)
	}
	if e.opt.OnRecord != nil {
		e.opt.OnRecord(e.meta, rundir.NewInterval(snap, extra))
	}
	if e.werr != nil {
		return // the files stopped at the failure; a later line would leave a gap
	}
	if !e.t0.IsZero() {
		e.beginLog(e.t0) // the rotation may not have: a load that ended at once
	}
	if e.werr == nil {
		if err := e.w.WriteInterval(snap, extra); err != nil {
			e.werr = err
		}
	}
}

// beginLog writes latency.hlog's header with t0, once; with e.mu held.
func (e *engine) beginLog(t0 time.Time) {
	if e.werr != nil {
		return
	}
	if err := e.w.Begin(t0); err != nil {
		e.werr = err
	}
}

// resourcesFailed notes a failure writing resources.jsonl; the first one is
// kept. The latency files go on being written.
func (e *engine) resourcesFailed(err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.rerr == nil {
		e.rerr = fmt.Errorf("%s: %w", rundir.ResourcesFile, err)
	}
}

// runFaults applies the faults from t0 and records what happened.
func (e *engine) runFaults(ctx context.Context, started, done <-chan struct{}, faults []fault.Fault) {
	t0, ok := e.awaitStart(started, done)
	if !ok {
		return
	}
	sched := fault.Scheduler{StateDir: e.opt.FaultState}
	if sched.StateDir == "" && e.opt.Getenv != nil {
		if dir, err := fault.DefaultStateDir(e.opt.Getenv); err == nil {
			sched.StateDir = dir
		}
	}
	err := sched.Run(ctx, t0, faults, e.faultEvent)
	if err != nil && !errors.Is(err, context.Canceled) {
		e.note("faults: " + err.Error())
	}
}

func (e *engine) faultEvent(ev fault.Event) {
	msg := fmt.Sprintf("%s %s at %.1fs (%s)", ev.Kind, ev.Target, ev.At.Seconds(), ev.Method)
	f := rundir.Fault{Kind: ev.Kind, At: ev.At, Target: ev.Target, Method: ev.Method}
	if ev.Err != nil {
		f.Error = ev.Err.Error()
		msg += ": " + ev.Err.Error()
	}
	e.mu.Lock()
	e.meta.Faults = append(e.meta.Faults, f)
	e.mu.Unlock()
	if e.opt.Progress != nil {
		e.say("fault: " + msg)
	}
}

func (e *engine) note(s string) {
	e.mu.Lock()
	e.meta.Notes = append(e.meta.Notes, s)
	e.mu.Unlock()
}

// finish closes the run directory, reads it back and summarises it. When the
// run directory could not be written whole (disk full, permission lost), the
// load still ran: the summary is made from the totals kept in memory, the
// files keep what was flushed before the failure, and the error wraps
// ErrRunDir with what failed.
func (e *engine) finish(runErr error) (*Result, error) {
	interrupted := errors.Is(runErr, load.ErrInterrupted)
	if runErr != nil && !interrupted {
		e.meta.Notes = append(e.meta.Notes, "run failed: "+runErr.Error())
	}
	e.meta.Ended = time.Now()
	e.meta.Interrupted = interrupted
	e.mu.Lock()
	if interrupted && !e.stopped.IsZero() && !e.t0.IsZero() {
		e.meta.StoppedAt = max(0, e.stopped.Sub(e.t0))
	}
	e.mu.Unlock()
	e.meta.Finished = runErr == nil
	e.meta.FirstError = e.fail.get()
	e.meta.Env.Generator.CPUSeconds = e.cpu
	notices := e.dropNotices()
	if n := e.rec.FoldNote(); n != "" {
		notices = append(notices, n)
	}
	e.meta.Notes = append(e.meta.Notes, notices...)
	filesErr := e.werr
	if err := e.w.Close(redactMeta(&e.meta, e.red)); err != nil && filesErr == nil {
		filesErr = err
	}
	var r *rundir.Dir
	if filesErr == nil {
		var err error
		if r, err = rundir.Open(e.opt.Dir); err != nil {
			filesErr = fmt.Errorf("reading it back: %w", err)
		}
	}
	var failure error
	if filesErr != nil {
		failure = fmt.Errorf("%w: %s: %w; the summary is from the totals kept in memory, the files keep what was flushed before the failure", ErrRunDir, e.opt.Dir, filesErr)
		r = e.mem.dir(e.opt.Dir, e.meta)
	}
	if e.rerr != nil { // the latency files are whole: the summary is theirs
		failure = errors.Join(failure, fmt.Errorf("%w: %s: %w", ErrRunDir, e.opt.Dir, e.rerr))
	}
	if failure != nil {
		e.meta.Notes = append(e.meta.Notes, failure.Error())
	}
	sum := analyze.Summarize(r, analyze.SummaryOptions{SendLagLimit: e.opt.SendLagLimit})
	e.meta.Summary = sum
	r.Meta.Summary = sum
	// run.json again, now with the summary; after a failure it is worth a try
	// (a full disk may have room for it once the other files are closed).
	if err := e.w.Close(redactMeta(&e.meta, e.red)); err != nil && failure == nil {
		failure = fmt.Errorf("%w: %s: %w", ErrRunDir, e.opt.Dir, err)
	}
	res := &Result{Dir: e.opt.Dir, Run: r, Summary: sum, Resources: e.resources, Notices: notices}
	switch {
	case runErr != nil && !interrupted && failure != nil:
		return res, errors.Join(runErr, failure)
	case runErr != nil && !interrupted:
		return res, runErr
	}
	return res, failure
}

// dropNotices says, per scenario that dropped iterations, how many, why
// (every one of maxVUs busy, from which second) and how to avoid it.
func (e *engine) dropNotices() []string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(e.mem.counters)) {
		c := e.mem.counters[name].Counters
		due := c.Requests + c.DroppedIterations
		if at, ok := e.drops.first(name); ok && c.DroppedIterations > c.DroppedLate {
			out = append(out, DropNotice(name, c.DroppedIterations-c.DroppedLate, due, e.maxVUs[name], at.Sub(e.t0), e.source))
		}
		if c.DroppedLate > 0 {
			out = append(out, fmt.Sprintf("DROPPED %d of %d iterations (scenario %s): knee fell behind its schedule and had "+
				"not started them by the span's end plus gracefulStop, so they were never sent and no latency below "+
				"includes them; the generator was the limit (give it more CPU, lower the rate or split it among runners)",
				c.DroppedLate, due, name))
		}
	}
	return out
}

// DropNotice is the account of a scenario's dropped iterations: dropped of
// due (sent + dropped) never started because all maxVUs VUs were busy, first
// at firstAt since the start. source is the scenario file, or "" for flags:
// it decides whether the fix is a flag or a key. The suggested maxVUs is
// maxVUs + dropped, enough even had every dropped iteration run at once.
func DropNotice(scenario string, dropped, due int64, maxVUs int, firstAt time.Duration, source string) string {
	fix := fmt.Sprintf("--max-vus %d", int64(maxVUs)+dropped)
	if source != "" {
		fix = fmt.Sprintf("maxVUs: %d in scenario %s of %s", int64(maxVUs)+dropped, scenario, source)
	}
	tenths := firstAt.Truncate(100 * time.Millisecond).Seconds()
	return fmt.Sprintf("DROPPED %d of %d iterations (scenario %s): all %d VUs (maxVUs) were busy from %.1f s, "+
		"so these were never sent and no latency below includes them; to send them, set %s",
		dropped, due, scenario, maxVUs, tenths, fix)
}

// span is how long the whole run starts iterations.
func span(scs []load.Scenario) time.Duration {
	var d time.Duration
	for _, s := range scs {
		d = max(d, s.StartTime+s.Executor.Span())
	}
	return d
}

// gracefulStop is the longest gracefulStop any scenario asks for (load runs
// with one). Scenarios carry their default already, so 0 is a gracefulStop
// of 0 (k6's "0s": stop at once), which load spells negative: its 0 would
// be its own 30 s default.
func gracefulStop(cfg *scenario.Config) time.Duration {
	var g time.Duration
	for _, s := range cfg.Scenarios {
		g = max(g, s.GracefulStop)
	}
	if g == 0 {
		return -1
	}
	return g
}

// returnGap is the least time between two returns of the heap's free
// pages: a whole GC each, and a run that stalls every few seconds keeps
// needing the memory anyway.
const returnGap = 10 * time.Second

// returnMemory is load's OnShrink: a stall's VUs have retired and what
// they needed is garbage, but the runtime keeps the freed pages resident up
// to the GC goal the stall raised, and a long run with a freeze every few
// minutes settled megabytes above where it began (bench/longrun.sh). One GC
// and a scavenge give them back, at most once per returnGap.
func (e *engine) returnMemory() {
	now := time.Now().UnixNano()
	last := e.returned.Load()
	if last != 0 && now-last < int64(returnGap) || !e.returned.CompareAndSwap(last, now) {
		return
	}
	debug.FreeOSMemory()
}

// lastInterval is what the progress line and the generator's USE row read
// of the last interval written, computed as it is written: the snapshot's
// histograms are recycled then.
type lastInterval struct {
	secs            float64 // its length
	requests, errs  int64
	p99             time.Duration // latency, every series merged
	sendLagP99      time.Duration
	sendLagRecorded bool
}

// summarize computes snap's lastInterval: each metric's histograms merged
// packed when they are (record.SumPacked: a slow run's few values), else
// in e.scratch (one histogram reused from interval to interval, made on
// first use).
func (e *engine) summarize(snap record.IntervalSnapshot) lastInterval {
	merged := func(m record.Metric) *record.Histogram {
		hs := record.Series(snap.Histograms).Of(func(k record.Key) bool { return k.Metric == m })
		if h, ok := record.SumPacked(hs); ok {
			return h
		}
		if e.scratch == nil {
			e.scratch = record.NewHistogram()
		}
		e.scratch.Reset()
		for _, h := range hs {
			e.scratch.Merge(h)
		}
		return e.scratch
	}
	li := lastInterval{secs: (snap.End - snap.Start).Seconds()}
	for _, c := range snap.Counters {
		li.requests += c.Requests
		li.errs += c.Errors
	}
	li.p99 = merged(record.Latency).Percentile(99)
	if lag := merged(record.SendLag); lag.Count() > 0 {
		li.sendLagP99, li.sendLagRecorded = lag.Percentile(99), true
	}
	return li
}
