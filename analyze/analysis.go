package analyze

import (
	"errors"
	"slices"
	"time"

	"github.com/knee-dev/knee/record"
	"github.com/knee-dev/knee/rundir"
	"github.com/knee-dev/knee/use"
)

// Options say what Analyze reads of a run. The zero value analyses a plain
// run: every scenario, DefaultWindow windows, coordinated omission detected
// from run.json, the correction when the run is closed-model, no curve.
type Options struct {
	Select Selector      // the scenario and request name to analyse; zero: all
	Window time.Duration // of the per-window table; 0: DefaultWindow
	// CO is passed to DetectCO (its Select is Options.Select). A Think or
	// ExpectedInterval asks for the correction even when run.json does not
	// say the run is closed-model; ExpectedInterval is the correction's too.
	// A Think is the think time of every scenario not known to be open that
	// has none of its own (an import), which is then taken as closed.
	CO COOptions
	// Server is the target's own latency record (a run directory or an
	// import): its merged latency is compared with the client's
	// (CO.ServerHistogram, when that is not given).
	Server     *rundir.Dir
	Thresholds []Threshold

	// Plan makes the run a stepped one: nil is no curve; one given in part
	// is completed by ResolvePlan. Given names the fields of Plan its user
	// gave (knee curve's flags): the run's own plan then replaces the
	// others and the jump is read from the data unless given; nil: Plan is
	// taken as its caller made it (knee steps' own, whole).
	Plan   *StepPlan
	Given  *PlanGiven
	Health Health
	// Samples are the USE samples of a stepped run (resources.jsonl), judged
	// per step with USEThresholds (nil: use's defaults).
	Samples       []use.Sample
	USEThresholds use.Thresholds
}

// Analysis is everything knee says about a run, computed once for every
// reader: knee analyze, knee curve and knee steps, the reports and the lab.
type Analysis struct {
	Summary rundir.Summary // over Options.Select
	Windows WindowReport
	CO      COSignals
	// Correction is the coordinated-omission correction of the whole run
	// and Corrected the summary it gives; both nil when none was wanted or
	// none could be made (CorrectionNote says why, for the latter).
	Correction     *Correction
	Corrected      *rundir.Summary
	CorrectionNote string
	Thresholds     []ThresholdResult
	// Steps is the curve, USE scan and verdict of a stepped run; nil when
	// Options.Plan is nil or the run holds no step to measure (NoSteps then
	// says why and wraps ErrNoSteps).
	Steps   *StepsResult
	NoSteps error
}

// Analyze reads r whole: summary, windows, coordinated-omission signals
// and, where it is wanted, the correction, thresholds, and the curve when a
// plan is given. Only an invalid plan is an error: what cannot be computed
// for this run is said in the Analysis.
func Analyze(r *rundir.Dir, opt Options) (*Analysis, error) {
	if r == nil {
		return nil, errors.New("analyze: no run")
	}
	if opt.CO.Think > 0 {
		r = withThink(r, opt.CO.Think)
	}
	a := &Analysis{
		Summary:    Summarize(r, SummaryOptions{Select: opt.Select}),
		Windows:    Windows(r, opt.Window, opt.Select.Keep),
		Thresholds: EvaluateThresholds(r, opt.Thresholds),
	}
	co := opt.CO
	co.Select = opt.Select
	if opt.Server != nil && co.ServerHistogram == nil {
		co.ServerHistogram = opt.Server.Merged(func(k record.Key) bool { return k.Metric == record.Latency }, 0, 0)
	}
	a.CO = DetectCO(r, co)
	if wantsCorrection(r, opt.CO) {
		switch c, err := Correct(r, opt.CO.ExpectedInterval); {
		case err != nil:
			a.CorrectionNote = err.Error()
		default:
			s := c.Summary(a.Summary)
			a.Correction, a.Corrected = &c, &s
		}
	}
	if opt.Plan != nil {
		plan, err := ResolvePlan(r, *opt.Plan, opt.Given)
		if err == nil {
			a.Steps, err = AnalyzeSteps(r, opt.Samples, plan, opt.Health, opt.USEThresholds)
		}
		switch {
		case errors.Is(err, ErrNoSteps):
			a.NoSteps = err
		case err != nil:
			return nil, err // already says "analyze: "
		}
	}
	return a, nil
}

// wantsCorrection: closed-model data, or the user gave an interval or a
// think time.
func wantsCorrection(r *rundir.Dir, co COOptions) bool {
	if co.ExpectedInterval > 0 || co.Think > 0 || r.Meta.Model == "closed" {
		return true
	}
	for _, s := range r.Meta.Scenarios {
		if s.Model == "closed" {
			return true
		}
	}
	return false
}

// withThink is r as a closed-model run with the user's think time: every
// scenario not known to be open and without a think time of its own gets
// think. r itself is left as it is.
func withThink(r *rundir.Dir, think time.Duration) *rundir.Dir {
	c := *r
	c.Meta.Scenarios = slices.Clone(r.Meta.Scenarios)
	for i := range c.Meta.Scenarios {
		if c.Meta.Scenarios[i].Think == 0 && c.Meta.Scenarios[i].Model != "open" {
			c.Meta.Scenarios[i].Think = think
			c.Meta.Scenarios[i].Model = "closed"
		}
	}
	return &c
}
