package analyze

import (
	"math"
	"strings"
	"testing"
)

// 1-(1-p)^n worked by hand: 1-0.99^20 = 0.182093..., 1-0.5^2 = 0.75; for
// p = 1e-12 and n = 3 it is 3p - 3p² + p³, which 1-math.Pow(1-p, 3) gets
// wrong in the fifth digit.
func TestPageTail(t *testing.T) {
	for _, tc := range []struct {
		p    float64
		n    int
		want float64
		tol  float64
	}{
		{0.01, 20, 0.18209306240276923, 1e-12},
		{0.5, 2, 0.75, 1e-12},
		{0.01, 1, 0.01, 1e-12},
		{1e-12, 3, 3e-12 - 3e-24 + 1e-36, 1e-26},
	} {
		got, err := PageTail(tc.p, tc.n)
		if err != nil || math.Abs(got-tc.want) > tc.tol {
			t.Errorf("PageTail(%g, %d) = %g, %v; want %g", tc.p, tc.n, got, err, tc.want)
		}
	}
	for _, tc := range []struct {
		p    float64
		n    int
		want string
	}{
		{0, 20, "--p 0"}, {1, 20, "--p 1"}, {1.5, 20, "--p 1.5"}, {-0.1, 20, "--p -0.1"}, {math.NaN(), 20, "--p NaN"},
		{0.01, 0, "--calls 0"}, {0.01, -4, "--calls -4"},
	} {
		if _, err := PageTail(tc.p, tc.n); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("PageTail(%g, %d): %v; want an error naming %q", tc.p, tc.n, err, tc.want)
		}
	}
}
