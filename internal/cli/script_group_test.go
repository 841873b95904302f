package cli

import (
	"strings"
	"testing"
)

// Each group's durations are k6's group_duration, a time Trend tagged with
// the group's path: summed through the recorder, shown in the summary and
// judged by thresholds. A 50 ms sleep bounds the login group from below.
func TestScriptGroupDuration(t *testing.T) {
	script := writeJS(t, `import { group, sleep } from 'k6';
export const options = { vus: 2, iterations: 4, thresholds: {
  'group_duration{group:::login}': ['min>=45', 'p(95)<60000'],
  'group_duration{group:::outer::inner}': ['max<0'],
} };
export default function () {
  group('login', () => { sleep(0.05); });
  group('outer', () => { group('inner', () => {}); });
}
`)
	code, out, stderr := runKnee(t, "run", script, "--out", t.TempDir(), "--quiet")
	if code != ExitThresholds {
		t.Fatalf("exit %d; want %d (max<0 cannot hold)\n%s\n%s", code, ExitThresholds, out, stderr)
	}
	for _, want := range []string{
		"group_duration{group:::login} count=4 ", "group_duration{group:::outer} count=4 ", "group_duration{group:::outer::inner} count=4 ",
		"PASS  group_duration{group:::login}: min>=45", "PASS  group_duration{group:::login}: p(95)<60000",
		"FAIL  group_duration{group:::outer::inner}: max<0",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s\n%s", want, out, stderr)
		}
	}
}
