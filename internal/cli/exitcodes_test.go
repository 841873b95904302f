package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// childArgsEnv turns the re-executed test binary into `knee ARGS...` (a JSON
// list), with the process's own signals, stdout and stderr: what a user runs.
const childArgsEnv = "KNEE_EXIT_TEST_ARGS"

// TestKneeChildProcess is not a test: re-executed with childArgsEnv set, it
// is knee, and exits with knee's exit code.
func TestKneeChildProcess(t *testing.T) {
	raw := os.Getenv(childArgsEnv)
	if raw == "" {
		t.Skip("the exit-code tests' knee process; runs only when re-executed by them")
	}
	var args []string
	if err := json.Unmarshal([]byte(raw), &args); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	env := OSEnv()
	env.Args = args
	os.Exit(Main(env))
}

// startKnee starts knee with args in its own process, so that a signal
// reaches it as it reaches a user's knee; stdout and stderr go to out.
func startKnee(t *testing.T, out *bytes.Buffer, args ...string) *exec.Cmd {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestKneeChildProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), childArgsEnv+"="+string(raw))
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	return cmd
}

// waitForInterval waits until a run under base has written its first
// interval (one line of counters.jsonl): the load is running.
func waitForInterval(t *testing.T, base string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		m, _ := filepath.Glob(filepath.Join(base, "*", "counters.jsonl"))
		for _, f := range m {
			if b, err := os.ReadFile(f); err == nil && bytes.Count(b, []byte("\n")) > 0 {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("no interval written under %s within 60 s", base)
}

// exitCode waits for cmd and returns its exit code.
func exitCode(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	err := cmd.Wait()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode()
}

// refusedURL is a loopback port with nothing listening: every connection
// is refused.
func refusedURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr + "/"
}

// hangUpURL is a listener that accepts each connection and closes it
// without a byte: connected, never answered.
func hangUpURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	return "http://" + ln.Addr().String() + "/"
}

// A run in which no request got a response exits 1 and says so first, with
// the first error; one whose every request got an error status says so too,
// but it measured the target, so only a threshold fails it.
func TestExitNoResponseAtAll(t *testing.T) {
	fail500 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
	}))
	t.Cleanup(fail500.Close)
	for _, tc := range []struct {
		name     string
		url      string
		code     int
		headline string // the summary's first line starts with it
		stderr   string
		firstErr string // in the headline
	}{
		// rate 20/s for 1 s: 20 iterations, one request each.
		{"refused", refusedURL(t), ExitFailure, "NO RESPONSE AT ALL: 20 of 20 requests failed; the first: ",
			"no response at all: 20 of 20 requests failed: ", "refused"},
		{"closed by the listener", hangUpURL(t), ExitFailure, "NO RESPONSE AT ALL: 20 of 20 requests failed; the first: ",
			"no response at all: 20 of 20 requests failed: ", ""},
		{"every status 500", fail500.URL + "/", ExitOK, "EVERY REQUEST FAILED: 20 of 20 requests failed; the first: HTTP status 500",
			"", "HTTP status 500"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, stderr := runKnee(t, "run", "--rate", "20", "--duration", "1s", "--url", tc.url,
				"--out", t.TempDir(), "--quiet")
			if code != tc.code {
				t.Errorf("exit %d, want %d\n%s\n%s", code, tc.code, out, stderr)
			}
			first := summaryFirstLine(out)
			if !strings.HasPrefix(first, tc.headline) || !strings.Contains(first, tc.firstErr) {
				t.Errorf("summary's first line %q; want it to start with %q and name %q", first, tc.headline, tc.firstErr)
			}
			if tc.stderr != "" && !strings.Contains(stderr, tc.stderr) {
				t.Errorf("stderr %q; want %q", stderr, tc.stderr)
			}
		})
	}
}

// summaryFirstLine is the line after "run directory: ...".
func summaryFirstLine(out string) string {
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "run directory: ") && sc.Scan() {
			return sc.Text()
		}
	}
	return ""
}

// A run stopped by SIGINT or SIGTERM exits 105 (k6's ExternalAbort), also
// when the partial results fail a threshold, and keeps what it measured.
func TestExitInterruptedBySignal(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	t.Cleanup(srv.Close)
	for _, tc := range []struct {
		name  string
		sig   syscall.Signal
		extra []string
	}{
		{"SIGTERM", syscall.SIGTERM, nil},
		{"SIGINT", syscall.SIGINT, nil},
		{"SIGTERM with a failing threshold", syscall.SIGTERM, []string{"--threshold", "requests>1000000"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := t.TempDir()
			var out bytes.Buffer
			args := append([]string{"run", "--rate", "20", "--duration", "60s", "--url", srv.URL + "/",
				"--out", base, "--quiet"}, tc.extra...)
			cmd := startKnee(t, &out, args...)
			waitForInterval(t, base)
			if err := cmd.Process.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			if code := exitCode(t, cmd); code != ExitInterrupted {
				t.Errorf("exit %d, want %d\n%s", code, ExitInterrupted, out.String())
			}
			if !strings.Contains(out.String(), "INTERRUPTED") {
				t.Errorf("the summary does not say the run was interrupted:\n%s", out.String())
			}
		})
	}
}

// `knee lab serve` ends with Ctrl-C: that is its normal end, exit 0.
func TestExitServerEndsBySignal(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	var out bytes.Buffer
	cmd := startKnee(t, &out, "lab", "serve", "--addr", addr)
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("knee lab serve did not listen on %s: %v\n%s", addr, err, out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGINT)
	if code := exitCode(t, cmd); code != ExitOK {
		t.Errorf("knee lab serve stopped by SIGINT: exit %d, want 0\n%s", code, out.String())
	}
}

// The merge of a test one of whose parts was interrupted exits 105 and
// names the part; the merge of whole parts exits 0.
func TestMergeInterruptedPart(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	t.Cleanup(srv.Close)
	tmp := t.TempDir()
	part := func(i int) []string {
		return []string{"run", "--rate", "20", "--duration", "3s", "--url", srv.URL + "/", "--quiet",
			"--out", filepath.Join(tmp, fmt.Sprintf("part-%d", i)), "--test-id", "exit-test",
			"--execution-segment-sequence", "0,1/2,1", "--execution-segment-index", fmt.Sprint(i),
			"--runner-name", fmt.Sprintf("runner-%d", i)}
	}
	if code, out, stderr := runKnee(t, part(0)...); code != ExitOK {
		t.Fatalf("part 0: exit %d\n%s\n%s", code, out, stderr)
	}
	var out bytes.Buffer
	cmd := startKnee(t, &out, part(1)...)
	waitForInterval(t, filepath.Join(tmp, "part-1"))
	cmd.Process.Signal(syscall.SIGTERM)
	if code := exitCode(t, cmd); code != ExitInterrupted {
		t.Fatalf("part 1 stopped by SIGTERM: exit %d, want %d\n%s", code, ExitInterrupted, out.String())
	}
	code, stdout, stderr := runKnee(t, "merge", filepath.Join(tmp, "part-0"), filepath.Join(tmp, "part-1"),
		"--out", filepath.Join(tmp, "merged"))
	if code != ExitInterrupted || !strings.Contains(stderr, "part 1/2:1 (runner-1") || !strings.Contains(stderr, "was interrupted") {
		t.Errorf("merge with an interrupted part: exit %d, stderr %q; want %d naming part 1/2:1 (runner-1)",
			code, stderr, ExitInterrupted)
	}
	if !strings.Contains(stdout, "INTERRUPTED") {
		t.Errorf("the merge's summary does not say a part was interrupted:\n%s", stdout)
	}
}

// A script whose setup() throws exits 107, k6's ScriptException, before any
// load: not 2, since the input was read fine and the script itself failed.
// test.abort() in setup() is no exception in k6 but an interrupt
// (errext.InterruptError), whose exit code is 108, ScriptAborted.
func TestExitSetupThrows(t *testing.T) {
	for _, c := range []struct {
		name, setup, says string
		code              int
	}{
		{"throws", "throw new Error('no token for the test user');", "no token for the test user", ExitScriptException},
		{"fail()", "fail('no token for the test user');", "no token for the test user", ExitScriptException},
		{"test.abort()", "exec.test.abort('no test data');", "test aborted: no test data", ExitScriptAborted},
	} {
		t.Run(c.name, func(t *testing.T) {
			script := writeJS(t, `import exec from 'k6/execution';
import { fail } from 'k6';
export function setup() { `+c.setup+` }
export default function () {}
`)
			code, out, stderr := runKnee(t, "run", script, "--out", t.TempDir(), "--quiet")
			if code != c.code || !strings.Contains(stderr, "setup(): ") || !strings.Contains(stderr, c.says) {
				t.Errorf("exit %d, stderr %q; want %d naming setup() and %q\n%s", code, stderr, c.code, c.says, out)
			}
		})
	}
}

// A teardown() that throws ends k6's scheduler with its error before the
// load's own (internal/execution/scheduler.go:538-546), and k6's run keeps
// it over the thresholds' (internal/cmd/run.go:384): exit 107 after the
// load, whatever else the run came to.
func TestExitTeardownThrows(t *testing.T) {
	for _, c := range []struct {
		name, options, iteration, teardown string
		code                               int
	}{
		{"throws", "", "", "throw new Error('cleanup refused')", ExitScriptException},
		{"fail()", "", "", "fail('cleanup refused')", ExitScriptException},
		{"over a failed threshold", "thresholds: { iterations: ['count>5'] }", "", "throw new Error('cleanup refused')", ExitScriptException},
		{"over test.abort()", "", "exec.test.abort('stop')", "throw new Error('cleanup refused')", ExitScriptException},
		{"over test.fail()", "", "exec.test.fail('bad')", "throw new Error('cleanup refused')", ExitScriptException},
		{"a failed threshold alone", "thresholds: { iterations: ['count>5'] }", "", "", ExitThresholds},
		// test.abort() is k6's interrupt (errext.InterruptError), exit 108, in teardown() too
		{"test.abort() in teardown", "", "", "exec.test.abort('stop')", ExitScriptAborted},
	} {
		t.Run(c.name, func(t *testing.T) {
			script := writeJS(t, `import exec from 'k6/execution';
import { fail } from 'k6';
export const options = { iterations: 1, `+c.options+` };
export default function () { `+c.iteration+` }
export function teardown() { `+c.teardown+` }
`)
			code, out, stderr := runKnee(t, "run", script, "--out", t.TempDir(), "--quiet")
			if code != c.code {
				t.Fatalf("exit %d; want %d\n%s\n%s", code, c.code, out, stderr)
			}
			if c.code == ExitScriptException && !strings.Contains(stderr, "teardown(): ") {
				t.Errorf("stderr %q does not name teardown()", stderr)
			}
		})
	}
}

// A k6 script whose requests all fail still measures k6's http_req_failed
// (every request counts, lib/netext/httpext/transport.go): a threshold on
// it that fails exits 99 as in k6, before knee's own exit 1 for a run
// without a response (k6 exits 0 then).
func TestScriptNoResponseThreshold(t *testing.T) {
	for _, tc := range []struct {
		name, thresholds string
		code             int
	}{
		{"failed threshold", "thresholds: { http_req_failed: ['rate<0.5'] }", ExitThresholds},
		{"passed threshold", "thresholds: { http_req_failed: ['rate>0.5'] }", ExitFailure},
		{"no threshold", "", ExitFailure},
	} {
		t.Run(tc.name, func(t *testing.T) {
			script := writeJS(t, `import http from 'k6/http';
export const options = { iterations: 2, `+tc.thresholds+` };
export default function () { http.get(__ENV.URL); }
`)
			code, out, stderr := runKnee(t, "run", script, "-e", "URL="+refusedURL(t), "--out", t.TempDir(), "--quiet")
			if code != tc.code {
				t.Errorf("exit %d, want %d\n%s\n%s", code, tc.code, out, stderr)
			}
		})
	}
}
