package k6script

import (
	"context"
	"strings"
	"testing"

	"github.com/knee-dev/knee/analyze"
)

// A threshold on a metric neither k6 has nor the init code makes is
// refused before the start, as k6 refuses it (metrics/thresholds.go: "no
// metric name %q found"), naming the metric; dropped_iterations, which
// knee judges on the run directory, and the script's own metrics are
// taken. Place puts a problem of the thresholds at their key in the script.
func TestSplitThresholdsUnknownMetric(t *testing.T) {
	s := loadScript(t, `import { Trend } from 'k6/metrics';
const mine = new Trend('order_wait');
export const options = {
  thresholds: { order_wait: ['p(95)<100'] },
};
export default function () {}
`, nil)
	for _, tt := range []struct {
		name       string
		thresholds map[string][]string
		refused    string // "" when taken
		own, rest  int
	}{
		{"a custom metric the init code makes", map[string][]string{"order_wait": {"p(95)<100"}, "order_wait{region:eu}": {"max<5"}}, "", 2, 0},
		{"a built-in metric", map[string][]string{"http_req_duration": {"p(95)<100"}}, "", 1, 0},
		{"dropped_iterations, judged on the run directory", map[string][]string{"dropped_iterations": {"count==0"}}, "", 0, 1},
		{"a metric nobody makes", map[string][]string{"order_wiat": {"p(95)<100"}}, `no metric named "order_wiat"`, 0, 0},
		{"a submetric of a metric nobody makes", map[string][]string{"orders{region:eu}": {"count>1"}}, `no metric named "orders"`, 0, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rest, own, err := s.SplitThresholds(tt.thresholds)
			switch {
			case tt.refused != "" && (err == nil || !strings.Contains(err.Error(), tt.refused)):
				t.Errorf("error %v; want %q", err, tt.refused)
			case tt.refused == "" && err != nil:
				t.Errorf("error %v; want none", err)
			case len(own) != tt.own || len(rest) != tt.rest:
				t.Errorf("%d judged on k6's metrics, %d left; want %d and %d", len(own), len(rest), tt.own, tt.rest)
			}
		})
	}
	if got, want := s.Place("thresholds"), s.Path+":4:3"; got != want {
		t.Errorf("Place(thresholds) = %q; want %q", got, want)
	}
}

// k6 runs setup() and teardown() each in a group of its name
// (internal/js/runner.go runPart): their samples carry the group tag
// "::setup" and "::teardown" (a group inside, "::teardown::t"), so a
// threshold on it selects them, and data.root_group has those groups.
func TestSetupTeardownSamplesCarryTheirGroup(t *testing.T) {
	srv := okServer(t)
	s := loadScript(t, `import http from 'k6/http';
import { check, group } from 'k6';
export function setup() { check(http.get(__ENV.BASE), { ok: (r) => r.status === 200 }); }
export default function () {}
export function teardown() { group('t', () => { http.get(__ENV.BASE); }); }
`, map[string]string{"BASE": srv.URL})
	want := map[string]float64{"http_reqs{group:::setup}": 1, "checks{group:::setup}": 1, "http_reqs{group:::teardown::t}": 1,
		"http_reqs{group:::teardown}": 0, "checks{group: }": 0}
	all := map[string][]string{}
	for k := range want {
		all[k] = []string{"count>=0"}
		if strings.HasPrefix(k, "checks") {
			all[k] = []string{"rate>=0"}
		}
	}
	if _, _, err := s.SplitThresholds(all); err != nil {
		t.Fatal(err)
	}
	if err := s.Setup(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := s.Teardown(context.Background()); err != nil {
		t.Fatal(err)
	}
	for k, w := range want {
		st, _ := s.k6.Stat(SubmetricName(analyzeKey(t, k)))
		if float64(st.Count) != w {
			t.Errorf("%s has %d values; want %g", k, st.Count, w)
		}
	}
	var names []string
	for _, g := range s.rootGroup().Groups {
		names = append(names, g.Name)
	}
	if got := strings.Join(names, ","); got != "setup,teardown" {
		t.Errorf("root_group's groups %q; want setup,teardown", got)
	}
}

// analyzeKey is a threshold key's metric and tags.
func analyzeKey(t *testing.T, key string) (string, map[string]string) {
	t.Helper()
	m, tags, err := analyze.ParseK6Key(key)
	if err != nil {
		t.Fatal(err)
	}
	return m, tags
}
