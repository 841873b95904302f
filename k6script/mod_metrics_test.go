package k6script

import (
	"testing"

	"github.com/dop251/goja"
)

// The values k6's add() takes (internal/js/modules/k6/metrics add: the
// value as a number, 1 for a truthy zero, null and NaN refused), worked out
// from JavaScript's ToNumber and ToBoolean by hand.
func TestMetricValue(t *testing.T) {
	rt := goja.New()
	for _, tc := range []struct {
		js   string
		want float64
		ok   bool
	}{
		{"5", 5, true},
		{"'5'", 5, true},     // a numeric string is its number
		{"true", 1, true},    // booleans are 1 and 0
		{"false", 0, true},   //
		{"'0'", 1, true},     // ToNumber 0, but truthy: k6 adds 1
		{"[]", 1, true},      // ToNumber 0, truthy
		{"[7]", 7, true},     // ToNumber of "7"
		{"''", 0, true},      // ToNumber 0, falsy: 0
		{"-2.5", -2.5, true}, //
		{"null", 0, false},   // k6 refuses null, though ToNumber(null) is 0
		{"undefined", 0, false},
		{"'abc'", 0, false}, // NaN
		{"NaN", 0, false},
		{"({})", 0, false}, // NaN
	} {
		v, err := rt.RunString(tc.js)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := metricValue(v)
		if ok != tc.ok || ok && got != tc.want {
			t.Errorf("metricValue(%s) = %v, %v; want %v, %v", tc.js, got, ok, tc.want, tc.ok)
		}
	}
	if got := limitValue(string(make([]rune, 120))); len([]rune(got)) != 100+len("... omitting 20 characters ...") {
		t.Errorf("limitValue of 120 runes kept %d; want 50 from each end around the note", len([]rune(got)))
	}
}
