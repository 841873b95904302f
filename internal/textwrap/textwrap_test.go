package textwrap

import (
	"reflect"
	"testing"
)

// Rows worked out by hand: each at most width runes, cut at the last space
// that keeps it so, continued under indent.
func TestLine(t *testing.T) {
	for _, tc := range []struct {
		name          string
		line          string
		width, indent int
		want          []string
	}{
		{"fits", "fault: thaw at 6.0s", 20, 2, []string{"fault: thaw at 6.0s"}},
		{"no width", "a b c", 0, 2, []string{"a b c"}},
		// 41 runes into 22: the space after "4.0s" (the 22nd rune) is the
		// last that keeps the row within 22.
		{"between fields", "fault: freeze at 4.0s (cgroup-v1-freezer)", 22, 2,
			[]string{"fault: freeze at 4.0s", "  (cgroup-v1-freezer)"}},
		// "max=14.12ms" is one field: it moves down whole.
		{"a number stays whole", "  http_req_duration  avg=1.20ms max=14.12ms", 32, 4,
			[]string{"  http_req_duration  avg=1.20ms", "    max=14.12ms"}},
		// µs counts as one column.
		{"runes, not bytes", "p50=452µs p95=1.57ms", 10, 0, []string{"p50=452µs", "p95=1.57ms"}},
		// A word longer than the row is cut, not let overflow.
		{"one long word", "/sys/fs/cgroup/freezer", 10, 0, []string{"/sys/fs/cg", "roup/freez", "er"}},
	} {
		if got := Line(tc.line, tc.width, tc.indent); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: Line(%q, %d, %d) = %q, want %q", tc.name, tc.line, tc.width, tc.indent, got, tc.want)
		}
	}
}
