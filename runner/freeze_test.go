package runner_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/knee-dev/knee/analyze"
	"github.com/knee-dev/knee/fault"
	"github.com/knee-dev/knee/rundir"
	"github.com/knee-dev/knee/runner"
	"github.com/knee-dev/knee/scenario"
)

// The acceptance test, "honest under a freeze, at defaults": a
// target in another process is stopped with SIGSTOP for 3 s in the middle
// of a run. An open-model run must see every request scheduled during the
// freeze as slow (from its intended start); a closed-model run sees at most
// one slow request per VU, which is why the closed model hides the stall.

// targetEnv switches the re-executed test binary into the target server.
const targetEnv = "KNEE_FREEZE_TEST_TARGET"

// The freeze every test here applies.
const (
	freezeRun = 25 * time.Second
	freezeAt  = 11 * time.Second
	freezeFor = 3 * time.Second
)

// servedPath answers how many requests the target has served (itself not counted).
const servedPath = "/served"

// TestFreezeTargetProcess is not a test: re-executed with targetEnv set, it
// is the target server. It prints its address and serves until its stdin
// closes (the parent test ended or died).
func TestFreezeTargetProcess(t *testing.T) {
	if os.Getenv(targetEnv) != "1" {
		t.Skip("the freeze tests' target process; runs only when re-executed by them")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var served atomic.Int64
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == servedPath {
			fmt.Fprint(w, served.Load())
			return
		}
		served.Add(1)
		w.Write([]byte("ok"))
	})}
	go srv.Serve(ln)
	fmt.Println(ln.Addr().String())
	buf := make([]byte, 1)
	os.Stdin.Read(buf) // EOF or error: the parent is gone
	srv.Close()
}

// startTarget re-executes the test binary as the target server and returns
// its address and PID; it is killed when the test ends.
func startTarget(t *testing.T) (addr string, pid int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestFreezeTargetProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), targetEnv+"=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// A run that failed half-way may have left it stopped: continue it first.
		_ = cmd.Process.Signal(syscall.SIGCONT)
		stdin.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Scan()
		line <- strings.TrimSpace(sc.Text())
	}()
	select {
	case addr = <-line:
	case <-time.After(30 * time.Second):
		t.Fatal("the target process did not print its address within 30 s")
	}
	if _, _, err := net.SplitHostPort(addr); err != nil {
		t.Fatalf("the target process printed %q, not an address: %v", addr, err)
	}
	return addr, cmd.Process.Pid
}

// runFrozen runs the scenario flags describe against a fresh target frozen
// for freezeFor at freezeAt, checks that the fault was applied, and returns
// the result.
func runFrozen(t *testing.T, flags scenario.Flags) *runner.Result {
	t.Helper()
	addr, pid := startTarget(t)
	flags.URL = "http://" + addr + "/"
	flags.Duration = freezeRun
	cfg, err := scenario.FromFlags(flags)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Faults = []scenario.Fault{{At: freezeAt, Kind: scenario.FaultFreeze, For: freezeFor}}
	target, err := fault.NewSignalFreezer(pid)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	res, err := runner.Execute(ctx, cfg, runner.Options{
		Dir:             t.TempDir() + "/run",
		Target:          target,
		FaultState:      t.TempDir(),
		SkipEnvironment: true,
	})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	var kinds []string
	for _, f := range res.Run.Meta.Faults {
		if f.Error != "" {
			t.Errorf("fault %s at %s failed: %s", f.Kind, f.At, f.Error)
		}
		kinds = append(kinds, f.Kind)
	}
	if len(kinds) < 2 {
		t.Fatalf("faults recorded %v; want the freeze and its thaw", kinds)
	}
	return res
}

// checkReadBack reopens the run directory and checks that it tells the
// same story as the summary the run returned.
func checkReadBack(t *testing.T, res *runner.Result) {
	t.Helper()
	r, err := rundir.Open(res.Dir)
	if err != nil {
		t.Fatal(err)
	}
	got := analyze.Summarize(r, analyze.SummaryOptions{})
	want := res.Summary
	for _, c := range []struct {
		what      string
		got, want any
	}{
		{"requests", got.Requests, want.Requests},
		{"dropped", got.DroppedIterations, want.DroppedIterations},
		{"errors", got.Errors, want.Errors},
		{"slower than 1 s", got.SlowerThan1s, want.SlowerThan1s},
		{"p99 ms", got.LatencyMS.P99, want.LatencyMS.P99},
		{"max ms", got.LatencyMS.Max, want.LatencyMS.Max},
		{"run.json requests", r.Meta.Summary.Requests, want.Requests},
		{"run.json slower than 1 s", r.Meta.Summary.SlowerThan1s, want.SlowerThan1s},
		{"run.json p99 ms", r.Meta.Summary.LatencyMS.P99, want.LatencyMS.P99},
	} {
		if c.got != c.want {
			t.Errorf("read back: %s = %v; the run returned %v", c.what, c.got, c.want)
		}
	}
}

// raceEnabled reports whether the test binary was built with -race.
func raceEnabled() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range bi.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}

func TestFreezeOpenModelAtDefaults(t *testing.T) {
	if testing.Short() {
		t.Skip("a 25 s run with a real freeze; skipped in -short")
	}
	t.Parallel()
	// knee's defaults (50 pre-allocated VUs, 30 s graceful stop, 60 s
	// timeout) except maxVUs: a 3 s freeze at 500/s holds 1,500 VUs.
	res := runFrozen(t, scenario.Flags{Executor: scenario.ConstantArrivalRate, Rate: 500, MaxVUs: 2000})
	s := res.Summary
	t.Logf("requests %d dropped %d errors %d >1s %d p99 %.0f ms max %.0f ms",
		s.Requests, s.DroppedIterations, s.Errors, s.SlowerThan1s, s.LatencyMS.P99, s.LatencyMS.Max)

	// 500/s for 25 s: exactly 12,500 iterations due, all started.
	if n := s.Requests + s.DroppedIterations; n != 12500 {
		t.Errorf("requests+dropped = %d; want exactly 12500 (500/s × 25 s)", n)
	}
	if s.DroppedIterations != 0 {
		t.Errorf("dropped %d; want 0 (maxVUs 2000 > 1500 held by the freeze)", s.DroppedIterations)
	}
	if s.Errors != 0 {
		t.Errorf("errors %d (%v); want 0", s.Errors, s.ErrorsByClass)
	}
	// Requests due in the freeze's first 2 s wait more than 1 s: 2 s × 500/s
	// = 1,000. The race detector slows the catch-up after the thaw, which
	// pushes the requests due just before it past 1 s too.
	most := int64(1300)
	if raceEnabled() {
		most = 2000
	}
	if s.SlowerThan1s < 700 || s.SlowerThan1s > most {
		t.Errorf("requests slower than 1 s = %d; want 700..%d (about 1,000)", s.SlowerThan1s, most)
	}
	// The slowest 1 % (125) were due in the freeze's first 0.25 s: p99 ≈ 3 s − 0.25 s.
	if p99 := s.LatencyMS.P99; p99 < 2000 || p99 > 3500 {
		t.Errorf("p99 %.0f ms; want 2000..3500 (about 2750)", p99)
	}
	checkReadBack(t, res)
}

func TestFreezeClosedModelHidesIt(t *testing.T) {
	if testing.Short() {
		t.Skip("a 25 s run with a real freeze; skipped in -short")
	}
	t.Parallel()
	res := runFrozen(t, scenario.Flags{Executor: scenario.ConstantVUs, VUs: 20, Think: 100 * time.Millisecond})
	s := res.Summary
	t.Logf("requests %d errors %d >1s %d p99 %.0f ms max %.0f ms",
		s.Requests, s.Errors, s.SlowerThan1s, s.LatencyMS.P99, s.LatencyMS.Max)
	if s.Errors != 0 {
		t.Errorf("errors %d (%v); want 0", s.Errors, s.ErrorsByClass)
	}
	// Each of the 20 VUs is stuck on one request for the freeze, and sends
	// nothing else meanwhile: 20 slow requests, give or take a straggler.
	if s.SlowerThan1s < 1 || s.SlowerThan1s > 24 {
		t.Errorf("requests slower than 1 s = %d; want 1..24 (one per VU: 20)", s.SlowerThan1s)
	}
	checkReadBack(t, res)
}
