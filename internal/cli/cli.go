// Package cli is knee's command line: cobra commands, flags turned into
// library configuration, exit codes and signals turned into contexts. It holds
// no statistics and no scheduling logic.
package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/knee-dev/knee/internal/version"
)

// Exit codes.
const (
	ExitOK         = 0
	ExitFailure    = 1  // the work itself failed (I/O, target unreachable, ...)
	ExitUsage      = 2  // bad flags, bad input files
	ExitThresholds = 99 // the run finished but a threshold failed
)

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
	ctx, abort, stop := interruptContexts(env)
	defer stop()
	a := &app{env: env, ctx: ctx, abort: abort}
	root := a.rootCommand()
	root.SetArgs(env.Args)
	root.SetOut(env.Stdout)
	root.SetErr(env.Stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	fmt.Fprintln(env.Stderr, "knee:", err)
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	if isFlagError(err) {
		return ExitUsage
	}
	return ExitFailure
}

// app is the state every command shares.
type app struct {
	env   Env
	ctx   context.Context // cancelled by the first interrupt: stop gracefully
	abort context.Context // cancelled by the second interrupt: stop at once
}

func (a *app) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "knee",
		Short: "A load tester whose numbers can be trusted",
		Long: `knee generates load in the open and closed models, records every latency in
HdrHistograms (merged, never averaged), detects and corrects coordinated
omission, finds the knee of the throughput-latency curve and the bottleneck.

` + envHelp + `

Exit codes: 0 success; 1 the work failed (I/O, target unreachable, a failure
after the load ran); 2 bad input (flags, files); 99 a --threshold failed.`,
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
	a := &app{env: env, ctx: context.Background(), abort: context.Background()}
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
func interruptContexts(env Env) (ctx, abort context.Context, stop func()) {
	// ctx derives from abort, so an abort also stops everything a graceful stop does.
	abort, cancelAbort := context.WithCancel(context.Background())
	ctx, cancel := context.WithCancel(abort)
	done := make(chan struct{})
	go func() {
		n := 0
		for {
			select {
			case <-done:
				return
			case s := <-env.Signals:
				n++
				if n == 1 {
					fmt.Fprintf(env.Stderr, "\nknee (pid %d): %v: stopping gracefully, in-flight requests may finish (Ctrl-C again to abort)\n", env.PID, s)
					cancel()
				} else {
					fmt.Fprintln(env.Stderr, "\nknee: aborting: writing what was recorded")
					cancelAbort()
				}
			}
		}
	}()
	return ctx, abort, func() { close(done); cancel(); cancelAbort() }
}
