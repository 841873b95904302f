package cli

import (
	"strings"
	"testing"
)

// A group named anew each iteration stays bounded: the first 99 group
// paths are kept apart (with "(other)", 100 paths: up to two Trend series
// each, the 200 Trend names kept apart), the rest are recorded as the group
// "(other)", for their durations and their checks alike, so the summary
// prints 100 group lines, not one per iteration. 250 iterations of one VU:
// groups ::g1 .. ::g99 once each, "(other)" the last 151.
func TestScriptGroupsFoldPastTheCap(t *testing.T) {
	script := writeJS(t, `import { group, check } from 'k6';
export const options = { vus: 1, iterations: 250 };
let n = 0;
export default function () {
  n++;
  group('g' + n, () => { check(1, { 'ok': () => true }); });
}
`)
	code, out, stderr := runKnee(t, "run", script, "--out", t.TempDir(), "--quiet")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	var groups, checks int
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "group_duration{group:") {
			groups++
		}
		if strings.Contains(line, ":: ok") {
			checks++
		}
	}
	if groups != 100 || checks != 100 {
		t.Errorf("%d group_duration lines and %d check lines; want 100 each (99 groups and (other))\n%s", groups, checks, out)
	}
	for _, want := range []string{"group_duration{group:::g99} count=1 ", "group_duration{group:(other)} count=151 ", "(other) :: ok                            151 passed"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if strings.Contains(out, "::g100") || strings.Contains(out, "recorded as") {
		t.Errorf("group g100, past the cap, has a line of its own, or a series was folded:\n%s", out)
	}
}
