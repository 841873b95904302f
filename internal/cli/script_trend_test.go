package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/knee-dev/knee/record"
	"github.com/knee-dev/knee/rundir"
	"github.com/knee-dev/knee/runner"
)

// A k6/metrics Trend goes through knee's recorder: its values land in
// latency.hlog under the trend's name, the summary gives count, avg, min,
// p50, p95, p99 and max, metrics.json has them, and a threshold on it is
// judged (a failing one exits 99). The values are 10, 20, ..., 100 (one per
// iteration), so by hand: count 10, avg 55, min 10, p50 50, p95 and p99
// and max 100.
func TestScriptTrendThroughRecorder(t *testing.T) {
	script := writeJS(t, `import { Trend } from 'k6/metrics';
const t = new Trend('step_ms', true);
const plain = new Trend('items');
export const options = { vus: 2, iterations: 10, thresholds: { step_ms: ['p(95)<=100', 'max>=100', 'avg<50'], items: ['min==3'] } };
export function setup() { t.add(100000); } // setup is not part of the test's numbers
export default function () {
  const exec = require('k6/execution');
  t.add(10 * (exec.scenario.iterationInTest + 1));
  plain.add(3);
}
`)
	dir := filepath.Join(t.TempDir(), "run")
	code, out, stderr := runKnee(t, "run", script, "--out", dir, "--quiet")
	if code != ExitThresholds {
		t.Fatalf("exit %d; want %d (avg 55 is not < 50)\n%s\n%s", code, ExitThresholds, out, stderr)
	}
	for _, want := range []string{
		"step_ms              count=10 avg=55ms min=10ms p50=50ms p95=100ms p99=100ms max=100ms",
		"items                count=10 avg=3 min=3 p50=3 p95=3 p99=3 max=3",
		"PASS  step_ms: p(95)<=100", "PASS  step_ms: max>=100", "FAIL  step_ms: avg<50", "PASS  items: min==3",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	found, _ := filepath.Glob(filepath.Join(dir, "*", "run.json"))
	if len(found) != 1 {
		t.Fatalf("want one run directory in %s, found %v", dir, found)
	}
	dir = filepath.Dir(found[0])
	r, err := rundir.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	h := r.Merged(func(k record.Key) bool { return k.Metric == record.Trend && k.Name == "step_ms" }, 0, 0)
	if h.Count() != 10 {
		t.Errorf("latency.hlog holds %d step_ms values; want 10", h.Count())
	}
	if got := h.Max(); got < 99900000 || got > 100100000 { // 100 ms, within the histogram's 3 digits
		t.Errorf("latency.hlog's step_ms max %v; want 100ms (setup's 100000 must not be recorded)", got)
	}
	if n := r.Merged(func(k record.Key) bool { return k.Metric == record.Latency }, 0, 0).Count(); n != 0 {
		t.Errorf("%d latency values from a script without requests; trend values are not requests", n)
	}
	b, err := os.ReadFile(filepath.Join(dir, runner.MetricsFile))
	if err != nil {
		t.Fatal(err)
	}
	var ms []struct {
		Name                         string
		Count                        int64
		Avg, Min, Med, P95, P99, Max float64
	}
	if err := json.Unmarshal(b, &ms); err != nil {
		t.Fatal(err)
	}
	if len(ms) != 2 || ms[1].Name != "step_ms" || ms[1].Count != 10 || ms[1].Avg != 55 || ms[1].Min != 10 || ms[1].Med != 50 || ms[1].P95 != 100 || ms[1].Max != 100 {
		t.Errorf("metrics.json: %+v; want items, then step_ms count 10 avg 55 min 10 med 50 p95 100 max 100", ms)
	}
}
