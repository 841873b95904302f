package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/knee-dev/knee/analyze"
	"github.com/knee-dev/knee/coord"
	"github.com/knee-dev/knee/guard"
	"github.com/knee-dev/knee/merge"
)

type coordinateFlags struct {
	o          coord.Options
	listen     string
	linger     time.Duration
	thresholds []string
}

func (a *app) coordinateCommand() *cobra.Command {
	var f coordinateFlags
	c := &cobra.Command{
		Use:   "coordinate --runners N --dir DIR",
		Short: "Start a split test's runners together, collect their parts, merge them and serve the result",
		Long: `knee coordinate is the coordinator of a test split among N runners (knee run
--coordinator URL --execution-segment-index I on each, e.g. the pods of knee k8s
job). It trusts no clock: each runner reports ready and waits; once all N are
ready it releases them at one instant, or after --ready-timeout fails the test
naming the runners never ready. Each runner then sends its run directory (a
tar stream checked against its SHA-256); a runner that dies is noticed when its
connection closes. Once every part is in, or lost, or --parts-timeout has
passed, it merges the parts into DIR/merged, prints the summary and the
thresholds (the test's own and --threshold), and serves the merged run
directory until it is fetched (knee k8s fetch) or --linger passes.

Beyond loopback every request needs the token of ` + coord.TokenEnv + `
(or one printed at start when that is not set).

Exit codes: 0 the merge of every part passed its thresholds; 1 the test did not
start, or a part is missing (the merge of the others is kept and served,
marked PARTIAL); 99 a threshold failed.`,
		Example: `  knee coordinate --runners 3 --dir results/test --listen 127.0.0.1:7070
  knee run test.yaml --execution-segment-sequence 0,1/3,2/3,1 --execution-segment-index 0 --coordinator http://127.0.0.1:7070`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error { return a.doCoordinate(f) },
	}
	fl := c.Flags()
	fl.IntVar(&f.o.Runners, "runners", 0, "how many runners take part")
	fl.StringVar(&f.o.Dir, "dir", "", "directory for the parts (DIR/part-I) and the merge (DIR/merged)")
	fl.StringVar(&f.listen, "listen", "127.0.0.1:7070", "address to listen on (beyond loopback, requests need the token)")
	fl.DurationVar(&f.o.ReadyTimeout, "ready-timeout", 10*time.Minute, "fail the test when not every runner is ready this long after the start")
	fl.DurationVar(&f.o.PartsTimeout, "parts-timeout", time.Hour, "stop waiting for parts this long after the release (more than the test's duration and graceful stop)")
	fl.Int64Var(&f.o.MaxPart, "max-part", coord.DefaultMaxPart, "bytes one runner's part may hold")
	fl.DurationVar(&f.linger, "linger", time.Hour, "serve the merged run directory this long, unless it is fetched first")
	fl.StringArrayVar(&f.thresholds, "threshold", nil, "pass/fail criterion evaluated on the merge, besides the test's own, e.g. 'p(99)<250ms'")
	return c
}

func (a *app) doCoordinate(f coordinateFlags) error {
	ts, err := analyze.ParseThresholds(f.thresholds)
	if err != nil {
		return usageErr(err)
	}
	c, err := coord.New(f.o)
	if err != nil {
		return usageErr(err)
	}
	g, err := guard.For(f.listen)
	if err != nil {
		return err
	}
	if tok := a.env.Getenv(coord.TokenEnv); tok != "" {
		g = guard.WithToken(tok)
	}
	ln, err := net.Listen("tcp", f.listen)
	if err != nil {
		return usagef("--listen %s: %v", f.listen, err)
	}
	srv := &http.Server{Handler: g.Handler(c.Handler()), ReadHeaderTimeout: 30 * time.Second}
	go srv.Serve(ln)
	defer func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(a.ctx), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		srv.Close()
	}()
	if tok := a.env.Getenv(coord.TokenEnv); tok != "" {
		fmt.Fprintf(a.env.Stderr, "coordinator: http://%s/ (token from %s)\n", ln.Addr(), coord.TokenEnv)
	} else {
		g.Announce(a.env.Stderr, "coordinator", ln.Addr())
	}
	fmt.Fprintf(a.env.Stderr, "coordinator: waiting up to %v for %d runners to report ready\n", f.o.ReadyTimeout, f.o.Runners)

	go func() {
		select {
		case <-c.Released():
			fmt.Fprintf(a.env.Stderr, "coordinator: all %d runners ready: released them\n", f.o.Runners)
		case <-a.ctx.Done():
		}
	}()
	out, err := c.Wait(a.ctx)
	if err != nil {
		// knee k8s fetch learns why, rather than waiting for a result.
		c.Publish("", ExitFailure, err.Error())
		a.lingerForFetch(c, f.linger)
		return &ExitError{Code: ExitFailure, Err: err}
	}
	fmt.Fprintf(a.env.Stderr, "coordinator: released at %s; %d parts in, %d missing\n",
		out.Release.UTC().Format(time.RFC3339Nano), len(out.Parts), len(out.Missing))
	if len(out.Parts) == 0 {
		err := fmt.Errorf("no runner sent its part: %s", missingText(out.Missing))
		c.Publish("", ExitFailure, err.Error())
		a.lingerForFetch(c, f.linger)
		return &ExitError{Code: ExitFailure, Err: err}
	}
	mergedDir := filepath.Join(f.o.Dir, "merged")
	res, err := merge.MergeDirs(out.Parts, mergedDir, merge.Options{Partial: len(out.Missing) > 0})
	if err != nil {
		return &ExitError{Code: ExitFailure, Err: err}
	}
	verdict := a.printMerge(res, len(out.Parts), mergedDir, ts)
	if len(out.Missing) > 0 {
		// The missing part is never passed off as the whole test: the exit
		// is a failure whatever the thresholds say.
		verdict = &ExitError{Code: ExitFailure, Err: fmt.Errorf("the merge lacks %d of %d parts (%s); the merge of the others is kept, marked PARTIAL",
			len(out.Missing), f.o.Runners, missingText(out.Missing))}
	}
	code, msg := ExitOK, "every part merged; thresholds passed"
	var ee *ExitError
	if errors.As(verdict, &ee) {
		code, msg = ee.Code, ee.Err.Error()
	} else if verdict != nil {
		code, msg = ExitFailure, verdict.Error()
	}
	c.Publish(mergedDir, code, msg)
	a.lingerForFetch(c, f.linger)
	return verdict
}

// lingerForFetch waits until the published result is fetched, linger
// passes or knee is interrupted.
func (a *app) lingerForFetch(c *coord.Coordinator, linger time.Duration) {
	fmt.Fprintf(a.env.Stderr, "coordinator: serving the result for up to %v (knee k8s fetch)\n", linger)
	select {
	case <-c.Fetched():
		fmt.Fprintln(a.env.Stderr, "coordinator: the result was fetched")
	case <-time.After(linger):
		fmt.Fprintf(a.env.Stderr, "coordinator: not fetched within --linger %v\n", linger)
	case <-a.ctx.Done():
	}
}

func missingText(ms []coord.Missing) string {
	s := make([]string, len(ms))
	for i, m := range ms {
		s[i] = m.String()
	}
	return strings.Join(s, "; ")
}
