// Package cli is knee's command line: cobra commands, flags turned into
// library configuration, exit codes and signals turned into contexts. It holds
// no statistics and no scheduling logic.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"github.com/knee-dev/knee/coord"
	"github.com/knee-dev/knee/internal/version"
	"github.com/knee-dev/knee/redact"
)

// Exit codes: k6's where k6 has one for the same case (its errext/exitcodes),
// 1 otherwise. The README's table of exit codes lists them for CI.
const (
	ExitOK              = 0
	ExitFailure         = 1   // the work itself failed (I/O, no response at all, ...)
	ExitUsage           = 2   // bad flags, bad input files: k6 has no one code for these
	ExitThresholds      = 99  // k6's ThresholdsHaveFailed
	ExitInterrupted     = 105 // k6's ExternalAbort: stopped by SIGINT or SIGTERM
	ExitScriptException = 107 // k6's ScriptException: the script's setup() or teardown() threw
	// k6's SetupTimeout and TeardownTimeout: the phase ran past
	// setupTimeout or teardownTimeout and was interrupted.
	ExitSetupTimeout    = 100
	ExitTeardownTimeout = 101
	// ExitScriptAborted is k6's ScriptAborted: the script called
	// exec.test.abort().
	ExitScriptAborted = 108
	// ExitMarkedAsFailed is k6's MarkedAsFailed: the script called
	// exec.test.fail() and the test ran to its end.
	ExitMarkedAsFailed = 110
)

// signalEnds marks a command that runs until it is stopped (a server):
// a signal is its normal end, not an interruption (exit 0).
const signalEnds = "knee/signal-ends"

// abortGrace is how long knee may take to write what it measured after the
// second interrupt before it exits anyway.
const abortGrace = 800 * time.Millisecond

// ExitError carries an exit code up to Main.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string { return e.Err.Error() }
func (e *ExitError) Unwrap() error { return e.Err }

// usageErr marks err as bad input: exit code 2.
func usageErr(err error) error {
	if err == nil {
		return nil
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		return err
	}
	return &ExitError{Code: ExitUsage, Err: err}
}

// usagef formats a bad-input error.
func usagef(format string, a ...any) error {
	return &ExitError{Code: ExitUsage, Err: fmt.Errorf(format, a...)}
}

// Main runs knee with env and returns the process exit code.
func Main(env Env) int {
	// The last line of defence for the terminal: what a command prints and
	// its error pass through the secrets of its arguments (and, once read,
	// of its scenario file). Run directories are kept clean upstream.
	red := redact.FromArgs(env.Args)
	raw := env.Stdout
	env.Stdout, env.Stderr = red.Writer(env.Stdout), red.Writer(env.Stderr)
	ctx, abort, signalled, stop := interruptContexts(env)
	defer stop()
	a := &app{env: env, ctx: ctx, abort: abort, red: red, rawStdout: raw}
	root := a.rootCommand()
	root.SetArgs(env.Args)
	root.SetOut(env.Stdout)
	root.SetErr(env.Stderr)
	cmd, err := root.ExecuteContextC(ctx)
	code := ExitOK
	if err != nil {
		fmt.Fprintln(env.Stderr, "knee:", err)
		code = ExitFailure
		var ee *ExitError
		if errors.As(err, &ee) {
			code = ee.Code
		} else if isFlagError(err) {
			code = ExitUsage
		}
	}
	// A signal stopped the work: k6's ExternalAbort, whatever the partial
	// results' thresholds said, so CI never takes a cut run for a pass. Bad
	// input and a script's own abort keep their codes: they came first.
	if sig := signalled(); sig != nil && cmd != nil && cmd.Annotations[signalEnds] == "" && !a.servedOut.Load() &&
		code != ExitUsage && code != ExitScriptAborted {
		fmt.Fprintf(env.Stderr, "knee: interrupted by %v: exit %d\n", sig, ExitInterrupted)
		code = ExitInterrupted
	}
	return code
}

// app is the state every command shares.
type app struct {
	env   Env
	ctx   context.Context  // cancelled by the first interrupt: stop gracefully
	abort context.Context  // cancelled by the second interrupt: stop at once
	red   *redact.Redactor // scrubs Stdout and Stderr
	// rawStdout is stdout unscrubbed, for a file the user asked for on it
	// (knee k8s job's manifests, whose Secret must hold the real values).
	rawStdout io.Writer
	coord     *coord.Client // knee run --coordinator: sends the part after the run

	linger    time.Duration // --dashboard-linger
	lingerSet func() bool   // whether --dashboard-linger was given
	// servedOut: the work was done and a page served until the signal that
	// ended knee (lingerWait), so the signal cut nothing short.
	servedOut atomic.Bool
}

func (a *app) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "knee",
		Short: "A load tester whose numbers can be trusted",
		Long: `knee generates load in the open and closed models, records every latency in
HdrHistograms (merged, never averaged), detects and corrects coordinated
omission, finds the knee of the throughput-latency curve and the bottleneck.

` + envHelp + `

Exit codes (the README's table): 0 ok; 1 the work failed (I/O, no response
at all); 2 bad input (flags, files); 99 thresholds failed; 100, 101 the
script's setup() or teardown() ran past its timeout; 105 stopped by SIGINT or
SIGTERM; 107 the script's setup() or teardown() threw; 108 the script called test.abort();
110 the script called test.fail().`,
		Example: `  knee run --rate 100 --duration 30s --url http://127.0.0.1:5080/
  KNEE_OUT=/var/tmp/runs knee run --rate 100 --duration 30s --url http://127.0.0.1:5080/
  knee analyze runs/2026-11-30T10-00-00/
  knee completion bash > /etc/bash_completion.d/knee`,
		Version:       version.String(),
		SilenceUsage:  true,
		SilenceErrors: true,
		// Flags not given on the command line come from KNEE_ variables.
		PersistentPreRunE: func(c *cobra.Command, _ []string) error {
			return applyEnv(c, a.env.Getenv)
		},
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usagef("%s: %w (see 'knee %s --help')", c.Name(), err, c.Name())
	})
	for _, add := range []func() *cobra.Command{
		a.runCommand, a.analyzeCommand, a.importCommand, a.tailCommand,
		a.labCommand, a.thawCommand, a.reportCommand, a.compareCommand,
		a.stepsCommand, a.curveCommand, a.useCommand, a.mergeCommand, a.k8sCommand,
		a.coordinateCommand,
	} {
		root.AddCommand(add())
	}
	if a.env.Stdout != nil {
		root.SetOut(a.env.Stdout) // before the completion commands, which keep it
	}
	completionExamples(root)
	completeFlagValues(root)
	return root
}

// Command returns knee's command tree for env without running it, for
// documentation generators (man pages).
func Command(env Env) *cobra.Command {
	a := &app{env: env, ctx: context.Background(), abort: context.Background(), rawStdout: env.Stdout}
	return a.rootCommand()
}

// isFlagError reports cobra's own argument errors, which carry no ExitError.
func isFlagError(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand", "accepts ", "requires "} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}

// interruptContexts turns the first signal into a graceful stop and the second
// into an abort. stop releases the watcher.
func interruptContexts(env Env) (ctx, abort context.Context, signalled func() os.Signal, stop func()) {
	// ctx derives from abort, so an abort also stops everything a graceful stop does.
	abort, cancelAbort := context.WithCancel(context.Background())
	ctx, cancel := context.WithCancel(abort)
	done := make(chan struct{})
	var (
		mu    sync.Mutex
		first os.Signal // the first signal received, for the exit code
	)
	closed := make(chan time.Time)
	close(closed)
	go func() {
		n := 0
		var grace <-chan time.Time
		for {
			select {
			case <-done:
				return
			case s := <-env.Signals:
				n++
				if n == 1 {
					mu.Lock()
					first = s
					mu.Unlock()
					fmt.Fprintf(env.Stderr, "\nknee (pid %d): %v: stopping gracefully, in-flight requests may finish (Ctrl-C again to abort)\n", env.PID, s)
					cancel()
				} else if n == 2 {
					fmt.Fprintln(env.Stderr, "\nknee: aborting: writing what was recorded")
					cancelAbort()
					// Whatever is still running (a script's loop, a push,
					// a summary), knee exits within a second.
					grace = time.NewTimer(abortGrace).C
				} else {
					grace = closed
				}
			case <-grace:
				fmt.Fprintf(env.Stderr, "knee: aborted: still busy %v after the abort; exiting without the rest\n", abortGrace)
				if env.Exit != nil {
					env.Exit(ExitInterrupted)
				}
				return
			}
		}
	}()
	signalled = func() os.Signal {
		mu.Lock()
		defer mu.Unlock()
		return first
	}
	return ctx, abort, signalled, func() { close(done); cancel(); cancelAbort() }
}
