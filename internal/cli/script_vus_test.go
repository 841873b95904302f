package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// vus and vus_max in the k6 block and k6.json, sampled each second as k6
// samples them. By hand: ramping-vus from 0 to 4 over 2 s (the VUs start
// at 0.5, 1, 1.5 and 2 s), then 4 for 2 s, each iteration 0.7 s of think
// time: samples at 1 s (2 VUs active), 2 s (3 or 4: the fourth starts
// then), 3 s (4, mid-hold) and 4 s; the load ends when the last iteration
// in flight at 4 s ends, at about 4.5 s (the VU of 1 s started its fifth
// at 3.8 s), half a second after the 4 s sample and before a 5 s one.
// (With iterations of 0.5 s every VU's would end on the span's end, and
// whether the last sample came first would be a race.) k6 initialises the
// plan's peak, 4, before the start, so vus_max is 4 at every sample.
func TestScriptVUsRamping(t *testing.T) {
	script := writeJS(t, `import { sleep } from 'k6';
export const options = { stages: [{ duration: '2s', target: 4 }, { duration: '2s', target: 4 }],
  thresholds: { vus_max: ['value==4'] } };
export default function () { sleep(0.7); }
`)
	runs := filepath.Join(t.TempDir(), "runs")
	code, out, stderr := runKnee(t, "run", script, "--out", runs, "--quiet")
	if code != 0 {
		t.Fatalf("exit %d; want 0\n%s\n%s", code, out, stderr)
	}
	ms := k6Stats(t, runs)
	if v := ms["vus"]; v.Max != 4 || v.Count != 4 || v.Kind != "gauge" {
		t.Errorf("vus %+v; want a gauge of 4 samples, max 4", v)
	}
	if v := ms["vus_max"]; v.Value != 4 || v.Min != 4 || v.Max != 4 {
		t.Errorf("vus_max %+v; want 4 at every sample", v)
	}
	if !strings.Contains(out, "  vus_max                          4 min=4 max=4\n") || !strings.Contains(out, "PASS  vus_max: value==4") {
		t.Errorf("the k6 block or the threshold lacks vus_max:\n%s", out)
	}
}
