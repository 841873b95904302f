package fault

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// helperEnv switches the test binary into a helper process (see TestMain).
const helperEnv = "KNEE_FAULT_HELPER"

func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "busy":
		for {
		}
	case "freezer":
		os.Exit(runFreezerHelper())
	}
	os.Exit(m.Run())
}

// runFreezerHelper plays a knee that freezes a cgroup for an hour: it prints
// "frozen" once frozen and waits to be killed.
func runFreezerHelper() int {
	cg, err := Open(os.Getenv("KNEE_FAULT_TARGET"))
	if err != nil {
		fmt.Println(err)
		return 1
	}
	s := Scheduler{StateDir: os.Getenv("KNEE_FAULT_STATE")}
	err = s.Run(context.Background(), time.Now(), []Fault{{For: time.Hour, Freezer: cg}}, func(ev Event) {
		if ev.Kind == "freeze" && ev.Err == nil {
			fmt.Println("frozen")
		} else {
			fmt.Println(ev.Kind, ev.Err)
		}
	})
	fmt.Println(err)
	return 1
}

// helper returns a command that re-runs the test binary as helper mode.
func helper(t *testing.T, mode string, env ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), helperEnv+"="+mode), env...)
	return cmd
}

// realCgroup creates a knee cgroup on this machine, or skips loudly.
func realCgroup(t *testing.T, h Hierarchy, needCPU bool) *Cgroup {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("SKIPPED: real cgroup tests need root; the SIGSTOP tests still run")
	}
	if h.Version() == 0 {
		t.Skip("SKIPPED: no cgroup filesystem mounted here")
	}
	var newParents []string
	for _, m := range append(mapValues(h.V1), h.V2) {
		if p := m + "/knee"; m != "" && !exists(p) {
			newParents = append(newParents, p)
		}
	}
	t.Cleanup(func() {
		for _, p := range newParents {
			_ = os.Remove(p) // best effort: another test's cgroup may still use it
		}
	})
	cg, err := NewCgroup(h, fmt.Sprintf("test-%d-%s", os.Getpid(), strings.ReplaceAll(t.Name(), "/", "_")))
	if err != nil {
		t.Skipf("SKIPPED: cannot create a cgroup here: %v", err)
	}
	if needCPU && cg.dir("cpu") == "" || needCPU && cg.cpuErr != nil {
		t.Cleanup(func() { _ = cg.Remove() })
		t.Skip("SKIPPED: no writable cpu controller here")
	}
	t.Cleanup(func() {
		if err := cg.Remove(); err != nil {
			t.Errorf("Remove: %v", err)
		}
		for _, d := range cg.uniqueDirs() {
			if exists(d) {
				t.Errorf("cgroup %s left behind", d)
			}
		}
	})
	return cg
}

// startBusy starts a busy-loop child inside cg and reaps it at cleanup.
func startBusy(t *testing.T, cg *Cgroup) *exec.Cmd {
	t.Helper()
	cmd := helper(t, "busy")
	if err := StartInCgroup(context.Background(), cmd, cg); err != nil {
		t.Fatalf("StartInCgroup: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill() // our own child, by PID
		_ = cmd.Wait()
	})
	return cmd
}

func usage(t *testing.T, cg *Cgroup) time.Duration {
	t.Helper()
	st, err := cg.CPUStat()
	if err != nil {
		t.Fatalf("CPUStat: %v", err)
	}
	return st.Usage
}

func TestRealCPUQuotaLimits(t *testing.T) {
	cg := realCgroup(t, Detect().Hierarchy, true)
	if err := cg.SetCPUs(0.25); err != nil {
		t.Fatalf("SetCPUs: %v", err)
	}
	// The machine is shared: a top weight makes the quota, not other
	// load, what limits the child.
	weight, value := "cpu.shares", "262144"
	if cg.Version() == 2 {
		weight, value = "cpu.weight", "10000"
	}
	for _, dir := range []string{cg.dir("cpu"), filepath.Dir(cg.dir("cpu"))} {
		if err := writeFile(filepath.Join(dir, weight), value); err != nil {
			t.Fatal(err)
		}
	}
	startBusy(t, cg)
	eventually(t, "the child to start looping", func() bool { return usage(t, cg) >= 20*time.Millisecond })
	u0, t0 := usage(t, cg), time.Now()
	time.Sleep(2 * time.Second)
	u1, t1 := usage(t, cg), time.Now()
	cpus := float64(u1-u0) / float64(t1.Sub(t0))
	if cpus < 0.20 || cpus > 0.30 {
		t.Errorf("busy child in a 0.25-CPU cgroup used %.3f CPUs, want 0.25 ± 0.05", cpus)
	}
	st, err := cg.CPUStat()
	if err != nil {
		t.Fatal(err)
	}
	if st.Throttled == 0 || st.ThrottledTime == 0 {
		t.Errorf("CPUStat %+v: want throttled periods and time", st)
	}
	lim, err := cg.Limits()
	if err != nil {
		t.Fatal(err)
	}
	if lim["cpus"] != "0.25" {
		t.Errorf("Limits %v: want cpus 0.25", lim)
	}
}

// realHierarchies are the hierarchies to freeze on: the detected one, and
// the cgroup2 mount of a hybrid machine when there is one.
func realHierarchies() map[string]Hierarchy {
	det := Detect().Hierarchy
	out := map[string]Hierarchy{fmt.Sprintf("v%d", det.Version()): det}
	if det.Version() == 1 && det.V2 != "" {
		out["v2-hybrid"] = Hierarchy{V2: det.V2}
	}
	return out
}

func TestRealFreezeStopsProgress(t *testing.T) {
	for name, h := range realHierarchies() {
		t.Run(name, func(t *testing.T) {
			cg := realCgroup(t, h, false)
			cmd := startBusy(t, cg)
			procs, err := cg.Procs()
			if err != nil || len(procs) != 1 || procs[0] != cmd.Process.Pid {
				t.Fatalf("Procs = %v, %v; want [%d]", procs, err, cmd.Process.Pid)
			}
			time.Sleep(100 * time.Millisecond)
			if err := cg.Freeze(context.Background()); err != nil {
				t.Fatalf("Freeze: %v", err)
			}
			u0 := usage(t, cg)
			time.Sleep(300 * time.Millisecond)
			if u1 := usage(t, cg); u1 != u0 {
				t.Errorf("usage grew from %v to %v while frozen", u0, u1)
			}
			if err := cg.Thaw(); err != nil {
				t.Fatalf("Thaw: %v", err)
			}
			eventually(t, "the thawed child to use 20 ms of CPU", func() bool {
				return usage(t, cg)-u0 >= 20*time.Millisecond
			})
		})
	}
}

func TestRealKilledFreezerThawAll(t *testing.T) {
	cg := realCgroup(t, Detect().Hierarchy, false)
	if cg.dir("freezer") == "" {
		t.Skip("SKIPPED: no freezer controller here")
	}
	startBusy(t, cg)
	state := t.TempDir()
	knee := helper(t, "freezer", "KNEE_FAULT_TARGET="+cg.Dir(), "KNEE_FAULT_STATE="+state)
	out, err := knee.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := knee.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	if strings.TrimSpace(line) != "frozen" {
		_ = knee.Process.Kill()
		_ = knee.Wait()
		t.Fatalf("freezer helper said %q", line)
	}
	if err := knee.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = knee.Wait() // reaped, so its PID is dead for ThawAll
	u0 := usage(t, cg)
	time.Sleep(200 * time.Millisecond)
	if u1 := usage(t, cg); u1 != u0 {
		t.Fatalf("target not frozen after the helper died: usage %v → %v", u0, u1)
	}
	results, err := ThawAll(state)
	if err != nil {
		t.Fatalf("ThawAll: %v", err)
	}
	if len(results) != 1 || results[0].Action != "thawed" || results[0].Entry.Path != cg.Dir() {
		t.Fatalf("ThawAll results = %+v; want one thawed %s", results, cg.Dir())
	}
	eventually(t, "the target to run again after ThawAll", func() bool {
		return usage(t, cg)-u0 >= 20*time.Millisecond
	})
	again, err := ThawAll(state)
	if err != nil || len(again) != 0 {
		t.Errorf("second ThawAll = %+v, %v; want nothing left", again, err)
	}
}

func procCPU(t *testing.T, pid int) (ticks int64, state byte) {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	rest := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	var u, k int64
	fmt.Sscan(rest[11], &u)
	fmt.Sscan(rest[12], &k)
	return u + k, rest[0][0]
}

func TestSignalFreezerStopsChild(t *testing.T) {
	cmd := helper(t, "busy")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	f, err := NewSignalFreezer(cmd.Process.Pid)
	if err != nil {
		t.Fatalf("NewSignalFreezer: %v", err)
	}
	if got, want := f.String(), fmt.Sprintf("pid:%d", cmd.Process.Pid); got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
	time.Sleep(100 * time.Millisecond)
	if err := f.Freeze(context.Background()); err != nil {
		t.Fatalf("Freeze: %v", err)
	}
	c0, st := procCPU(t, cmd.Process.Pid)
	if st != 'T' {
		t.Errorf("state after Freeze = %c, want T", st)
	}
	time.Sleep(300 * time.Millisecond)
	if c1, _ := procCPU(t, cmd.Process.Pid); c1 != c0 {
		t.Errorf("CPU ticks grew %d → %d while stopped", c0, c1)
	}
	if err := f.Thaw(); err != nil {
		t.Fatalf("Thaw: %v", err)
	}
	eventually(t, "the continued child to use 20 ms of CPU", func() bool {
		c2, st := procCPU(t, cmd.Process.Pid)
		return c2-c0 >= 2 && st != 'T'
	})
}

func TestStartInCgroupCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	cmd := helper(t, "busy")
	err := StartInCgroup(ctx, cmd, &Cgroup{version: 1})
	if !errors.Is(err, context.Canceled) || cmd.Process != nil {
		t.Errorf("StartInCgroup(cancelled) = %v, process %v; want context.Canceled and no process", err, cmd.Process)
	}
}

func mapValues(m map[string]string) []string {
	var out []string
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// eventually waits up to 10 s for cond: how soon a thawed process gets CPU
// depends on the machine's load, so no test asserts it.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Errorf("timed out waiting for %s", what)
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
