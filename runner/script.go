package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/knee-dev/knee/k6script"
	"github.com/knee-dev/knee/load"
	"github.com/knee-dev/knee/record"
	"github.com/knee-dev/knee/rundir"
	"github.com/knee-dev/knee/scenario"
)

// ScriptResult is a script's run: the run directory's Result plus what only
// the script knows (its checks, its iterations' exceptions).
type ScriptResult struct {
	*Result
	Checks  []k6script.CheckResult
	Metrics []k6script.MetricResult
	// K6 are k6's built-in metrics as k6 sums them (setup's and
	// teardown's requests included), under k6's names.
	K6              []k6script.K6Stat
	Iterations      int64 // iterations that ran to their end
	ChecksRate      float64
	ChecksTotal     int64
	IterationErrors int64
	FirstError      string
	TeardownError   string // teardown() threw; the run's numbers stand
	// TestRunDuration is k6's: from setup()'s start to teardown()'s end,
	// less what k6 does not do then (knee's VU initialisation, which k6
	// does before, and its environment note): handleSummary's
	// data.state.testRunDurationMs, the time of its Counters' rates and of
	// the thresholds on them.
	TestRunDuration time.Duration
	// ThresholdAbort says which abortOnFail threshold stopped the test, and
	// when; "" when none did.
	ThresholdAbort string
}

// Files a script's run adds to the run directory: its checks' counts and
// its custom metrics (k6/metrics) totals.
const (
	ChecksFile  = "checks.json"
	MetricsFile = "metrics.json"
	// K6File holds k6's built-in metrics as k6 sums them (ScriptResult.K6).
	K6File = "k6.json"
)

// errIterationsDone ends a run whose iteration count was reached: complete, not interrupted.
var errIterationsDone = errors.New("every iteration of the script ran")

// ExecuteScript runs a k6 script planned as plan (plan.Config carries the
// faults and settings as for Execute): setup() first, then the load with one
// runtime per VU, then teardown(). The checks are written to checks.json in
// the run directory. An error before the load (setup, VU init) returns a
// nil result.
func ExecuteScript(ctx context.Context, s *k6script.Script, plan *k6script.Plan, opt Options) (*ScriptResult, error) {
	clock := startVUs(s, plan, &opt)
	defer clock.stop()
	watch, err := newAbortWatch(s, plan, clock.elapsed)
	if err != nil {
		return nil, err
	}
	if err := s.Setup(ctx); err != nil {
		return nil, err
	}
	clock.pause() // k6 initialises its VUs before its test starts
	if err := s.Prepare(ctx, initialVUs(plan.Config)); err != nil {
		return nil, err
	}
	clock.resume()
	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	// Runtimes for the VUs an open model starts beyond the prepared ones are
	// made ahead, off the path of their first request.
	sparesCtx, stopSpares := context.WithCancel(runCtx)
	defer s.KeepSpares(sparesCtx, int64(mostConnections(plan.Config)))()
	defer stopSpares()
	opt.Notes = append(opt.Notes, plan.Notes...)
	opt.Notes = append(opt.Notes, "k6 script "+s.Path+": latency counts from each iteration's intended start in the open model (every request is charged its iteration's start lag); service time is k6's http_req_duration")
	opt.Iterations = func(sc scenario.Scenario) load.Iteration {
		return s.Iteration(sc.Name, plan.Scenarios[sc.Name], func() { cancel(errIterationsDone) })
	}
	opt.Completed = errIterationsDone
	opt.OnDropped = s.RecordDropped
	// test.abort() and an abortOnFail threshold cut every iteration at once,
	// as k6 cancels its test run context: no gracefulStop, so an iteration
	// in flight neither sends more nor counts (the second Ctrl-C's path).
	abortNow, stopAbort := hardStop(opt.Abort, cancel)
	defer stopAbort()
	opt.Abort = abortNow.done
	s.OnAbort(func(reason string) { abortNow.stop(errors.New(reason)) })
	var thresholdAbort atomic.Pointer[string]
	if watch != nil {
		prev := opt.OnInterval
		opt.OnInterval = func(meta *rundir.Meta, end time.Time, snap record.IntervalSnapshot) {
			if prev != nil {
				prev(meta, end, snap)
			}
			if reason := watch.add(meta, snap); reason != "" && thresholdAbort.CompareAndSwap(nil, &reason) {
				abortNow.stop(errors.New(reason))
			}
		}
	}
	opt.AfterLoad = func() []string {
		clock.pause()
		return loadNotes(s, thresholdAbort.Load())
	}
	clock.pause()
	res, err := Execute(runCtx, plan.Config, opt)
	if res == nil {
		return nil, err
	}
	clock.resume()
	out := &ScriptResult{Result: res}
	if reason := thresholdAbort.Load(); reason != nil {
		out.ThresholdAbort = *reason
	}
	tdCtx, stopTd := teardownContext(ctx, abortNow.user)
	terr := s.Teardown(tdCtx)
	stopTd()
	out.TestRunDuration = clock.elapsed()
	clock.stop()
	if terr != nil {
		out.TeardownError = terr.Error()
		// k6 exits 101 for a teardown past its timeout, 107 for one that
		// threw (its scheduler returns the error, internal/execution/scheduler.go:538).
		err = errors.Join(err, terr)
	}
	// After teardown: k6 counts its requests, checks and metrics too.
	out.Checks, out.Metrics = s.Checks.Results(), s.Metrics(trendOf(res))
	out.ChecksRate, out.ChecksTotal = s.Checks.Rate()
	out.IterationErrors, out.FirstError = s.IterationErrors()
	out.K6, out.Iterations = s.K6Builtins(out.TestRunDuration), s.Iterations()
	if werr := writeScriptFiles(res.Dir, out); err == nil {
		err = werr
	}
	return out, err
}

// loadNotes are run.json's notes of a script's load: the abortOnFail
// threshold that stopped it (abort, nil when none), its iterations'
// exceptions, its checks.
func loadNotes(s *k6script.Script, abort *string) []string {
	var notes []string
	if abort != nil {
		notes = append(notes, *abort)
	}
	if n, first := s.IterationErrors(); n > 0 {
		notes = append(notes, fmt.Sprintf("%d iterations ended in an exception; the first: %s", n, first))
	}
	if rate, total := s.Checks.Rate(); total > 0 {
		notes = append(notes, fmt.Sprintf("checks: %.2f%% of %d passed", 100*rate, total))
	}
	return notes
}

// writeScriptFiles writes what only the script knows into the run
// directory: checks.json, metrics.json, k6.json; the first error.
func writeScriptFiles(dir string, out *ScriptResult) error {
	var err error
	for file, v := range map[string]any{ChecksFile: out.Checks, MetricsFile: out.Metrics, K6File: out.K6} {
		if b, jerr := json.MarshalIndent(v, "", "  "); jerr == nil {
			if werr := os.WriteFile(filepath.Join(dir, file), append(b, '\n'), 0o644); werr != nil && err == nil {
				err = werr
			}
		}
	}
	return err
}

// teardownContext is teardown()'s: a stop asked for before it starts (the
// first Ctrl-C, which ended the load) lets it run, as k6 does; one asked
// for while it runs, or an abort (the second Ctrl-C), interrupts it.
func teardownContext(ctx context.Context, abort <-chan struct{}) (context.Context, context.CancelFunc) {
	base := ctx
	if ctx.Err() != nil {
		base = context.WithoutCancel(ctx)
	}
	tctx, cancel := context.WithCancel(base)
	if abort != nil {
		go func() {
			select {
			case <-abort:
				cancel()
			case <-tctx.Done():
			}
		}()
	}
	return tctx, cancel
}

// initialVUs is how many VU runtimes to initialise before the test starts:
// the pre-allocated VUs of the open model and the peak of the closed model.
func initialVUs(cfg *scenario.Config) int {
	n := 0
	for _, sc := range cfg.Scenarios {
		n += plannedVUs(sc)
	}
	return n
}

// abort is the hard stop of a script's load: done closes when the user's
// abort (the second Ctrl-C) closes or the script stops the test.
type abort struct {
	user <-chan struct{} // the caller's, which alone may interrupt teardown
	done chan struct{}
	once sync.Once
	stp  chan struct{}
	end  context.CancelCauseFunc
}

// hardStop watches user and returns the abort, and its release for the
// run's end.
func hardStop(user <-chan struct{}, cancel context.CancelCauseFunc) (*abort, func()) {
	a := &abort{user: user, done: make(chan struct{}), stp: make(chan struct{}), end: cancel}
	finished := make(chan struct{})
	go func() {
		select {
		case <-user: // nil: never
		case <-a.stp:
		case <-finished:
			return
		}
		close(a.done)
	}()
	return a, func() { close(finished) }
}

// stop cancels the run with why and stops its iterations at once.
func (a *abort) stop(why error) {
	a.end(why)
	a.once.Do(func() { close(a.stp) })
}
