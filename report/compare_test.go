package report

import (
	"math"
	"testing"
)

// A ratio prints with its decimals and ×; one with a zero denominator
// (0/0, x/0, as analyze leaves it: 0) or no finite value prints "-".
func TestRatio(t *testing.T) {
	for _, tc := range []struct {
		x, den   float64
		decimals int
		want     string
	}{
		{1909.0 / 1916, 1916, 2, "1.00×"},
		{1220.0 / 1020, 1020, 2, "1.20×"},
		{5001, 1, 0, "5001×"},
		{0, 0, 2, "-"},     // 0/0
		{0, 0, 0, "-"},     // x/0, left 0 by analyze
		{0, 5, 2, "0.00×"}, // 0/5 is a ratio
		{math.Inf(1), 1, 0, "-"},
		{math.NaN(), 1, 2, "-"},
	} {
		if got := Ratio(tc.x, tc.den, tc.decimals); got != tc.want {
			t.Errorf("Ratio(%v, %v, %d) = %q, want %q", tc.x, tc.den, tc.decimals, got, tc.want)
		}
	}
}
