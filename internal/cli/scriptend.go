package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/knee-dev/knee/analyze"
	"github.com/knee-dev/knee/k6script"
	"github.com/knee-dev/knee/rundir"
	"github.com/knee-dev/knee/runner"
)

// summaryData is k6's end-of-test summary data of the script's run (for
// handleSummary and the k6 summary export). own are the thresholds judged
// on k6's metrics, for data.metrics[...].thresholds.
func (a *app) summaryData(s *k6script.Script, res *runner.ScriptResult, ts map[string][]string, own []analyze.ThresholdResult) map[string]any {
	return s.SummaryData(k6script.SummaryInput{
		Duration: res.TestRunDuration, Thresholds: ts, Results: own,
		StdoutTTY: a.env.IsTerminal, StderrTTY: a.env.StderrIsTerminal,
		NoColor: a.getenv("NO_COLOR") != "" || a.getenv("K6_NO_COLOR") != "",
	})
}

// writeK6Export writes --summary-export for a script: k6's own summary
// export of data, so what reads k6's file reads knee's, with knee's run
// summary (the file knee writes for a run from flags) under "knee".
func writeK6Export(path string, data map[string]any, sum rundir.Summary) error {
	knee, err := marshalExport(sum)
	if err != nil {
		return fmt.Errorf("--summary-export: %w", err)
	}
	b, err := k6script.LegacySummary(data, json.RawMessage(knee))
	if err != nil {
		return fmt.Errorf("--summary-export: %w", err)
	}
	if err := rundir.WriteFileAtomic(path, b, 0o644); err != nil {
		return fmt.Errorf("--summary-export: %w", err)
	}
	return nil
}

// callHandleSummary calls the script's handleSummary with data, as k6
// does after teardown(). An exception in handleSummary is logged to stderr, and knee's summary then
// goes to stdout where k6 would print its default one (Default).
func (a *app) callHandleSummary(s *k6script.Script, data map[string]any) (k6script.SummaryResult, error) {
	// k6 runs it on its global context: a first Ctrl-C (which ended the
	// load) lets it run, a second one interrupts it.
	ctx, cancel := context.WithCancel(context.WithoutCancel(a.ctx))
	defer cancel()
	defer context.AfterFunc(a.abort, cancel)()
	sum, err := s.HandleSummary(ctx, data)
	if sum.Exception != nil {
		fmt.Fprintf(a.env.Stderr, "%v\nknee's summary goes to stdout, where k6 prints its default summary when handleSummary throws\n", sum.Exception)
	}
	if err != nil {
		return sum, fmt.Errorf("handleSummary: %w", err)
	}
	return sum, nil
}

func (a *app) getenv(key string) string {
	if a.env.Getenv == nil {
		return ""
	}
	return a.env.Getenv(key)
}

// stdoutToStderr makes what knee prints on stdout go to stderr (with its
// terminal's width) until the function it returns is called: handleSummary
// owns stdout, as k6 prints no default summary when a script exports it.
func (a *app) stdoutToStderr() (restore func()) {
	out, term, width := a.env.Stdout, a.env.IsTerminal, a.env.Width
	a.env.Stdout, a.env.IsTerminal, a.env.Width = a.env.Stderr, a.env.StderrIsTerminal, a.env.StderrWidth
	return func() { a.env.Stdout, a.env.IsTerminal, a.env.Width = out, term, width }
}

// writeSummaryOutputs writes what handleSummary returned: "stdout" and
// "stderr" to knee's, any other key to that file, relative to the working
// directory, through a temporary file renamed over it (a reader never sees
// half of it). Every failure is reported, naming its file.
func (a *app) writeSummaryOutputs(outs []k6script.SummaryOutput) error {
	var errs []error
	for _, o := range outs {
		var err error
		switch o.Path {
		case "stdout":
			_, err = a.env.Stdout.Write(o.Data)
		case "stderr":
			_, err = a.env.Stderr.Write(o.Data)
		default:
			err = rundir.WriteFileAtomic(o.Path, o.Data, 0o644)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("handleSummary: could not write %q: %w", o.Path, err))
		}
	}
	return errors.Join(errs...)
}

// summaryExit is the run's exit error with handleSummary's failure (hsErr)
// joined: a failure after the load ran exits 1 (the README's table) where
// the run would have exited 0 or 99 (thresholds); a code of its own
// (interrupted, aborted, timed out) stays.
func summaryExit(runErr, hsErr error) error {
	if hsErr == nil {
		return runErr
	}
	var ee *ExitError
	if runErr != nil && errors.As(runErr, &ee) && ee.Code != ExitThresholds && ee.Code != ExitOK {
		return &ExitError{Code: ee.Code, Err: errors.Join(runErr, hsErr)}
	}
	return &ExitError{Code: ExitFailure, Err: errors.Join(runErr, hsErr)}
}

// scriptVerdict is a script run's exit error once its summary is printed:
// k6's abort codes first, then the run's failure, then the thresholds'.
func (a *app) scriptVerdict(s *k6script.Script, res *runner.ScriptResult, err, ferr error, ownPass bool) error {
	// k6's scheduler returns teardown()'s error before the run's own
	// (internal/execution/scheduler.go:538-546), and the thresholds never
	// replace an error (internal/cmd/run.go:384): it decides the exit code.
	var se *k6script.ScriptError
	if errors.As(err, &se) && se.Teardown {
		return &ExitError{Code: ExitScriptException, Err: se}
	}
	if reason, ok := s.Aborted(); ok { // k6's exit code wins over the thresholds', as in k6
		return &ExitError{Code: ExitScriptAborted, Err: errors.New(reason)}
	}
	if res.ThresholdAbort != "" { // an abortOnFail threshold stopped it: k6's exit 99
		fmt.Fprintln(a.env.Stdout, "ABORTED: "+res.ThresholdAbort)
		return &ExitError{Code: ExitThresholds, Err: errors.New(res.ThresholdAbort)}
	}
	if err != nil {
		// The load ran and its summary is printed; what failed after it is
		// a failure of the run, not bad input.
		return scriptExit(errors.Join(err, ferr), func(err error) error { return &ExitError{Code: ExitFailure, Err: err} })
	}
	if reason, ok := s.MarkedFailed(); ok { // k6 returns it before its end-of-test thresholds can
		return &ExitError{Code: ExitMarkedAsFailed, Err: errors.New(reason)}
	}
	// k6 exits 99 for a failed threshold even when no request got a
	// response (its http_req_failed counts them), where knee's own rule
	// for a run without a response is 1 (k6 has none: it exits 0).
	if !ownPass {
		return errors.Join(ferr, &ExitError{Code: ExitThresholds, Err: fmt.Errorf("thresholds failed")})
	}
	if nr := noResponse(res.Summary); nr != nil {
		return errors.Join(ferr, nr)
	}
	return ferr
}
