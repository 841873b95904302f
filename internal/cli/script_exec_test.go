package cli

import (
	"strings"
	"testing"
)

// k6/execution's scenario.startTime, instance.vusActive and
// instance.currentTestRunDuration read right inside iterations, and
// exec.test.abort() stops an hour-long test at once with k6's exit 108.
func TestScriptExecutionExtrasAndAbort(t *testing.T) {
	script := writeJS(t, `import exec from 'k6/execution';
import { check, sleep } from 'k6';
export const options = { vus: 1, duration: '1h' };
let last = -1;
export default function () {
  const now = Date.now();
  const st = exec.scenario.startTime;
  const d = exec.instance.currentTestRunDuration;
  check(null, {
    'startTime is the test start': () => st <= now && st > now - 60000,
    'one VU active': () => exec.instance.vusActive === 1,
    'run duration grows': () => d > last && d < 60000,
  });
  last = d;
  sleep(0.01);
  if (exec.scenario.iterationInTest === 4) exec.test.abort('enough');
}
`)
	code, out, stderr := runKnee(t, "run", script, "--out", t.TempDir(), "--quiet")
	if code != ExitScriptAborted {
		t.Fatalf("exit %d; want %d (k6's code for test.abort)\n%s\n%s", code, ExitScriptAborted, out, stderr)
	}
	for _, want := range []string{"5 passed, 0 failed", "checks: 100.00% of 15 passed"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s\n%s", want, out, stderr)
		}
	}
	if !strings.Contains(out+stderr, "test aborted: enough") {
		t.Errorf("the abort's reason is not shown:\n%s\n%s", out, stderr)
	}
}

// Iterations the run's end cuts short count in
// instance.iterationsInterrupted, not in iterationsCompleted.
func TestScriptIterationsInterrupted(t *testing.T) {
	script := writeJS(t, `import exec from 'k6/execution';
import { sleep } from 'k6';
export const options = { scenarios: { s: { executor: 'constant-vus', vus: 2, duration: '300ms', gracefulStop: '10ms' } } };
export default function () { sleep(30); }
export function teardown() {
  console.log('interrupted=' + exec.instance.iterationsInterrupted + ' completed=' + exec.instance.iterationsCompleted);
}
`)
	code, out, stderr := runKnee(t, "run", script, "--out", t.TempDir(), "--quiet")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	if !strings.Contains(out+stderr, "interrupted=2 completed=0") {
		t.Errorf("want 2 interrupted and 0 completed iterations (2 VUs sleeping 30s, stopped at 300ms):\n%s\n%s", out, stderr)
	}
}
