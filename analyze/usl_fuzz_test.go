package analyze

import (
	"encoding/json"
	"errors"
	"math"
	"testing"
)

// FitUSL must never panic, and a fit it returns must be finite and
// exportable as JSON, whatever points it is given.
func FuzzFitUSL(f *testing.F) {
	f.Add(1.0, 100.0, 2.0, 190.0, 4.0, 330.0, 8.0, 480.0)
	f.Add(1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0)
	f.Add(1e-300, 1e300, 2.0, 0.0, math.NaN(), 3.0, 5.0, -1.0)
	f.Fuzz(func(t *testing.T, n1, x1, n2, x2, n3, x3, n4, x4 float64) {
		u, err := FitUSL([]USLPoint{{n1, x1}, {n2, x2}, {n3, x3}, {n4, x4}})
		if err != nil {
			if !errors.Is(err, ErrTooFewPoints) && !errors.Is(err, ErrNoFit) {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		for _, v := range []float64{u.Lambda, u.Sigma, u.Kappa, u.PeakN, u.PeakRate, u.R2} {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("non-finite fit %+v", u)
			}
		}
		if u.Sigma < 0 || u.Sigma > 1 || u.Kappa < 0 || u.Lambda <= 0 {
			t.Fatalf("fit outside the law's bounds: %+v", u)
		}
		if _, err := json.Marshal(u); err != nil {
			t.Fatal(err)
		}
	})
}

// Kneedle must never panic and must return an index inside its input.
func FuzzKneedle(f *testing.F) {
	f.Add(1.0, 2.0, 3.0, 4.0, 0.0, 1.0, 2.0, 1000.0, true)
	f.Add(1.0, 1.0, 1.0, 1.0, math.Inf(1), 1.0, math.NaN(), 0.0, false)
	f.Fuzz(func(t *testing.T, x1, x2, x3, x4, y1, y2, y3, y4 float64, convex bool) {
		shape := Concave
		if convex {
			shape = Convex
		}
		i, ok := Kneedle([]float64{x1, x2, x3, x4}, []float64{y1, y2, y3, y4}, shape)
		if i < 0 || i > 3 || (!ok && i != 0) {
			t.Fatalf("Kneedle returned %d, %v", i, ok)
		}
	})
}
