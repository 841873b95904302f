package cli

import (
	"fmt"
	"github.com/knee-dev/knee/internal/kneetest"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// runKneeSignals runs knee and sends it n interrupts, the first after
// after, the others 300 ms apart. A run still going after a minute is a
// failure: the signals did not stop it.
func runKneeSignals(t *testing.T, n int, after time.Duration, args ...string) (code int, stdout, stderr string) {
	return runKneeSignalsWhen(t, n, func() { time.Sleep(after) }, args...)
}

// runKneeSignalsWhen is runKneeSignals with the first interrupt sent once
// wait returns.
func runKneeSignalsWhen(t *testing.T, n int, wait func(), args ...string) (code int, stdout, stderr string) {
	t.Helper()
	sig := make(chan os.Signal, 4)
	var out, errb kneetest.Buffer
	exited := make(chan int, 1)
	done := make(chan int, 1)
	go func() {
		done <- Main(Env{Args: args, Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" },
			Signals: sig, Exit: func(c int) { exited <- c }})
	}()
	go func() {
		if n == 0 {
			return
		}
		wait()
		for i := 0; i < n; i++ {
			sig <- os.Interrupt
			time.Sleep(300 * time.Millisecond)
		}
	}()
	select {
	case code = <-done:
	case code = <-exited: // the second interrupt's forced exit
		// A process would be gone; here Main still has to return, before
		// the test's directories go.
		select {
		case <-done:
		case <-time.After(time.Minute):
			t.Fatalf("knee %s: Main still running a minute after its forced exit", strings.Join(args, " "))
		}
	case <-time.After(time.Minute):
		t.Fatalf("knee %s: still running a minute after %d interrupts\n%s", strings.Join(args, " "), n, errb.String())
	}
	return code, out.String(), errb.String()
}

// Every phase of a k6 script stops: init code, setup() and teardown()
// looping forever are interrupted by a signal, and setup() and teardown()
// by their timeouts (k6's exit codes 100, 101; 105 for a stop from outside
// before the load ran).
func TestScriptPhasesStop(t *testing.T) {
	// A phase says it has begun (a request to this server) before it loops,
	// so the signal meant for it finds it running, however slow the machine.
	begun := make(chan string, 8)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { begun <- r.URL.Path }))
	defer srv.Close()
	loop := `for (;;) {}`
	mark := func(phase string) string { return "http.get('" + srv.URL + "/" + phase + "'); " }
	for _, tc := range []struct {
		name     string
		src      string
		signals  int
		code     int
		stderr   string // in stderr
		teardown bool   // the summary was printed before teardown looped
	}{
		{"init code", loop + "\nexport default function () {}", 1, ExitInterrupted, "init code: interrupted", false},
		{"setup, one signal", "export function setup() { " + mark("setup") + loop + " }\nexport default function () {}", 1, ExitInterrupted, "setup(): interrupted", false},
		{"setupTimeout", "export const options = { setupTimeout: '1s' };\nexport function setup() { " + loop + " }\nexport default function () {}", 0, ExitSetupTimeout, "setup() execution timed out after 1s", false},
		{"teardownTimeout", "export const options = { teardownTimeout: '1s' };\nexport default function () {}\nexport function teardown() { " + loop + " }", 0, ExitTeardownTimeout, "teardown() execution timed out after 1s", true},
		// teardown began after the load ended by itself: one signal stops it.
		{"teardown, one signal", "export default function () {}\nexport function teardown() { " + mark("teardown") + loop + " }", 1, ExitInterrupted, "teardown(): interrupted", true},
		// the first signal ends the load and teardown runs (as in k6); the second stops it.
		{"load then teardown, two signals", "export const options = { duration: '1m', vus: 1 };\nexport default function () {}\nexport function teardown() { " + loop + " }", 2, ExitInterrupted, "teardown(): interrupted", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			script := writeJS(t, "import http from 'k6/http';\n"+tc.src)
			wait := func() { time.Sleep(700 * time.Millisecond) }
			if strings.Contains(tc.src, srv.URL) {
				wait = func() { <-begun }
			}
			code, out, stderr := runKneeSignalsWhen(t, tc.signals, wait, "run", script, "--out", t.TempDir(), "--quiet")
			// A signal may find the phase's own init code running: "setup():
			// init code: interrupted" is as right as "setup(): interrupted".
			said := strings.Contains(stderr, tc.stderr) ||
				strings.HasSuffix(tc.stderr, "(): interrupted") && strings.Contains(stderr, strings.TrimSuffix(tc.stderr, "interrupted")+"init code: interrupted")
			if code != tc.code || !said {
				t.Fatalf("exit %d, want %d with %q in stderr\n%s\n%s", code, tc.code, tc.stderr, out, stderr)
			}
			if tc.teardown && !strings.Contains(out, "teardown failed") {
				t.Fatalf("the run's summary does not say teardown failed:\n%s", out)
			}
		})
	}
}

// The second interrupt ends knee within abortGrace whatever it is doing:
// here a command that never returns.
func TestSecondInterruptExits(t *testing.T) {
	sig := make(chan os.Signal, 3)
	exited := make(chan int, 1)
	var errb kneetest.Buffer
	ctx, abort, _, stop := interruptContexts(Env{Stderr: &errb, Signals: sig, Exit: func(c int) { exited <- c }})
	defer stop()
	sig <- os.Interrupt
	<-ctx.Done()
	select {
	case c := <-exited:
		t.Fatalf("the first interrupt exited (%d); it only stops gracefully", c)
	case <-time.After(2 * abortGrace):
	}
	sig <- os.Interrupt
	<-abort.Done()
	select {
	case c := <-exited:
		if c != ExitInterrupted {
			t.Fatalf("exit %d, want %d", c, ExitInterrupted)
		}
	case <-time.After(time.Minute):
		t.Fatal("the second interrupt never exited")
	}
	if !strings.Contains(errb.String(), "still busy") {
		t.Fatalf("stderr does not say why knee exited:\n%s", errb.String())
	}
}

// An impossible rate is refused before any load with the largest this
// machine can try (runtime.NumCPU() × 1e6/s): --rate 1e308 used to run
// forever and ignore Ctrl-C.
func TestImpossibleRateRefused(t *testing.T) {
	want := fmt.Sprintf("at most %.6g/s (%d CPUs", 1e6*float64(runtime.NumCPU()), runtime.NumCPU())
	code, out, stderr := runKneeSignals(t, 0, 0, "run", "--rate", "1e308", "--duration", "3s", "--url", "http://127.0.0.1:1/", "--out", t.TempDir())
	if code != ExitUsage || !strings.Contains(stderr, want) {
		t.Fatalf("exit %d, want %d with %q\n%s\n%s", code, ExitUsage, want, out, stderr)
	}
}
