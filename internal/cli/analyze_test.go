package cli

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const k6Dir = "../../../shared/testdata/k6/"

// knee analyze of k6's own output: the export has the summary fields of
// knee run plus the windows and the signals; the request count is the one
// k6's summary.json gives (201).
func TestAnalyzeK6Export(t *testing.T) {
	for _, file := range []string{"default-timeformat.csv", "results.json", "rfc3339.csv.gz"} {
		if _, err := os.Stat(k6Dir + file); errors.Is(err, os.ErrNotExist) {
			t.Skipf("SKIP: interop file %s is missing: ../shared is not beside this checkout", k6Dir+file)
		}
		export := filepath.Join(t.TempDir(), "a.json")
		code, out, stderr := runKnee(t, "analyze", k6Dir+file, "--summary-export", export)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", file, code, stderr)
		}
		if !strings.Contains(out, "p99 per 10s: [") {
			t.Errorf("%s: no windows line in\n%s", file, out)
		}
		var got map[string]any
		b, _ := os.ReadFile(export)
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		for _, key := range []string{"requests", "rate", "dropped_iterations", "errors", "latency_ms", "slower_than_1s", "windows", "window_p99_mean_ms", "co_signals"} {
			if _, ok := got[key]; !ok {
				t.Errorf("%s: export lacks %q", file, key)
			}
		}
		if file != "rfc3339.csv.gz" && got["requests"] != float64(201) { // the gzip file is another run
			t.Errorf("%s: requests %v, want 201 as k6's summary.json says", file, got["requests"])
		}
	}
}

// --think on closed-model data asks for the correction, shown beside the raw numbers.
func TestAnalyzeThinkCorrects(t *testing.T) {
	dir := t.TempDir()
	// 20 latencies of 1 ms and one of 1 s from a closed loop with 99 ms think:
	// expected interval = median 1 ms + 99 ms = 100 ms, so the 1 s value adds
	// 900, 800, ..., 100 ms: 9 synthetic values, 30 in all.
	list := strings.Repeat("1\n", 20) + "1000\n"
	path := filepath.Join(dir, "closed.txt")
	os.WriteFile(path, []byte(list), 0o644)
	export := filepath.Join(dir, "a.json")
	code, out, stderr := runKnee(t, "analyze", path, "--unit", "ms", "--think", "99ms", "--summary-export", export)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(out, "corrected") {
		t.Errorf("no correction shown:\n%s", out)
	}
	var got struct {
		Requests  int64 `json:"requests"`
		Corrected struct {
			Requests int64 `json:"requests"`
		} `json:"corrected"`
	}
	b, _ := os.ReadFile(export)
	json.Unmarshal(b, &got)
	if got.Requests != 21 || got.Corrected.Requests != 30 {
		t.Errorf("raw %d corrected %d; want 21 and 30", got.Requests, got.Corrected.Requests)
	}
}
