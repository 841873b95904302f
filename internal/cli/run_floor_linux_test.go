package cli

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/knee-dev/knee/rundir"
)

// A run whose starts are far apart (2/s for 3 s: starts at 0, 0.5, ...,
// 2.5 s) is judged against the floor of waits of its own gap, measured
// beside it: the summary names those waits, run.json keeps them, knee
// analyze of the stored run prints the same floor and the same verdict,
// and a generator-limited warning, if the shared machine gives one, quotes
// that floor and not the one of 1 ms waits before the run. The probe wakes
// half-way between starts, at 0.25, 0.75, ..., 2.75 s: the first wait (from
// the start, half a gap) is not counted, so at most 5 are.
func TestRunFloorBesideSlowRun(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok")) }))
	defer srv.Close()
	out := t.TempDir()
	code, stdout, stderr := runKnee(t, "run", "--rate", "2", "--duration", "3s", "--url", srv.URL, "--out", out, "--quiet")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	line := regexp.MustCompile(`machine's floor .* \((\d+) timed waits of 500 ms beside the run\)`).FindString(stdout)
	m := regexp.MustCompile(`\((\d+) timed`).FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("no floor line of 500 ms waits beside the run in\n%s", stdout)
	}
	waits, _ := strconv.Atoi(m[1])
	if waits < 1 || waits > 5 {
		t.Errorf("%d waits of 500 ms in 3 s: want 1 to 5", waits)
	}
	dirs, _ := filepath.Glob(filepath.Join(out, "*", "run.json"))
	if len(dirs) != 1 {
		t.Fatalf("run directories: %v, want one", dirs)
	}
	b, err := os.ReadFile(dirs[0])
	if err != nil {
		t.Fatal(err)
	}
	var meta rundir.Meta
	if err := json.Unmarshal(b, &meta); err != nil {
		t.Fatal(err)
	}
	if len(meta.Scenarios) != 1 || meta.Scenarios[0].WakeFloor == nil {
		t.Fatalf("run.json's scenarios %+v: want one with its floor", meta.Scenarios)
	}
	if f := meta.Scenarios[0].WakeFloor; !f.Beside || f.Period != 500*time.Millisecond || f.Waits != waits {
		t.Errorf("run.json's floor %+v: want %d waits of 500 ms beside the run", f, waits)
	}
	for _, w := range limited(stdout) {
		if !strings.Contains(w, "timed waits of 500 ms beside the run") {
			t.Errorf("the verdict %q is not judged against the floor beside the run", w)
		}
	}
	code, again, stderr := runKnee(t, "analyze", filepath.Dir(dirs[0]))
	if code != ExitOK {
		t.Fatalf("knee analyze: exit %d: %s", code, stderr)
	}
	if !strings.Contains(again, line) || strings.Join(limited(again), "\n") != strings.Join(limited(stdout), "\n") {
		t.Errorf("knee analyze of the stored run says\n%s\nwhere the run said\n%s", again, stdout)
	}
}

// limited are the send-lag verdicts among the WARNING lines of out.
func limited(out string) []string {
	var w []string
	for _, l := range strings.Split(out, "\n") {
		if _, rest, ok := strings.Cut(l, "WARNING: generator-limited: send-lag"); ok {
			w = append(w, rest)
		}
	}
	return w
}
