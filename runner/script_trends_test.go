package runner_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/knee-dev/knee/record"
	"github.com/knee-dev/knee/runner"
)

// TestScriptIterationsAndPhasesRecorded: a k6 script of exactly 6
// iterations, each a plain GET and a GET redirected once (3 hops, as k6
// counts requests), with a request in setup and one in teardown, leaves
// in the run directory 6 values in scenario s's iteration_duration series
// and 18 in each phase series: setup's and teardown's requests are not
// the test's, as for every series over time.
func TestScriptIterationsAndPhasesRecorded(t *testing.T) {
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/redirect" {
			http.Redirect(w, r, "/ok", http.StatusFound)
			return
		}
		w.Write([]byte("ok"))
	}))
	defer target.Close()
	src := `import http from 'k6/http';
export const options = { scenarios: { s: { executor: 'shared-iterations', vus: 2, iterations: 6 } } };
export function setup() { http.get(__ENV.BASE + '/ok'); }
export default function () { http.get(__ENV.BASE + '/ok'); http.get(__ENV.BASE + '/redirect'); }
export function teardown() { http.get(__ENV.BASE + '/ok'); }
`
	s, plan := loadScript(t, src, target.URL)
	res, err := runner.ExecuteScript(context.Background(), s, plan, runOpts(t))
	if err != nil {
		t.Fatal(err)
	}
	counts := map[record.Key]int64{}
	for _, iv := range res.Run.Intervals { // read back from latency.hlog
		for k, h := range iv.Histograms {
			if k.Metric == record.Trend {
				counts[k] += h.Count()
			}
		}
	}
	want := map[string]int64{record.IterationDuration: 6}
	for _, name := range record.PhaseNames() {
		want[name] = 18
	}
	for name, n := range want {
		if got := counts[record.Key{Metric: record.Trend, Scenario: "s", Name: name}]; got != n {
			t.Errorf("%s: %d values in the run directory, want %d", name, got, n)
		}
	}
	if len(counts) != len(want) {
		t.Errorf("Trend series %v, want only scenario s's %v", counts, want)
	}
}
