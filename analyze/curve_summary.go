package analyze

import (
	"fmt"
	"math"

	"github.com/knee-dev/knee/rundir"
)

// CurveSummary is everything a stepped run says about capacity, in the
// shape --summary-export writes.
type CurveSummary struct {
	Plan     StepPlan  `json:"plan"`
	Steps    []Step    `json:"steps"`
	Knee     Knee      `json:"knee"`
	Collapse *Collapse `json:"collapse"`           // null when throughput never collapsed
	USL      *USL      `json:"usl"`                // null when the steps allow no fit that bounds the curve
	USLNote  string    `json:"usl_note,omitempty"` // why usl is null: no fit, or no ceiling in the fit
	Capacity string    `json:"capacity"`
}

// MinUSLR2 is the least R² of a USL fit worth reporting. Three parameters
// through a handful of steps explain most of any curve: a fit that leaves
// more than a tenth of the throughput's variance unexplained (a user's
// healthy run fitted R² 0.565 and a "peak" below what it had served) does
// not locate a peak.
const MinUSLR2 = 0.9

// SummarizeCurve measures the curve of r (inferring the plan from the run's
// counters when plan.Steps is 0 and no start is given, with plan.Warmup and
// plan.Scenario kept; see ResolvePlan for a plan given in part),
// then finds the knee, the collapse and the USL fit and writes the capacity line.
func SummarizeCurve(r *rundir.Dir, plan StepPlan, h Health) (CurveSummary, error) {
	switch {
	case plan.Steps == 0 && plan.Start == 0:
		inferred, err := InferPlan(r, plan.Scenario, plan.Warmup)
		if err != nil {
			return CurveSummary{}, err
		}
		plan = inferred
	case plan.Steps == 0:
		plan.Steps = StepsIn(r, plan)
	}
	steps, err := Curve(r, plan)
	if err != nil {
		return CurveSummary{}, err
	}
	s := CurveSummary{Plan: plan, Steps: steps, Knee: FindKnee(steps, h), Collapse: FindCollapse(steps)}
	// The fit is a second view of the same steps: without it the curve,
	// knee and collapse still stand, so its failure is a note, not an error.
	s.USL, s.USLNote = uslOf(steps, h)
	s.Capacity = CapacityLine(s.Knee, s.Collapse)
	return s, nil
}

// uslOf fits the law to the steps and returns the fit when it bounds the
// curve, else nil and why not.
func uslOf(steps []Step, h Health) (*USL, string) {
	pts := LittlePoints(steps)
	u, err := FitUSL(pts)
	switch {
	case err != nil:
		return nil, err.Error()
	case u.R2 < MinUSLR2:
		// A fit that explains less than this of the throughput predicts
		// nothing: typically every step ran below capacity, so concurrency
		// (N = X·R) hardly varied and there is no curvature to fit.
		return nil, fmt.Sprintf("no usable fit (R² = %.3f < %.1f): concurrency hardly varied across the steps; step past the knee to fit the law", u.R2, MinUSLR2)
	}
	if why := noCeiling(u, pts, bestHealthyRate(steps, h)); why != "" {
		return nil, "the fit does not bound the curve: " + why
	}
	return &u, ""
}

// noCeiling says why a fit's peak is no ceiling of the curve, or "" when it
// is one. The law counts concurrency from one request in flight (X(1) = λ):
// a peak at N* < 1 lies where it says nothing, and comes from steps that
// never queued (their N = X·R stayed under 1). A peak below a rate a
// healthy step served is contradicted by the run itself. A linear fit
// (σ = κ = 0) has no ceiling at all.
func noCeiling(u USL, pts []USLPoint, healthy float64) string {
	params := fmt.Sprintf("σ=%.4g κ=%.4g λ=%.4g req/s, R²=%.3f", u.Sigma, u.Kappa, u.Lambda, u.R2)
	lo, hi := math.Inf(1), 0.0
	for _, p := range pts {
		lo, hi = math.Min(lo, p.N), math.Max(hi, p.N)
	}
	switch {
	case u.Kappa > 0 && u.PeakN < 1:
		queued := ""
		if hi < 1 {
			queued = ", so the target never queued"
		}
		return fmt.Sprintf("its peak falls at N=%.3g, under one request in flight, where the law does not hold (%s); the steps' concurrency N = X·R was between %.3g and %.3g%s: step past the knee to fit the law",
			u.PeakN, params, lo, hi, queued)
	case u.PeakRate <= 0:
		return fmt.Sprintf("it is linear (%s): throughput rose with concurrency and shows no ceiling yet", params)
	case healthy > u.PeakRate:
		return fmt.Sprintf("its peak, %.4g req/s, is below the %.4g req/s a healthy step achieved (%s)", u.PeakRate, healthy, params)
	}
	return ""
}

// bestHealthyRate is the highest achieved rate of a step that met h; 0
// when none did.
func bestHealthyRate(steps []Step, h Health) float64 {
	h = h.withDefaults()
	bound := h.p95Bound(steps)
	best := 0.0
	for _, s := range steps {
		if len(h.Problems(s, bound)) == 0 {
			best = math.Max(best, s.Rate)
		}
	}
	return best
}
