package analyze

import (
	"fmt"

	"github.com/knee-dev/knee/rundir"
)

// CurveSummary is everything a stepped run says about capacity, in the
// shape --summary-export writes.
type CurveSummary struct {
	Plan     StepPlan  `json:"plan"`
	Steps    []Step    `json:"steps"`
	Knee     Knee      `json:"knee"`
	Collapse *Collapse `json:"collapse"`           // null when throughput never collapsed
	USL      *USL      `json:"usl"`                // null when the steps allow no fit
	USLNote  string    `json:"usl_note,omitempty"` // why usl is null
	Capacity string    `json:"capacity"`
}

// MinUSLR2 is the least R² of a USL fit worth reporting.
const MinUSLR2 = 0.5

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
	switch u, err := FitUSL(LittlePoints(steps)); {
	case err != nil:
		s.USLNote = err.Error()
	case u.R2 < MinUSLR2:
		// A fit that explains less than this of the throughput predicts
		// nothing: typically every step ran below capacity, so concurrency
		// (N = X·R) hardly varied and there is no curvature to fit.
		s.USLNote = fmt.Sprintf("no usable fit (R² = %.2f < %.1f): concurrency hardly varied across the steps; step past the knee to fit the law", u.R2, MinUSLR2)
	default:
		s.USL = &u
	}
	s.Capacity = CapacityLine(s.Knee, s.Collapse)
	return s, nil
}
