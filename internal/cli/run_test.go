package cli

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// knee run takes the scenario path as the shell gives it: a file with a
// mistake read through ./ or ../ is reported at its line (exit 2), never
// "invalid argument", and - reads the scenario from standard input.
func TestRunScenarioPathForms(t *testing.T) {
	root := t.TempDir()
	sub := filepath.Join(root, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	bad := "scenarios:\n  a:\n    executor: constant-vus\n    vus: -1\n    duration: 1s\n    requests: [{url: 'http://127.0.0.1:1/'}]\n"
	for _, dir := range []string{root, sub} {
		if err := os.WriteFile(filepath.Join(dir, "bad.yaml"), []byte(bad), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(sub)
	for _, tc := range []struct {
		path, want string
	}{
		{"./bad.yaml", "./bad.yaml:4"},
		{"../bad.yaml", "../bad.yaml:4"},
		{filepath.Join(root, "bad.yaml"), filepath.Join(root, "bad.yaml") + ":4"},
		{"-", "<stdin>:4"},
	} {
		var out, errb strings.Builder
		code := Main(Env{Args: []string{"run", tc.path}, Stdin: strings.NewReader(bad), Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }})
		if code != ExitUsage || !strings.Contains(errb.String(), tc.want) || strings.Contains(errb.String(), "invalid argument") {
			t.Errorf("knee run %s: exit %d, stderr %q; want exit 2 naming %q", tc.path, code, errb.String(), tc.want)
		}
	}
}

// A disk that fills mid-run is a failure of the run, not bad input: exit 1,
// the summary of everything measured (all 600 requests, from memory), the
// files as flushed before the failure, and stderr says what failed.
func TestRunDiskFullMidRun(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tiny")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("SKIPPED, disk-full test not run: cannot mount a 64 KiB tmpfs (needs root and mount permission): %v: %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	// Leave 16 KiB: room for run.json and the first intervals (about 8 KiB
	// a second at 200/s and 100 ms intervals), not for 3 s of them.
	if err := os.WriteFile(filepath.Join(dir, "filler"), make([]byte, 48<<10), 0o644); err != nil {
		t.Fatalf("filling the tmpfs: %v", err)
	}
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Write([]byte("ok"))
	}))
	defer srv.Close()
	var out, errb strings.Builder
	code := Main(Env{Args: []string{"run", "--rate", "200", "--duration", "3s", "--interval", "100ms", "--url", srv.URL,
		"--out", dir, "--quiet"}, Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }})
	t.Logf("stdout:\n%s\nstderr:\n%s", out.String(), errb.String())
	if code != ExitFailure {
		t.Errorf("exit %d, want 1 (the load ran; writing its results failed)", code)
	}
	// 200/s for 3 s: iterations at 0, 5 ms, ..., 2995 ms.
	if !strings.Contains(out.String(), "requests            600 in") || hits.Load() != 600 {
		t.Errorf("summary does not say the 600 requests sent (server saw %d)", hits.Load())
	}
	if !strings.Contains(errb.String(), "no space left on device") || !strings.Contains(errb.String(), "writing the run directory failed") {
		t.Errorf("stderr does not say what failed")
	}
	runs, _ := filepath.Glob(filepath.Join(dir, "*", "latency.hlog"))
	if len(runs) != 1 {
		t.Fatalf("run directory: %v, want one with latency.hlog kept", runs)
	}
	hlog, err := os.ReadFile(runs[0])
	if err != nil {
		t.Fatal(err)
	}
	// An interval line: Tag=metric|scenario|name,start,length,max,histogram.
	lines := 0
	for _, l := range strings.Split(string(hlog), "\n") {
		if strings.HasPrefix(l, "Tag=latency|") && strings.Count(l, ",") == 4 {
			lines++
		}
	}
	if lines == 0 {
		t.Errorf("latency.hlog kept no interval (%d bytes)", len(hlog))
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(runs[0]), "run.json")); err != nil {
		t.Errorf("run.json not kept: %v", err)
	}
}

// Dropped iterations are said first, before the summary: how many of how
// many, why (every VU busy, from which second) and the flag that sends them.
// 2/s for 3 s with one VU and answers 750 ms late: iterations due at 0, 0.5,
// 1, 1.5, 2, 2.5 s; the VU is busy over [0, 0.75), [1, 1.75), [2, 2.75), so
// those due at 0.5, 1.5 and 2.5 s are dropped, the first at 0.5 s; one VU
// plus 3 dropped = 4 would have sent all.
func TestRunSaysDropsFirst(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(750 * time.Millisecond)
	}))
	defer srv.Close()
	var out, errb strings.Builder
	code := Main(Env{Args: []string{"run", "--rate", "2", "--duration", "3s", "--pre-allocated-vus", "1", "--max-vus", "1",
		"--url", srv.URL, "--out", t.TempDir(), "--quiet"}, Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }})
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	first, _, _ := strings.Cut(out.String(), "\n")
	want := "DROPPED 3 of 6 iterations (scenario default): all 1 VUs (maxVUs) were busy from 0.5 s, " +
		"so these were never sent and no latency below includes them; to send them, set --max-vus 4"
	if first != want {
		t.Errorf("first line\n %q\nwant\n %q\n(stdout:\n%s)", first, want, out.String())
	}
}
