package analyze

import "github.com/knee-dev/knee/run"

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

// SummarizeCurve measures the curve of r (inferring the plan from the run's
// counters when plan.Steps is 0, with plan.Warmup and plan.Scenario kept),
// then finds the knee, the collapse and the USL fit and writes the capacity line.
func SummarizeCurve(r *run.Run, plan StepPlan, h Health) (CurveSummary, error) {
	if plan.Steps == 0 {
		inferred, err := InferPlan(r, plan.Scenario, plan.Warmup)
		if err != nil {
			return CurveSummary{}, err
		}
		plan = inferred
	}
	steps, err := Curve(r, plan)
	if err != nil {
		return CurveSummary{}, err
	}
	s := CurveSummary{Plan: plan, Steps: steps, Knee: FindKnee(steps, h), Collapse: FindCollapse(steps)}
	// The fit is a second view of the same steps: without it the curve,
	// knee and collapse still stand, so its failure is a note, not an error.
	if u, err := FitUSL(LittlePoints(steps)); err != nil {
		s.USLNote = err.Error()
	} else {
		s.USL = &u
	}
	s.Capacity = CapacityLine(s.Knee, s.Collapse)
	return s, nil
}
