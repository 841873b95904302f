package runner_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strconv"
	"testing"
	"time"

	"github.com/knee-dev/knee/internal/kneetest"
	"github.com/knee-dev/knee/k6script"
	"github.com/knee-dev/knee/runner"
	"github.com/knee-dev/knee/scenario"
)

// The memory an idle VU holds (issue #24: at most 100 KB for a k6 script's
// VU), against knee's declarative VU in the same test: each run's VUs make
// one request and then wait (a script's sleep, a declarative think time)
// far beyond the moment they are measured. The target runs in its own
// process, so its connections are not counted. Per VU is the difference
// between a run of few and one of many VUs, which leaves out what a run
// holds whatever its VUs (the compiled script, the recorders).
func TestIdleVUMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("starts 2,200 VUs; skipped in -short")
	}
	kneetest.SkipUnderRace(t) // the detector's shadow memory would be counted
	addr, _ := startTarget(t)
	const few, many = 100, 1000
	script := filepath.Join(t.TempDir(), "idle.js")
	src := `import http from 'k6/http';
import { sleep } from 'k6';
export const options = {
  scenarios: { idle: { executor: 'constant-vus', vus: Number(__ENV.N), duration: '60s', gracefulStop: '0s' } },
};
export default function () {
  http.get(__ENV.BASE + '/');
  sleep(120);
}
`
	if err := os.WriteFile(script, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	runScript := func(ctx context.Context, vus int, opt runner.Options) error {
		env := map[string]string{"BASE": "http://" + addr, "N": strconv.Itoa(vus)}
		s, err := k6script.Load(ctx, script, k6script.Config{Env: env})
		if err != nil {
			return err
		}
		defer s.Close()
		plan, err := s.Plan(k6script.Overrides{})
		if err != nil {
			return err
		}
		_, err = runner.ExecuteScript(ctx, s, plan, opt)
		return err
	}
	runDeclarative := func(ctx context.Context, vus int, opt runner.Options) error {
		cfg, err := scenario.FromFlags(scenario.Flags{Executor: scenario.ConstantVUs, VUs: vus, Duration: time.Minute,
			Think: 2 * time.Minute, URL: "http://" + addr + "/"})
		if err != nil {
			return err
		}
		_, err = runner.Execute(ctx, cfg, opt)
		return err
	}
	for _, c := range []struct {
		what  string
		run   func(ctx context.Context, vus int, opt runner.Options) error
		bound float64 // KB per VU of heap and stacks, a generous ceiling
	}{
		// Measured 17.0 and 61.4 KB (2026-12-04), within ~1.5 KB from run to run.
		{"declarative", runDeclarative, 40},
		{"k6 script", runScript, 90},
	} {
		lo := idleMemory(t, addr, c.what, few, c.run)
		hi := idleMemory(t, addr, c.what, many, c.run)
		// Signed: the event loop's VUs hold no stack, and the difference
		// of two readings of ~0 can be below zero (as uint64, 2e13 KB).
		objects := float64(int64(hi.objects)-int64(lo.objects)) / (many - few) / 1024
		stacks := float64(int64(hi.stacks)-int64(lo.stacks)) / (many - few) / 1024
		t.Logf("%-11s per idle VU: %.1f KB heap objects + %.1f KB goroutine stacks = %.1f KB (%d VUs: %.1f MB, %d VUs: %.1f MB)",
			c.what, objects, stacks, objects+stacks, few, float64(lo.objects+lo.stacks)/(1<<20), many, float64(hi.objects+hi.stacks)/(1<<20))
		if objects+stacks > c.bound {
			t.Errorf("%s: %.1f KB per idle VU; want at most %.0f KB", c.what, objects+stacks, c.bound)
		}
	}
}

// heapMemory is the live heap and the goroutine stacks, in bytes.
type heapMemory struct{ objects, stacks uint64 }

// idleMemory starts run with vus VUs, waits until the target at addr has
// answered one request per VU (every VU then waits), and reads the memory after a
// full collection; then it stops the run.
func idleMemory(t *testing.T, addr, what string, vus int, run func(ctx context.Context, vus int, opt runner.Options) error) heapMemory {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	opt := runner.Options{Dir: filepath.Join(t.TempDir(), "run"), SkipEnvironment: true}
	before := served(t, addr)
	done := make(chan error, 1)
	go func() { done <- run(ctx, vus, opt) }()
	// Each VU's request is recorded when its iteration ends, so the target counts them.
	for deadline := time.Now().Add(2 * time.Minute); served(t, addr)-before < int64(vus); {
		select {
		case err := <-done:
			t.Fatalf("%s, %d VUs: the run ended before every VU had sent its request: %v", what, vus, err)
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s, %d VUs: %d requests in 2 minutes; want %d", what, vus, served(t, addr)-before, vus)
		}
	}
	// The last replies' VUs are still between reading them and their sleep.
	time.Sleep(200 * time.Millisecond)
	runtime.GC()
	runtime.GC()
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/heap/stacks:bytes"}}
	metrics.Read(s)
	cancel()
	if err := <-done; err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, k6script.ErrInterrupted) {
		t.Fatalf("%s, %d VUs: %v", what, vus, err)
	}
	return heapMemory{objects: s[0].Value.Uint64(), stacks: s[1].Value.Uint64()}
}

// served is how many requests the target process has answered.
func served(t *testing.T, addr string) int64 {
	t.Helper()
	res, err := http.Get("http://" + addr + servedPath)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		t.Fatalf("the target's count %q: %v", b, err)
	}
	return n
}
