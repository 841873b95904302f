package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// vus and vus_max in the k6 block and k6.json, sampled each second as k6
// samples them. By hand: ramping-vus from 0 to 4 over 2 s, then 4 for
// 1 s, each iteration 0.5 s of think time: at 1 s 2 VUs are active, at
// 2 s 4, at 3 s 4 (the last iterations end by 3.5 s, before the 4 s
// sample); k6 initialises the plan's peak, 4, before the start, so
// vus_max is 4 at every sample.
func TestScriptVUsRamping(t *testing.T) {
	script := writeJS(t, `import { sleep } from 'k6';
export const options = { stages: [{ duration: '2s', target: 4 }, { duration: '1s', target: 4 }],
  thresholds: { vus_max: ['value==4'] } };
export default function () { sleep(0.5); }
`)
	runs := filepath.Join(t.TempDir(), "runs")
	code, out, stderr := runKnee(t, "run", script, "--out", runs, "--quiet")
	if code != 0 {
		t.Fatalf("exit %d; want 0\n%s\n%s", code, out, stderr)
	}
	ms := k6Stats(t, runs)
	if v := ms["vus"]; v.Max != 4 || v.Count != 3 || v.Kind != "gauge" {
		t.Errorf("vus %+v; want a gauge of 3 samples, max 4", v)
	}
	if v := ms["vus_max"]; v.Value != 4 || v.Min != 4 || v.Max != 4 {
		t.Errorf("vus_max %+v; want 4 at every sample", v)
	}
	if !strings.Contains(out, "  vus_max                          4 min=4 max=4\n") || !strings.Contains(out, "PASS  vus_max: value==4") {
		t.Errorf("the k6 block or the threshold lacks vus_max:\n%s", out)
	}
}
