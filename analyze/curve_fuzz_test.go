package analyze

import "testing"

// InferPlan must never panic, and a plan it infers must be valid and
// measurable on the run it came from.
func FuzzInferPlan(f *testing.F) {
	f.Add([]byte{1, 1, 1, 2, 2, 2, 3, 3, 3})
	f.Add([]byte{0, 0, 5, 5, 6, 7, 7, 0})
	f.Add([]byte{1, 2, 4, 4, 8, 8})
	f.Fuzz(func(t *testing.T, levels []byte) {
		rs := make([]float64, len(levels))
		for i, b := range levels {
			rs[i] = float64(b%8) * 10 // few levels, so holds are common
		}
		r := rateRun(rs...)
		plan, err := InferPlan(r, "", 0)
		if err != nil {
			return
		}
		if errs := plan.Validate(); len(errs) > 0 {
			t.Fatalf("inferred an invalid plan %+v: %v", plan, errs)
		}
		if _, err := Curve(r, plan); err != nil {
			t.Fatalf("inferred plan %+v does not measure its run: %v", plan, err)
		}
	})
}
