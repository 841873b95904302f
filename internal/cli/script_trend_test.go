package cli

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/knee-dev/knee/record"
	"github.com/knee-dev/knee/rundir"
	"github.com/knee-dev/knee/runner"
)

// A k6/metrics Trend goes through knee's recorder: its values land in
// latency.hlog under the trend's name, the k6 block gives k6's summary
// line of it (avg, min, med, max, p(90), p(95)), metrics.json has them, and a threshold on it is
// judged (a failing one exits 99). The iterations add 10, 20, ..., 100 and
// setup adds 100000: latency.hlog holds the test's 10 (knee's numbers),
// while the summary, metrics.json and the thresholds are k6's, setup's
// value included (k6 counts it). By k6's rule (sorted values, rank
// p*(n-1), interpolated) on the 11 values: count 11, avg 100550/11 =
// 9140.909..., min 10, med (rank 5) 60, p95 (rank 9.5) 100 + 0.5*99900 =
// 50050, p99 (rank 9.9) 100 + 0.9*99900 = 90010, max 100000.
func TestScriptTrendThroughRecorder(t *testing.T) {
	script := writeJS(t, `import { Trend } from 'k6/metrics';
const t = new Trend('step_ms', true);
const plain = new Trend('items');
export const options = { vus: 2, iterations: 10, thresholds: { step_ms: ['p(95)<=100', 'max>=100', 'avg<50'], items: ['min==3'] } };
export function setup() { t.add(100000); } // k6 counts it; knee's latency.hlog does not
export default function () {
  const exec = require('k6/execution');
  t.add(10 * (exec.scenario.iterationInTest + 1));
  plain.add(3);
}
`)
	dir := filepath.Join(t.TempDir(), "run")
	code, out, stderr := runKnee(t, "run", script, "--out", dir, "--quiet")
	if code != ExitThresholds {
		t.Fatalf("exit %d; want %d (avg 9140.9 is not < 50)\n%s\n%s", code, ExitThresholds, out, stderr)
	}
	for _, want := range []string{
		// k6's summary line: avg 9140.9 ms as 9.14s, max 100000 ms as 1m40s,
		// p(90) (rank 9) 100 ms, p(95) 50050 ms as 50.05s.
		"step_ms                          avg=9.14s min=10ms med=60ms max=1m40s p(90)=100ms p(95)=50.05s",
		"items                            avg=3 min=3 med=3 max=3 p(90)=3 p(95)=3",
		"FAIL  step_ms: p(95)<=100          measured 50050 ms", "PASS  step_ms: max>=100", "FAIL  step_ms: avg<50", "PASS  items: min==3",
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
	near := func(got, want float64) bool { return math.Abs(got-want) <= 1e-9*math.Abs(want) }
	if len(ms) != 2 || ms[1].Name != "step_ms" || ms[1].Count != 11 || !near(ms[1].Avg, 100550.0/11) || ms[1].Min != 10 || ms[1].Med != 60 ||
		!near(ms[1].P95, 50050) || !near(ms[1].P99, 90010) || ms[1].Max != 100000 {
		t.Errorf("metrics.json: %+v; want items, then step_ms count 11 avg 9140.909 min 10 med 60 p95 50050 p99 90010 max 100000", ms)
	}
}
