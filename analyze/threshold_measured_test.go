package analyze

import "testing"

// A threshold on a fraction is written as a percentage ("errors<1%"), so
// what it measured is printed as one too.
func TestThresholdMeasured(t *testing.T) {
	for _, tc := range []struct {
		r    ThresholdResult
		want string
	}{
		{ThresholdResult{Value: 0, Unit: "fraction"}, "measured 0.00 %"},
		{ThresholdResult{Value: 0.0123, Unit: "fraction"}, "measured 1.23 %"},
		{ThresholdResult{Value: 12.5, Unit: "ms"}, "measured 12.5 ms"},
		{ThresholdResult{Value: 20, Unit: "requests"}, "measured 20 requests"},
		{ThresholdResult{Value: 0, Unit: "ms", Note: "no requests"}, "measured 0 ms (no requests)"},
	} {
		if got := tc.r.Measured(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.r, got, tc.want)
		}
	}
}
