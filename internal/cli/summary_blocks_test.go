package cli

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// knee analyze of a latency list without timestamps says there is no rate
// and no duration instead of inventing "5000 in 1.0 s = 5000.0/s".
func TestAnalyzeListWithoutTimestamps(t *testing.T) {
	var b strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&b, "%d.5\n", i%10)
	}
	path := filepath.Join(t.TempDir(), "values.txt")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := runKnee(t, "analyze", path)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	if !strings.Contains(out, "requests            5000 (no timestamps: no rate, no duration)") {
		t.Errorf("the summary does not say the list has no rate and no duration:\n%s", out)
	}
	if strings.Contains(out, "5000.0/s") || strings.Contains(out, "in 1.0 s") {
		t.Errorf("a rate or duration was invented:\n%s", out)
	}
}

// The README's two-scenario file (one open, one closed), shrunk to seconds:
// each scenario gets its own block, the open one's rate against its own
// target, the closed one with none.
func TestRunTwoScenarioBlocks(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	t.Cleanup(srv.Close)
	file := filepath.Join(t.TempDir(), "two.yaml")
	yaml := fmt.Sprintf(`scenarios:
  open:
    executor: constant-arrival-rate
    rate: 40
    timeUnit: 1s
    duration: 2s
    preAllocatedVUs: 10
    maxVUs: 50
    requests: [{name: GET /a, url: '%[1]s/a'}]
  closed: {executor: constant-vus, vus: 2, think: 100ms, duration: 2s,
           requests: [{url: '%[1]s/b'}]}
`, srv.URL)
	if err := os.WriteFile(file, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := runKnee(t, "run", file, "--out", t.TempDir(), "--quiet")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	for _, want := range []string{
		"Mixed model · 2 scenarios",
		"  all scenarios       ",
		"scenario open · Open model · constant-arrival-rate",
		// 40/s for 2 s: 80 iterations of one request, against its own 40/s.
		"  requests            80 in 2.0 s = 40.0/s (target 40.0/s, 100.0 %)",
		"scenario closed · Closed model · constant-vus",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "target"); n != 1 {
		t.Errorf("%d targets; want 1, the open scenario's own:\n%s", n, out)
	}
}
