package cli

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func runKnee(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Main(Env{Args: args, Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }})
	return code, out.String(), errb.String()
}

// Bad input gets a message that names the flag or file and exit code 2.
func TestBadInputExitsTwo(t *testing.T) {
	dir := t.TempDir()
	badYAML := filepath.Join(dir, "bad.yaml")
	os.WriteFile(badYAML, []byte("scenarios:\n  a:\n    executor: constant-arrival-rate\n    rate: -5\n    duration: 10s\n    requests: [{url: 'http://127.0.0.1:1/'}]\n"), 0o644)
	for _, tc := range []struct {
		args []string
		want string // in stderr
	}{
		{[]string{"run", "--executor", "warp-speed", "--url", "http://127.0.0.1:1/", "--duration", "1s"}, "--executor"},
		{[]string{"run", "--rate", "0", "--duration", "1s", "--url", "http://127.0.0.1:1/"}, "--rate"},
		{[]string{"run", "--rate", "-3", "--duration", "1s", "--url", "http://127.0.0.1:1/"}, "--rate"},
		{[]string{"run", "--rate", "10", "--duration", "1s", "--url", "http://127.0.0.1:1/{isbn}"}, "isbn"},
		{[]string{"run", "--rate", "10", "--duration", "1s", "--url", "http://127.0.0.1:1/{"}, "--url"},
		{[]string{"run", "--stages", "30s:100,:200", "--url", "http://127.0.0.1:1/"}, "--stages"},
		{[]string{"run", "--no-such-flag"}, "unknown flag"},
		{[]string{"run", badYAML}, "bad.yaml:4"},
		{[]string{"run", filepath.Join(dir, "missing.yaml")}, "missing.yaml"},
		{[]string{"run", "--rate", "10", "--duration", "1s", "--url", "http://127.0.0.1:1/", "--threshold", "p(95)<<3"}, "p(95)<<3"},
		{[]string{"run", "--rate", "10", "--duration", "1s", "--url", "http://127.0.0.1:1/", "--fault", "freeze@soon:5s"}, "--fault"},
		{[]string{"run", "--rate", "10", "--duration", "1s", "--url", "http://127.0.0.1:1/", "--target-pid", "999999999"}, "--target-pid"},
		{[]string{"analyze", filepath.Join(dir, "nothing.csv")}, "nothing.csv"},
		{[]string{"tail", "--p", "1.5"}, "--p"},
		{[]string{"lab", "co", "--duration", "10s", "--freeze-at", "8s", "--freeze-for", "5s"}, "freeze"},
		{[]string{"nonsense"}, "unknown command"},
		{[]string{"lab", "serve", "--cpus", "0"}, "--cpus"},
		{[]string{"lab", "co", "--cpus", "1000"}, "--cpus"},
		{[]string{"run", "--rate", "10", "--duration", "1s", "--url", "http://127.0.0.1:1/", "--target-cgroup", dir}, "not a cgroup"},
		{[]string{"report", filepath.Join(dir, "no-such-run")}, "no-such-run"},
		{[]string{"compare", dir}, "--vs"},
	} {
		code, _, stderr := runKnee(t, tc.args...)
		if code != ExitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("knee %s: exit %d, stderr %q; want exit 2 naming %q", strings.Join(tc.args, " "), code, stderr, tc.want)
		}
	}
}

// knee tail prints the share (analyze.PageTail) as a percentage.
func TestPageTail(t *testing.T) {
	code, out, _ := runKnee(t, "tail", "--p", "0.01", "--calls", "20")
	if code != 0 || !strings.Contains(out, "18.2 %") {
		t.Errorf("knee tail: exit %d, %q", code, out)
	}
}

// An import that cannot write its run directory (the file size limit of
// `ulimit -f`, which fails a write as a full disk does) failed: exit 1; its
// input was fine, so it is not bad input (exit 2). The import runs in a
// child process, which alone has the limit; a real full disk is tried in
// scripts/fault-inputs.sh.
func TestImportWriteFailureExitsOne(t *testing.T) {
	if args := os.Getenv("KNEE_CLI_CHILD_ARGS"); args != "" {
		code, _, stderr := runKnee(t, strings.Split(args, "\n")...)
		os.Stderr.WriteString(stderr)
		os.Exit(code)
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("SKIP: no bash to run the child under ulimit -f")
	}
	dir := t.TempDir()
	var in strings.Builder
	in.WriteString("metric_name,timestamp,metric_value,status,name\n")
	for i := range 2000 { // 2,000 intervals of 5 names: far more than 8 KiB of hlog
		fmt.Fprintf(&in, "http_req_duration,%d,%d,200,n%d\n", 1700000000+i, 1+i%97, i%5)
	}
	csv := filepath.Join(dir, "r.csv")
	if err := os.WriteFile(csv, []byte(in.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bash, "-c", `ulimit -f 8 && exec "$0" -test.run '^TestImportWriteFailureExitsOne$'`, os.Args[0])
	cmd.Env = append(os.Environ(), "KNEE_CLI_CHILD_ARGS="+strings.Join([]string{"import", csv, "--out", filepath.Join(dir, "runs")}, "\n"))
	out, _ := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); code != ExitFailure || !strings.Contains(string(out), "writing the run directory failed") {
		t.Errorf("exit %d, output %q; want 1 and the write failure", code, out)
	}
}
