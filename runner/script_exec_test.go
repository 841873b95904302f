package runner_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/knee-dev/knee/k6script"
	"github.com/knee-dev/knee/runner"
)

// loadScript writes src to a file of its own, loads it with __ENV.BASE set
// to base and plans it as written; the script closes with the test.
func loadScript(t *testing.T, src, base string) (*k6script.Script, *k6script.Plan) {
	t.Helper()
	script := filepath.Join(t.TempDir(), "script.js")
	if err := os.WriteFile(script, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := k6script.Load(context.Background(), script, k6script.Config{Env: map[string]string{"BASE": base}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	plan, err := s.Plan(k6script.Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	return s, plan
}

// runOpts are a script run's options in these tests: its own directory,
// no environment note.
func runOpts(t *testing.T) runner.Options {
	return runner.Options{Dir: filepath.Join(t.TempDir(), "run"), SkipEnvironment: true}
}

// allChecks are g's checks and its groups', as k6 puts setup()'s and
// teardown()'s in groups of those names.
func allChecks(g k6script.SummaryGroup) []k6script.SummaryCheck {
	out := g.Checks
	for _, sub := range g.Groups {
		out = append(out, allChecks(sub)...)
	}
	return out
}

// exec.instance.vusInitialized is k6's initialised VUs (k6
// lib/execution.go GetInitializedVUsCount): the VUs the plan initialises
// before setup() (a closed scenario's peak, an open one's pre-allocated
// VUs) and those an open scenario starts beyond them, never the VUs that
// only read the options or run setup() and teardown(), nor knee's runtimes
// made ahead. Each row's script checks the value in setup(), every
// iteration and teardown(); none of them outgrows its plan (fast
// iterations), so the count is the plan's, by hand.
func TestScriptVUsInitialized(t *testing.T) {
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) }))
	defer target.Close()
	for _, tt := range []struct {
		name     string
		scenario string
		want     int
	}{
		{"per-vu-iterations: its VUs", `{ executor: 'per-vu-iterations', vus: 2, iterations: 2 }`, 2},
		{"ramping-vus: the peak", `{ executor: 'ramping-vus', startVUs: 1, stages: [{ duration: '300ms', target: 3 }] }`, 3},
		{"constant-arrival-rate: the pre-allocated", `{ executor: 'constant-arrival-rate', rate: 10, timeUnit: '1s', duration: '500ms', preAllocatedVUs: 3, maxVUs: 20 }`, 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			src := fmt.Sprintf(`import http from 'k6/http';
import { check, sleep } from 'k6';
import exec from 'k6/execution';
export const options = { scenarios: { s: %s } };
const seen = (phase) => check(null, { [phase]: () => exec.instance.vusInitialized === %d });
export function setup() { seen('setup'); }
export default function () { http.get(__ENV.BASE); seen('iteration'); sleep(0.05); }
export function teardown() { seen('teardown'); }
`, tt.scenario, tt.want)
			s, plan := loadScript(t, src, target.URL)
			if _, err := runner.ExecuteScript(context.Background(), s, plan, runOpts(t)); err != nil {
				t.Fatal(err)
			}
			checks := allChecks(s.SummaryData(k6script.SummaryInput{})["root_group"].(k6script.SummaryGroup))
			if len(checks) != 3 {
				t.Fatalf("checks %+v; want setup, iteration and teardown", checks)
			}
			for _, c := range checks {
				if c.Passes == 0 || c.Fails != 0 {
					t.Errorf("%s: vusInitialized was not %d in %d of %d calls", c.Name, tt.want, c.Fails, c.Passes+c.Fails)
				}
			}
		})
	}
}

// k6's test run duration (handleSummary's testRunDurationMs, over which a
// Counter's rate is taken) starts after its VUs are initialised (k6
// internal/execution/scheduler.go: Init, then Run's MarkStarted). Each
// VU's init code here spins 150 ms by the script's own clock, so of the
// run's wall time at least VUs × 150 ms is VU initialisation, which the
// test's duration must leave out.
func TestScriptTestRunDurationLeavesOutVUInit(t *testing.T) {
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) }))
	defer target.Close()
	for _, vus := range []int{1, 3} {
		t.Run(fmt.Sprintf("%d VUs", vus), func(t *testing.T) {
			src := fmt.Sprintf(`import http from 'k6/http';
const until = Date.now() + 150;
while (Date.now() < until) {}
export const options = { scenarios: { s: { executor: 'per-vu-iterations', vus: %d, iterations: 1 } } };
export default function () { http.get(__ENV.BASE); }
`, vus)
			s, plan := loadScript(t, src, target.URL)
			began := time.Now()
			res, err := runner.ExecuteScript(context.Background(), s, plan, runOpts(t))
			if err != nil {
				t.Fatal(err)
			}
			wall, init := time.Since(began), time.Duration(vus)*150*time.Millisecond
			if res.TestRunDuration <= 0 || res.TestRunDuration > wall-init {
				t.Errorf("test run duration %v of %v in all; want at most %v, the %v of VU init left out", res.TestRunDuration, wall, wall-init, init)
			}
		})
	}
}

// exec.instance.currentTestRunDuration is k6's test run duration so far,
// which starts before setup() (k6 internal/execution/scheduler.go: Run
// marks the start, then runs setup): setup() here sleeps 300 ms, so from
// its end on every reading is at least 300 ms, and it grows.
func TestScriptCurrentTestRunDuration(t *testing.T) {
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) }))
	defer target.Close()
	src := `import http from 'k6/http';
import { check, sleep } from 'k6';
import exec from 'k6/execution';
export const options = { scenarios: { s: { executor: 'per-vu-iterations', vus: 1, iterations: 3 } } };
let last = 0;
const grows = (phase) => {
  const d = exec.instance.currentTestRunDuration;
  check(d, { [phase + ' after setup'] : (x) => x >= 300, [phase + ' grows']: (x) => x > last });
  last = d;
};
export function setup() { sleep(0.3); grows('setup'); }
export default function () { http.get(__ENV.BASE); grows('iteration'); }
export function teardown() { grows('teardown'); }
`
	s, plan := loadScript(t, src, target.URL)
	if _, err := runner.ExecuteScript(context.Background(), s, plan, runOpts(t)); err != nil {
		t.Fatal(err)
	}
	checks := allChecks(s.SummaryData(k6script.SummaryInput{})["root_group"].(k6script.SummaryGroup))
	want := map[string]int64{"setup after setup": 1, "setup grows": 1, "iteration after setup": 3, "iteration grows": 3,
		"teardown after setup": 1, "teardown grows": 1}
	if len(checks) != len(want) {
		t.Fatalf("checks %+v; want %v", checks, want)
	}
	for _, c := range checks {
		if c.Passes != want[c.Name] || c.Fails != 0 {
			t.Errorf("%s: %d passed, %d failed; want %d passed", c.Name, c.Passes, c.Fails, want[c.Name])
		}
	}
}
