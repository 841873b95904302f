package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/knee-dev/knee/analyze"
	"github.com/knee-dev/knee/dashboard"
	"github.com/knee-dev/knee/report"
	"github.com/knee-dev/knee/rundir"
)

func (a *app) reportCommand() *cobra.Command {
	var format, goal, action, data, out, serve string
	var thresholds []string
	c := &cobra.Command{
		Use:   "report RUN [RUN...]",
		Short: "Write a report in the article's template (Markdown or self-contained HTML)",
		Long: `knee report writes Goal, Load, Environment, Result, Bottleneck and Action for
one run directory; more run directories are its repetitions (median and range
are reported, never one run's figure alone). Runs of different scenarios,
models or targets are not repetitions and are refused with the reason: report
each on its own, or set them side by side with knee compare. HTML is one self-contained page
that works offline: summary per endpoint, latency over time, the percentile
distribution, the throughput-latency curve where there are steps, the USE
table, coordinated-omission warnings and the environment note.

--serve shows one finished run in the live dashboard's page (the charts over
time, the final summary) until Ctrl-C.`,
		Example: `  knee report runs/R1 runs/R2 runs/R3 --format html --out report.html \
      --goal "Can we hold 250 req/s at p95 < 200 ms?" --threshold 'p(95)<200ms' --action "..."`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if serve != "" {
				if len(args) != 1 {
					return usagef("--serve shows one run directory; %d given", len(args))
				}
				if err := dashboard.CheckAddr(serve); err != nil {
					return usageErr(fmt.Errorf("--serve: %w", err))
				}
				if _, err := openRuns(args); err != nil {
					return err
				}
				return a.serveRun(args[0], serve)
			}
			format, err := reportFormat(format, c.Flags().Changed("format"), out)
			if err != nil {
				return err
			}
			ts, err := analyze.ParseThresholds(thresholds)
			if err != nil {
				return usageErr(err)
			}
			runs, err := openRuns(args)
			if err != nil {
				return err
			}
			in, err := report.Build(runs, report.BuildOptions{Goal: goal, Action: action, Data: data, Thresholds: ts})
			if errors.Is(err, analyze.ErrNotRepetitions) {
				return usageErr(err)
			}
			if err != nil {
				return err
			}
			var buf bytes.Buffer
			if format == "html" {
				err = report.HTML(&buf, in)
			} else {
				err = report.Markdown(&buf, in)
			}
			if err != nil {
				return err
			}
			return a.output(out, buf.Bytes())
		},
	}
	fl := c.Flags()
	fl.StringVar(&format, "format", "md", "md or html (default: html when --out ends in .html or .htm, else md)")
	fl.StringVar(&goal, "goal", "", "the question the test answers")
	fl.StringVar(&action, "action", "", "what changes next and how the next run verifies it")
	fl.StringVar(&data, "data", "", "the test data used (e.g. '10,000 books, 5 ISBNs')")
	fl.StringArrayVar(&thresholds, "threshold", nil, "acceptance threshold from the SLO, e.g. 'p(95)<200ms' (repeatable)")
	fl.StringVar(&out, "out", "", "write to this file (default: standard output)")
	fl.StringVar(&serve, "serve", "", "show the run in the live dashboard's page at http://ADDR until Ctrl-C (alone: "+
		dashboard.DefaultAddr+"; give an address as --serve=ADDR)")
	fl.Lookup("serve").NoOptDefVal = dashboard.DefaultAddr
	return c
}

func (a *app) compareCommand() *cobra.Command {
	var vs bool
	var export string
	c := &cobra.Command{
		Use:   "compare BASE_RUN... --vs CANDIDATE_RUN...",
		Short: "Compare baseline runs with candidate runs, honestly",
		Long: `knee compare reports, per metric, both sides' median and range, the ratio of
medians and a verdict that calls a difference real only when it exceeds the
run-to-run spread (ranges that do not overlap, and a Mann-Whitney U test when
both sides have at least 5 runs). It warns when the environment notes differ.

Every run after --vs is a candidate, so shell globs work on both sides; a run
given twice, or on both sides, is refused.`,
		Example: "  knee compare runs/base-*/ --vs runs/candidate-*/",
		Args:    cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			base, cand, late, err := compareGroups(args, vs)
			if err != nil {
				return err
			}
			if late != "" {
				export = late
			}
			baseRuns, err := openRuns(base)
			if err != nil {
				return err
			}
			candRuns, err := openRuns(cand)
			if err != nil {
				return err
			}
			cmp, err := analyze.Compare(baseRuns, candRuns)
			if err != nil {
				if errors.Is(err, analyze.ErrDifferentScenarios) {
					return usageErr(err)
				}
				return err
			}
			if err := report.Comparison(a.tables(), cmp); err != nil {
				return err
			}
			if export != "" {
				return writeJSON(export, cmp)
			}
			return nil
		},
	}
	// Flag parsing stops at the first run: compareGroups reads the rest, so
	// that every run after --vs, however many a glob gives, is a candidate.
	c.Flags().SetInterspersed(false)
	c.Flags().BoolVar(&vs, "vs", false, "every run after it is a candidate")
	c.Flags().StringVar(&export, "summary-export", "", "write the comparison as JSON to this file")
	return c
}

// compareGroups splits knee compare's arguments (what flag parsing left,
// from the first run on) at --vs: the runs before are the baseline, every
// run after it a candidate. vsFirst: --vs came before any run. export is a
// --summary-export given among the runs. A run given twice or on both sides
// is refused: the verdicts would compare a run with itself.
func compareGroups(args []string, vsFirst bool) (base, cand []string, export string, err error) {
	side := &base
	if vsFirst {
		side = &cand
	}
	for i := 0; i < len(args); i++ {
		arg := args[i]
		switch {
		case arg == "--vs":
			if side == &cand {
				return nil, nil, "", usagef("--vs given twice: every run after the first --vs is a candidate")
			}
			side = &cand
		case arg == "--summary-export" && i+1 < len(args):
			i++
			export = args[i]
		case strings.HasPrefix(arg, "--summary-export="):
			export = strings.TrimPrefix(arg, "--summary-export=")
		case strings.HasPrefix(arg, "--vs="):
			side = &cand
			cand = append(cand, strings.TrimPrefix(arg, "--vs="))
		case strings.HasPrefix(arg, "-") && arg != "-":
			return nil, nil, "", usagef("%s: unknown flag of knee compare (its flags are --vs and --summary-export)", arg)
		default:
			*side = append(*side, arg)
		}
	}
	switch {
	case len(cand) == 0:
		return nil, nil, "", usagef("no candidate runs: give them after --vs")
	case len(base) == 0:
		return nil, nil, "", usagef("no baseline runs: give them before --vs")
	}
	seen := map[string]string{}
	for _, g := range []struct {
		name string
		runs []string
	}{{"baseline", base}, {"candidate", cand}} {
		for _, r := range g.runs {
			id := sameRunKey(r)
			if prev, ok := seen[id]; ok {
				return nil, nil, "", usagef("%s is given twice (%s, and %s): a run cannot be compared with itself; give each run once", r, prev, g.name)
			}
			seen[id] = g.name
		}
	}
	return base, cand, export, nil
}

// sameRunKey names a run directory so that ./a, a/ and a symlink to it are
// one run.
func sameRunKey(path string) string {
	p, err := filepath.Abs(path)
	if err != nil {
		return filepath.Clean(path)
	}
	if real, err := filepath.EvalSymlinks(p); err == nil {
		return real
	}
	return p
}

// tables is standard output for what package report prints: fitted to the
// terminal's width when standard output is one, full width when it is a
// file or a pipe.
func (a *app) tables() io.Writer {
	if !a.env.IsTerminal || a.env.Width == nil {
		return a.env.Stdout
	}
	if w := a.env.Width(); w > 0 {
		return report.Fit(a.env.Stdout, w)
	}
	return a.env.Stdout
}

// openRuns opens run directories; a missing one or one of another format is bad input.
func openRuns(dirs []string) ([]*rundir.Dir, error) {
	var out []*rundir.Dir
	for _, d := range dirs {
		r, err := rundir.Open(d)
		if err != nil {
			return nil, usageErr(fmt.Errorf("%s: %w", d, err))
		}
		out = append(out, r)
	}
	return out, nil
}

// output writes b to path, or to stdout when path is empty.
func (a *app) output(path string, b []byte) error {
	if path == "" {
		_, err := a.env.Stdout.Write(b)
		return err
	}
	if err := rundir.WriteFileAtomic(path, b, 0o644); err != nil { // a full disk leaves no half a report
		return err
	}
	fmt.Fprintf(a.env.Stderr, "wrote %s\n", path)
	return nil
}

// reportFormat is the report's format: --format when given (set), else
// the one --out's name says (.html, .htm, .md), else Markdown. A --format
// that contradicts --out's name is refused: a page named report.html
// holding Markdown is a silent difference.
func reportFormat(format string, set bool, out string) (string, error) {
	if format != "md" && format != "html" {
		return "", usagef("--format %q: use md or html", format)
	}
	byName := ""
	switch strings.ToLower(filepath.Ext(out)) {
	case ".html", ".htm":
		byName = "html"
	case ".md", ".markdown":
		byName = "md"
	}
	switch {
	case !set && byName != "":
		return byName, nil
	case set && byName != "" && byName != format:
		return "", usagef("--format %s but --out %s names a %s file: give one or the other", format, out, byName)
	}
	return format, nil
}
