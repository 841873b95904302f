package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/knee-dev/knee/analyze"
	"github.com/knee-dev/knee/report"
	"github.com/knee-dev/knee/rundir"
	"github.com/knee-dev/knee/use/probe"
)

type curveFlags struct {
	plan          planFlags
	imp           importFlags
	scenario      string
	plots         string
	summaryExport string
	keep          string
}

func (a *app) curveCommand() *cobra.Command {
	var f curveFlags
	c := &cobra.Command{
		Use:   "curve PATH",
		Short: "The throughput-latency curve of a stepped run already made: steps, knee, collapse, plots",
		Long: `knee curve reads a stepped run (a knee run directory, a k6 CSV/JSON output or
any other import) and prints the per-step table, the knee, the collapse, the
USL fit and the capacity line, and writes curve.png/.svg and
timeline.png/.svg. A run of knee steps is measured by the plan it was made
by, stored in its run.json, warmup included: --warmup replaces the run's,
--steps may ask for fewer steps, and any other plan flag must agree with
the run. Otherwise, without --start the plan is read from the run (its
stages in run.json, or the offered rate it recorded), the warmup from
--warmup. With --start, --step and --step-duration
the number of steps follows from the data unless --steps is given, and the
jump before each hold (1 s in the article's script, 0 s in a k6 script whose
rate changes at once) is read from the achieved rates unless --jump is
given. When the run directory holds resources.jsonl (knee steps), the USE
table and the bottleneck verdict are printed too.`,
		Example: `  knee curve runs/2026-11-30T10-00-00/
  knee curve results.csv --start 100 --step 100 --step-duration 8s --warmup 2s
  knee curve steps.csv --start 100 --step 100 --steps 10 --step-duration 20s --jump 1s --warmup 6s --plots out/`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error { return a.doCurve(c, args[0], f) },
	}
	f.plan.register(c, analyze.StepPlan{Steps: 0, Warmup: 6 * time.Second})
	f.imp.register(c)
	fl := c.Flags()
	fl.DurationVar(&f.plan.jump, "jump", analyze.DefaultJump, "how long each step takes to reach its rate before the hold (0s: at once, as a k6 stage of 0s); default: read from the data")
	fl.StringVar(&f.scenario, "scenario", "", "measure only this scenario")
	fl.StringVar(&f.plots, "plots", "", "directory for the plots (default: the run directory, or . for an import)")
	fl.StringVar(&f.summaryExport, "summary-export", "", "write the curve (and USE scan) as JSON to this file")
	fl.StringVar(&f.keep, "keep", "", "keep the imported run directory here (imports only)")
	return c
}

func (a *app) doCurve(c *cobra.Command, path string, f curveFlags) error {
	plan := f.plan.plan()
	plan.Scenario = f.scenario
	fl := c.Flags()
	given := &analyze.PlanGiven{Start: fl.Changed("start"), Step: fl.Changed("step"), Steps: fl.Changed("steps"),
		StepDuration: fl.Changed("step-duration"), Jump: fl.Changed("jump"), Warmup: fl.Changed("warmup")}
	// Flags are checked before a run is read: all of the plan for an import,
	// which stores none; those given for a run directory, whose own plan
	// may complete them (ResolvePlan checks the rest).
	check := analyze.ValidatePartialPlan(plan)
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		check = analyze.ValidateGivenPlan(plan, *given)
	}
	if len(check) > 0 {
		return usageErr(errors.Join(check...))
	}
	r, cleanup, err := a.openOrImport(path, f.imp, f.keep)
	if err != nil {
		return err
	}
	defer cleanup()
	samples, torn, err := probe.ReadSamplesFile(filepath.Join(r.Dir, rundir.ResourcesFile))
	if err != nil {
		return usageErr(err)
	}
	if torn {
		r.Torn = append(r.Torn, rundir.TornNote(rundir.ResourcesFile))
	}
	an, err := analyze.Analyze(r, analyze.Options{
		Plan: &plan, Given: given, Health: f.plan.health(), Samples: samples,
	})
	if err == nil && an.Steps == nil {
		err = an.NoSteps
	}
	if err != nil {
		return usageErr(fmt.Errorf("%s: %w", path, err))
	}
	res := an.Steps
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		res.Dir = path
	}
	dir := f.plots
	if dir == "" {
		dir = res.Dir
	}
	if dir == "" {
		dir = "."
	}
	res.Plots, err = report.WriteStepPlots(dir, r, res.CurveSummary)
	return a.finishSteps(res, err, f.summaryExport)
}
