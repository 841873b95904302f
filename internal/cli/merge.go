package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/knee-dev/knee/analyze"
	"github.com/knee-dev/knee/merge"
	"github.com/knee-dev/knee/report"
	"github.com/knee-dev/knee/rundir"
)

func (a *app) mergeCommand() *cobra.Command {
	var out string
	var thresholds []string
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
		RunE: func(c *cobra.Command, args []string) error { return a.doMerge(args, out, thresholds) },
	}
	c.Flags().StringVar(&out, "out", "", "the run directory to write (must not exist yet)")
	c.Flags().StringArrayVar(&thresholds, "threshold", nil, "pass/fail criterion evaluated on the merge, e.g. 'p(99)<250ms' (exit 99 when one fails)")
	return c
}

func (a *app) doMerge(args []string, out string, thresholds []string) error {
	if out == "" {
		return usagef("merge: give the run directory to write with --out DIR")
	}
	if _, err := os.Stat(filepath.Join(out, rundir.MetaFile)); err == nil {
		return usagef("merge: --out %s is already a run directory; choose a new directory", out)
	}
	ts, err := analyze.ParseThresholds(thresholds)
	if err != nil {
		return usageErr(err)
	}
	dirs, err := partDirs(args, out)
	if err != nil {
		return usageErr(err)
	}
	var parts []*rundir.Dir
	for _, d := range dirs {
		r, err := rundir.Open(d)
		if err != nil {
			return usageErr(err)
		}
		parts = append(parts, r)
	}
	res, err := merge.Merge(parts, out)
	if errors.Is(err, merge.ErrRefused) {
		return usageErr(err)
	}
	if err != nil {
		return err
	}
	w := a.env.Stdout
	fmt.Fprintf(w, "merged %d parts into run directory: %s\n", len(parts), out)
	if err := report.Summary(w, res.Run.Meta.Summary); err != nil {
		return err
	}
	fmt.Fprintln(w, "per runner")
	for _, r := range res.Runners {
		fmt.Fprintf(w, "  %-12s %-20s %9d requests  p99 %s\n", r.Segment, r.Runner, r.Requests, ms(r.P99))
	}
	fmt.Fprintf(w, "p99 of all requests (histograms added): %s\n", ms(res.TrueP99))
	if res.MeanP99 != res.TrueP99 {
		fmt.Fprintf(w, "runners' p99s averaged:                 %s  <- wrong: percentiles do not average; use the line above\n", ms(res.MeanP99))
	}
	if len(ts) == 0 {
		return nil
	}
	results := analyze.EvaluateThresholds(res.Run, ts)
	printThresholds(w, results)
	if !analyze.ThresholdsPass(results) {
		return &ExitError{Code: ExitThresholds, Err: errors.New("thresholds failed on the merge")}
	}
	return nil
}

// partDirs expands each argument: a run directory itself, or every run
// directory up to two levels under it. The output directory is skipped.
func partDirs(args []string, out string) ([]string, error) {
	outAbs, _ := filepath.Abs(out)
	var dirs []string
	for _, arg := range args {
		if _, err := os.Stat(filepath.Join(arg, rundir.MetaFile)); err == nil {
			dirs = append(dirs, arg)
			continue
		}
		var found []string
		err := filepath.WalkDir(arg, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() {
				return nil
			}
			if abs, _ := filepath.Abs(p); abs == outAbs {
				return filepath.SkipDir
			}
			if rel, _ := filepath.Rel(arg, p); strings.Count(rel, string(filepath.Separator)) >= 2 {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(p, rundir.MetaFile)); err == nil {
				found = append(found, p)
				return filepath.SkipDir
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("merge %s: %w", arg, err)
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("merge %s: no run directory (run.json) in it or two levels under it", arg)
		}
		dirs = append(dirs, found...)
	}
	slices.Sort(dirs)
	return dirs, nil
}

func ms(d interface{ Seconds() float64 }) string {
	return fmt.Sprintf("%.3f ms", d.Seconds()*1000)
}
