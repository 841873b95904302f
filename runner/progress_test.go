package runner

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// fitLine drops the least important fields first and cuts only what no
// dropping can fit.
func TestFitLine(t *testing.T) {
	fields := []progressField{
		{"   12s/60s", 0},
		{"target 500/s", 1},
		{"achieved 498/s", 1},
		{"VUs busy 3/50", 4},
		{"(max 50)", 6},
		{"p99 1.25ms", 2},
		{"errors 0", 3},
		{"dropped 0", 3},
	}
	full := "   12s/60s  target 500/s  achieved 498/s  VUs busy 3/50  (max 50)  p99 1.25ms  errors 0  dropped 0"
	for _, tc := range []struct {
		width int
		want  string
	}{
		{0, full},
		{200, full},
		{len(full), full},
		{89, "   12s/60s  target 500/s  achieved 498/s  VUs busy 3/50  p99 1.25ms  errors 0  dropped 0"},
		{79, "   12s/60s  target 500/s  achieved 498/s  p99 1.25ms  errors 0  dropped 0"},
		{60, "   12s/60s  target 500/s  achieved 498/s  p99 1.25ms"},
		{40, "   12s/60s  target 500/s  achieved 498/s"},
		{12, "   12s/60s"},
		{5, "   12"},
	} {
		got := fitLine(append([]progressField(nil), fields...), tc.width)
		if got != tc.want {
			t.Errorf("width %d:\n got %q\nwant %q", tc.width, got, tc.want)
		}
		if tc.width > 0 && utf8.RuneCountInString(got) > tc.width {
			t.Errorf("width %d: %d columns", tc.width, utf8.RuneCountInString(got))
		}
		if strings.HasSuffix(got, " ") {
			t.Errorf("width %d: trailing space in %q", tc.width, got)
		}
	}
}
