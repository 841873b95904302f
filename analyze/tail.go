package analyze

import (
	"fmt"
	"math"
)

// PageTail is the share of pages with at least one slow call when a page
// makes n calls, each slow with probability p (0.01 for "slower than p99"):
// 1-(1-p)^n, computed as -expm1(n*log1p(-p)) to stay exact for tiny p.
// Errors name knee tail's flags.
func PageTail(p float64, n int) (float64, error) {
	if !(p > 0 && p < 1) {
		return 0, fmt.Errorf("--p %g: must be a probability between 0 and 1 exclusive (e.g. 0.01)", p)
	}
	if n < 1 {
		return 0, fmt.Errorf("--calls %d: must be at least 1", n)
	}
	return -math.Expm1(float64(n) * math.Log1p(-p)), nil
}
