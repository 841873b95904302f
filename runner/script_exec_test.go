package runner_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/knee-dev/knee/k6script"
	"github.com/knee-dev/knee/runner"
)

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
			script := filepath.Join(t.TempDir(), "vus.js")
			src := fmt.Sprintf(`import http from 'k6/http';
import { check, sleep } from 'k6';
import exec from 'k6/execution';
export const options = { scenarios: { s: %s } };
const seen = (phase) => check(null, { [phase]: () => exec.instance.vusInitialized === %d });
export function setup() { seen('setup'); }
export default function () { http.get(__ENV.BASE); seen('iteration'); sleep(0.05); }
export function teardown() { seen('teardown'); }
`, tt.scenario, tt.want)
			if err := os.WriteFile(script, []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			s, err := k6script.Load(context.Background(), script, k6script.Config{Env: map[string]string{"BASE": target.URL}})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			plan, err := s.Plan(k6script.Overrides{})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := runner.ExecuteScript(context.Background(), s, plan, runner.Options{Dir: filepath.Join(t.TempDir(), "run"), SkipEnvironment: true}); err != nil {
				t.Fatal(err)
			}
			checks := s.SummaryData(k6script.SummaryInput{})["root_group"].(k6script.SummaryGroup).Checks
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
