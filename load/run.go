package load

import (
	"context"
	"errors"
	"fmt"
	"github.com/knee-dev/knee/load/schedule"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultGracefulStop is how long in-flight iterations may finish after a
// scenario stops, when Options.GracefulStop is 0 (k6's default).
const DefaultGracefulStop = 30 * time.Second

// ErrInterrupted is wrapped by Run's error when the run was stopped (its
// context cancelled or Options.Abort closed) before every scenario ended.
var ErrInterrupted = errors.New("load: run interrupted")

// Scenario is one named workload: an executor started StartTime after the
// run's t0, running Iteration.
type Scenario struct {
	Name      string
	StartTime time.Duration
	Executor  Executor
	Iteration Iteration
}

// Options tune a Run. The zero value is ready to use.
type Options struct {
	// GracefulStop is how long in-flight iterations may finish once a
	// scenario stops starting new ones; then their context is cancelled.
	// 0 means DefaultGracefulStop; negative means cancel at once.
	GracefulStop time.Duration
	// Abort, when closed, stops everything at once: no grace period. A
	// first interrupt cancels Run's context; a second one closes Abort.
	Abort <-chan struct{}
	// OnStart, if set, is called with t0 once every pre-allocated VU is
	// running and before the first iteration starts.
	OnStart func(t0 time.Time)
	// TimerSlack is how late the open model's scheduler may wake for an
	// iteration so that it shares a wake-up with the ones before it: at
	// most one wake-up per TimerSlack. Starts at least TimerSlack apart
	// are made by a free VU that sleeps until each itself (no hand-off);
	// closer ones by the scheduler, several per wake-up. 0 means
	// DefaultTimerSlack, on a kernel timer (timerfd) where there is one.
	// Negative means the runtime's timers alone, which wake in whole
	// milliseconds when the process is idle: up to ~1 ms of send lag.
	TimerSlack time.Duration
	// RetireIdle is how long an open-model VU beyond the pre-allocated ones
	// may stay idle before it retires: its goroutine ends and the
	// Iteration releases what it holds for it (VUReleaser), such as its
	// connection. The pool still grows as fast as the schedule demands, up
	// to MaxVUs. The limit is at least twice the schedule's current gap
	// between starts. 0 means DefaultRetireIdle; negative means VUs never
	// retire (k6's behaviour).
	RetireIdle time.Duration
	// OnShrink, if set, is called on a goroutine of its own when an
	// open-model scenario's VU pool, after growing past 64 VUs (a stall:
	// every start waited on a VU of its own), has fallen below a quarter of
	// its peak as its idle VUs retired: what they held is garbage now. Once
	// per peak. knee's runner returns the freed memory to the OS then
	// (the Go runtime keeps pages up to its next GC goal, which the stall
	// raised).
	OnShrink func()
	// GoroutineVUs runs every VU as a goroutine, in both models, even when
	// the Iteration offers an event loop (LoopIteration): for comparisons.
	GoroutineVUs bool
}

// DefaultTimerSlack bounds the open model's scheduler to 5,000 wake-ups a
// second: every iteration of a rate up to 5,000/s starts on time, within
// microseconds; above, iterations due within 200 µs of each other start
// together, each timed from its own intended start.
const DefaultTimerSlack = 200 * time.Microsecond

func (o Options) grace() time.Duration {
	switch {
	case o.GracefulStop == 0:
		return DefaultGracefulStop
	case o.GracefulStop < 0:
		return 0
	}
	return o.GracefulStop
}

// Generator runs scenarios once. Stats may be called from any goroutine while
// Run runs.
type Generator struct {
	scenarios []*scenarioRun
	rec       Sink
	opt       Options
	vuIDs     atomic.Uint64
	ran       atomic.Bool
}

// NewGenerator checks every scenario and builds their executors. The error
// lists every problem found, wrapping ErrInvalid.
func NewGenerator(scenarios []Scenario, rec Sink, opt Options) (*Generator, error) {
	r := &Generator{rec: rec, opt: opt}
	var errs []error
	if rec == nil {
		errs = append(errs, fmt.Errorf("%w: no Recorder", ErrInvalid))
	}
	if len(scenarios) == 0 {
		errs = append(errs, fmt.Errorf("%w: no scenarios; add at least one", ErrInvalid))
	}
	seen := map[string]bool{}
	for n, sc := range scenarios {
		name := sc.Name
		switch {
		case name == "":
			errs = append(errs, fmt.Errorf("%w: scenario %d has no name; give it one", ErrInvalid, n+1))
			name = fmt.Sprintf("#%d", n+1)
		case seen[name]:
			errs = append(errs, fmt.Errorf("%w: scenario name %q is used twice; names must be unique", ErrInvalid, name))
		}
		seen[name] = true
		s, serrs := newScenarioRun(r, name, sc)
		for _, e := range serrs {
			errs = append(errs, fmt.Errorf("%w: scenario %q: %w", ErrInvalid, name, e))
		}
		r.scenarios = append(r.scenarios, s)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return r, nil
}

// Generate runs scenarios to their end, or until ctx is cancelled (graceful stop)
// or opt.Abort is closed (hard stop). It returns only after every VU
// goroutine has exited; nil when every scenario ran its course.
func Generate(ctx context.Context, scenarios []Scenario, rec Sink, opt Options) error {
	r, err := NewGenerator(scenarios, rec, opt)
	if err != nil {
		return err
	}
	return r.Run(ctx)
}

// Run is the method form of Generate; a Generator runs once.
//
// Stopping is two deadlines (as k6): when a scenario's span ends or ctx is
// cancelled no new iteration starts; in-flight ones get GracefulStop, then
// their context is cancelled. Closing Abort cancels them at once.
func (r *Generator) Run(ctx context.Context) error {
	if !r.ran.CompareAndSwap(false, true) {
		return errors.New("load: a Generator runs only once")
	}
	// stop ends the starting of iterations; hard ends the iterations. The
	// iterations' context keeps ctx's values but not its cancellation, so
	// a graceful stop does not cut them short.
	stop, stopCancel := context.WithCancel(ctx)
	defer stopCancel()
	hard, hardCancel := context.WithCancel(context.WithoutCancel(ctx))
	defer hardCancel()
	finished := make(chan struct{})
	defer close(finished)
	var aborted atomic.Bool
	go func() {
		select {
		case <-r.opt.Abort:
			aborted.Store(true)
			stopCancel()
			hardCancel()
		case <-finished:
		}
	}()

	for _, s := range r.scenarios {
		s.stop, s.hard = stop, hard
		s.drv.prepare(s)
	}
	t0 := time.Now()
	if r.opt.OnStart != nil {
		r.opt.OnStart(t0)
	}
	var wg sync.WaitGroup
	for _, s := range r.scenarios {
		wg.Go(func() { s.drv.run(s, t0.Add(s.startTime)) })
	}
	wg.Wait()
	switch {
	case aborted.Load():
		return fmt.Errorf("%w: aborted", ErrInterrupted)
	case ctx.Err() != nil:
		return fmt.Errorf("%w: %w", ErrInterrupted, context.Cause(ctx))
	}
	return nil
}

// Stats is a snapshot of one scenario's live counters, for a progress line.
type Stats struct {
	Scenario string
	VUs      int     // VUs alive (goroutines, or on the loop engine ids with a connection)
	BusyVUs  int     // VUs inside an iteration
	PeakVUs  int     // the most VUs the executor may run
	Started  int64   // iterations started
	Dropped  int64   // open model: iterations not started for want of a VU, or too late (LateSink)
	Rate     float64 // open model: offered iterations per second now; 0 for closed
	// Due is how many iterations the open model's schedule has made due
	// by now, started or not: the offered load, which Started+Dropped
	// trails while the generator is behind; 0 for closed.
	Due int64
}

// Stats returns a snapshot of every scenario's counters, in scenario order.
// It takes no lock.
func (r *Generator) Stats() []Stats {
	out := make([]Stats, len(r.scenarios))
	for n, s := range r.scenarios {
		out[n] = s.live.snapshot(s)
	}
	return out
}

// liveStats are one scenario's counters, updated with atomics.
type liveStats struct {
	vus, busy        atomic.Int64
	started, dropped atomic.Int64
	start            atomic.Pointer[time.Time] // the scenario's start, once known
}

func (l *liveStats) snapshot(s *scenarioRun) Stats {
	st := Stats{
		Scenario: s.name,
		VUs:      int(l.vus.Load()),
		BusyVUs:  int(l.busy.Load()),
		PeakVUs:  s.peak,
		Started:  l.started.Load(),
		Dropped:  l.dropped.Load(),
	}
	if start := l.start.Load(); start != nil {
		elapsed := time.Since(*start)
		st.Rate = s.drv.offered(elapsed)
		if s.sched != nil {
			st.Due = schedule.Due(s.sched, elapsed)
		}
	}
	return st
}

// driver runs one executor's VUs.
type driver interface {
	// prepare starts what must run before t0 (pre-allocated VUs).
	prepare(s *scenarioRun)
	// run starts iterations from start until the span ends or s.stop is
	// done, then stops gracefully; it returns once every VU has exited.
	run(s *scenarioRun, start time.Time)
	// offered is the offered rate at elapsed time since start, per second.
	offered(elapsed time.Duration) float64
}

// scenarioRun is what every VU of one scenario shares.
type scenarioRun struct {
	gen       *Generator
	name      string
	startTime time.Duration
	it        Iteration
	peak      int
	grace     time.Duration
	sched     schedule.Schedule // the open model's; nil for closed
	drv       driver
	live      liveStats
	stop      context.Context // done: start no more iterations
	hard      context.Context // done: cancel iterations now
}

func newScenarioRun(r *Generator, name string, sc Scenario) (*scenarioRun, []error) {
	s := &scenarioRun{gen: r, name: name, startTime: sc.StartTime, it: sc.Iteration, grace: r.opt.grace()}
	var errs []error
	if sc.Iteration == nil {
		errs = append(errs, errors.New("no Iteration to run"))
	}
	if sc.StartTime < 0 {
		errs = append(errs, fmt.Errorf("startTime is %v; set 0 or a positive delay", sc.StartTime))
	}
	if sc.Executor == nil {
		return s, append(errs, errors.New("no executor; set one of the four executor configs"))
	}
	if verrs := sc.Executor.Validate(); len(verrs) > 0 {
		return s, append(errs, verrs...)
	}
	drv, err := sc.Executor.newDriver()
	if err != nil {
		return s, append(errs, err)
	}
	if a, ok := drv.(*openGoroutines); ok {
		s.sched = a.sched
	}
	if li, ok := sc.Iteration.(LoopIteration); ok && !r.opt.GoroutineVUs {
		if _, self := sc.Iteration.(SelfRecording); !self {
			switch a := drv.(type) {
			case *openGoroutines:
				drv = &openLoop{a: a, it: li}
			case *closedVUs:
				drv = &closedLoop{c: a, it: li}
			}
		}
	}
	s.drv, s.peak = drv, sc.Executor.PeakVUs()
	return s, errs
}

func (s *scenarioRun) nextVUID() uint64 { return s.gen.vuIDs.Add(1) }

// finish stops a scenario's VUs: it waits for done (every VU exited) until
// the grace deadline (see graceDeadline), then cancels the iterations and
// waits for done again.
func (s *scenarioRun) finish(deadline time.Time, done <-chan struct{}, cancelIterations context.CancelFunc) {
	if s.grace > 0 {
		t := time.NewTimer(time.Until(deadline))
		defer t.Stop()
		select {
		case <-done:
		case <-t.C:
		case <-s.hard.Done():
		}
	}
	cancelIterations()
	<-done
}

// graceDeadline is when in-flight iterations are cancelled: gracefulStop
// after the scenario's span ends at end, or after a stop that came sooner
// (as k6). A generator still starting overdue iterations past end does not
// move it.
func (s *scenarioRun) graceDeadline(end time.Time) time.Time {
	if now := time.Now(); now.Before(end) {
		end = now
	}
	return end.Add(s.grace)
}

// lateStartsEnd is when an open scenario behind its schedule stops starting
// overdue iterations and counts the rest dropped: the grace deadline of its
// span's end, when they would be cancelled anyway.
func (s *scenarioRun) lateStartsEnd(end time.Time) time.Time {
	return end.Add(max(s.grace, 0))
}

// openSample is the Sample of an open-model iteration that ended with res
// (stamped), timed from its intended start: both engines record them so.
func (s *scenarioRun) openSample(res Result, intended time.Time) Sample {
	return Sample{
		Scenario: s.name,
		Result:   res,
		Latency:  res.Done.Sub(intended),
		Service:  res.Done.Sub(res.Sent),
		SendLag:  res.Sent.Sub(intended),
	}
}

// closedSample is the Sample of a closed-model iteration called at called
// that ended with res (stamped), both engines record them so: its latency
// is its service time (no schedule to be late for), and its interval the
// time since the VU's previous start prev, or for its first (prev zero),
// which has none, its service time plus think.
func (s *scenarioRun) closedSample(res Result, called, prev time.Time, think time.Duration) Sample {
	service := res.Done.Sub(res.Sent)
	interval := service + think
	if !prev.IsZero() {
		interval = called.Sub(prev)
	}
	return Sample{Scenario: s.name, Result: res, Latency: service, Service: service, Interval: interval}
}

// drop counts one open-model start dropped for want of a VU.
func (s *scenarioRun) drop() {
	s.live.dropped.Add(1)
	s.gen.rec.Dropped(s.name, 1)
}

// result fills in what the Iteration left unstamped: Sent at the call,
// Done at the return.
func stamp(res Result, called, returned time.Time) Result {
	if res.Sent.IsZero() {
		res.Sent = called
	}
	if res.Done.IsZero() {
		res.Done = returned
	}
	return res
}
