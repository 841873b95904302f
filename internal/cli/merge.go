package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/knee-dev/knee/analyze"
	"github.com/knee-dev/knee/merge"
	"github.com/knee-dev/knee/report"
	"github.com/knee-dev/knee/rundir"
)

func (a *app) mergeCommand() *cobra.Command {
	var f mergeFlags
	c := &cobra.Command{
		Use:   "merge RUN... --out DIR",
		Short: "Merge the run directories of a test split among runners into one run directory",
		Long: `knee merge builds one run directory from the parts of a split test (knee run
--execution-segment on each runner): intervals aligned on the wall clock,
histograms added per interval and tag, counters and dropped iterations summed,
each runner's environment note kept. Every command that reads a run directory
reads the merge. Parts of different tests, or a part given twice, are refused.

A RUN that is not itself a run directory stands for every run directory under
it (two levels down), so a volume of parts can be merged without a shell glob.`,
		Example: `  knee merge results/part-0/* results/part-1/* --out results/merged
  knee merge /results --out /results/merged --threshold 'p(99)<250ms'`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error { return a.doMerge(args, f) },
	}
	c.Flags().StringVar(&f.out, "out", "", "the run directory to write (must not exist yet)")
	c.Flags().StringArrayVar(&f.thresholds, "threshold", nil, "pass/fail criterion evaluated on the merge, e.g. 'p(99)<250ms' (exit 99 when one fails)")
	c.Flags().BoolVar(&f.partial, "partial", false, "merge even when segments of the test are missing; every output then says which share of the test it covers")
	c.Flags().IntVar(&f.waitParts, "wait-parts", 0, "first wait until this many parts have finished (a merge started beside runners that share a volume)")
	c.Flags().DurationVar(&f.waitTimeout, "wait-timeout", 30*time.Minute, "how long --wait-parts waits")
	return c
}

type mergeFlags struct {
	out         string
	thresholds  []string
	waitParts   int
	waitTimeout time.Duration
	partial     bool
}

func (a *app) doMerge(args []string, f mergeFlags) error {
	out := f.out
	if out == "" {
		return usagef("merge: give the run directory to write with --out DIR")
	}
	if _, err := os.Stat(filepath.Join(out, rundir.MetaFile)); err == nil {
		return usagef("merge: --out %s is already a run directory; choose a new directory", out)
	}
	ts, err := analyze.ParseThresholds(f.thresholds)
	if err != nil {
		return usageErr(err)
	}
	dirs, err := merge.FindParts(args, out)
	if f.waitParts > 0 {
		dirs, err = merge.WaitForParts(a.ctx, args, out, f.waitParts, f.waitTimeout, 2*time.Second)
	}
	if err != nil {
		return usageErr(err)
	}
	res, err := merge.MergeDirs(dirs, out, merge.Options{Partial: f.partial})
	if errors.Is(err, merge.ErrRefused) {
		return usageErr(err)
	}
	if err != nil {
		return err
	}
	return a.printMerge(res, len(dirs), out, ts)
}

// printMerge prints a merge's summary, its runners and its thresholds (the
// test's own, which its runners recorded and left to the merge, then ts);
// an error of exit code 99 when one fails. knee merge and knee coordinate
// print through it.
func (a *app) printMerge(res *merge.Result, parts int, out string, ts []analyze.Threshold) error {
	own, err := analyze.ParseThresholds(res.Thresholds)
	if err != nil {
		return usageErr(fmt.Errorf("merge: the parts' recorded thresholds: %w", err))
	}
	ts = append(own, ts...)
	w := a.env.Stdout
	fmt.Fprintf(w, "merged %d parts into run directory: %s\n", parts, out)
	if err := report.Summary(a.tables(), res.Run.Meta.Summary); err != nil {
		return err
	}
	fmt.Fprintln(w, "per runner")
	for _, r := range res.Parts {
		name := r.Name
		if name == "" {
			name = r.Host
		}
		state := ""
		if r.Interrupted {
			state = "  INTERRUPTED"
		} else if !r.Finished {
			state = "  DID NOT FINISH"
		}
		fmt.Fprintf(w, "  %-12s %-20s %9d requests  p99 %s%s\n", r.Segment, name, r.Requests, ms(r.P99), state)
	}
	fmt.Fprintf(w, "p99 of all requests (histograms added): %s\n", ms(res.TrueP99))
	if res.MeanP99 != res.TrueP99 {
		fmt.Fprintf(w, "runners' p99s averaged:                 %s  <- wrong: percentiles do not average; use the line above\n", ms(res.MeanP99))
	}
	// A cut part makes a cut test: its exit code is the part's, so CI never
	// takes the merge of an interrupted runner for a whole test.
	var cut error
	for _, r := range res.Parts {
		name := r.Name
		if name == "" {
			name = r.Host
		}
		switch {
		case r.Interrupted:
			cut = &ExitError{Code: ExitInterrupted, Err: fmt.Errorf("part %s (%s, %s) was interrupted: the merge measured less than was asked", r.Segment, name, r.Dir)}
		case !r.Finished:
			cut = &ExitError{Code: ExitFailure, Err: fmt.Errorf("part %s (%s, %s) did not finish: the merge measured less than was asked", r.Segment, name, r.Dir)}
		}
		if cut != nil {
			break
		}
	}
	if cut == nil {
		cut = noResponse(res.Run.Meta.Summary)
	}
	if len(ts) == 0 {
		return cut
	}
	results := analyze.EvaluateThresholds(res.Run, ts)
	printThresholds(w, results)
	if cut != nil {
		return cut
	}
	if !analyze.ThresholdsPass(results) {
		return &ExitError{Code: ExitThresholds, Err: errors.New("thresholds failed on the merge")}
	}
	return nil
}

func ms(d interface{ Seconds() float64 }) string {
	return fmt.Sprintf("%.3f ms", d.Seconds()*1000)
}
