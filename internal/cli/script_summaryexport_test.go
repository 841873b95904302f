package cli

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// k6Export is k6's --summary-export document (its summary wrapper's old
// JSON summary), as a reader of k6's file reads it.
type k6Export struct {
	Metrics   map[string]map[string]any `json:"metrics"`
	RootGroup struct {
		Groups map[string]struct {
			Path   string `json:"path"`
			Checks map[string]struct {
				Name, Path, ID string
				Passes, Fails  int64
			} `json:"checks"`
		} `json:"groups"`
		Checks map[string]any `json:"checks"`
	} `json:"root_group"`
	Knee struct {
		FormatVersion int   `json:"format_version"`
		Requests      int64 `json:"requests"`
	} `json:"knee"`
}

// For a script, --summary-export writes k6's file: what k6 v1.8.1 writes
// for --summary-export (internal/js/summary-wrapper.js): handleSummary's
// data without options and state, each metric its values, its thresholds
// as {expression: failed}, a Rate's rate as value, groups and checks keyed
// by name; knee's own run summary beside it under "knee". By hand: 4
// iterations of one GET in group g1 with check 'ok' (passes) and 'odd'
// (passes on iterations 0 and 2): checks passes 6, fails 2, value 0.75.
func TestScriptSummaryExportIsK6s(t *testing.T) {
	srv := okMissingServer(t)
	script := writeJS(t, `import http from 'k6/http';
import { check, group } from 'k6';
export const options = { vus: 1, iterations: 4,
  summaryTrendStats: ['avg', 'min', 'med', 'max', 'p(90)', 'p(95)', 'p(99)', 'count'],
  thresholds: { http_req_duration: ['max<0.000001', 'p(95)<60000'], checks: ['rate>0.5'] } };
export default function () {
  group('g1', () => {
    const r = http.get(__ENV.BASE + '/ok');
    check(r, { 'ok': (r) => r.status === 200, 'odd': () => __ITER % 2 === 0 });
  });
}
`)
	dir := t.TempDir()
	export := filepath.Join(dir, "summary.json")
	code, out, stderr := runKnee(t, "run", script, "-e", "BASE="+srv.URL, "--out", filepath.Join(dir, "runs"), "--quiet", "--summary-export", export)
	if code != ExitThresholds {
		t.Fatalf("exit %d; want %d (max<0.000001 fails)\n%s\n%s", code, ExitThresholds, out, stderr)
	}
	raw, err := os.ReadFile(export)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(raw), "{\n    \"metrics\": {\n        \"") {
		t.Errorf("not indented by four spaces from metrics, as k6's JSON.stringify(results, null, 4):\n%.80s", raw)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range top {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if strings.Join(keys, " ") != "knee metrics root_group" {
		t.Errorf("top-level keys %v; want metrics, root_group (k6's, options and state left out) and knee", keys)
	}
	var x k6Export
	if err := json.Unmarshal(raw, &x); err != nil {
		t.Fatal(err)
	}
	checks := x.Metrics["checks"]
	dur := x.Metrics["http_req_duration"]
	g := x.RootGroup.Groups["g1"]
	for _, c := range []struct {
		what      string
		got, want any
	}{
		{"checks passes", checks["passes"], 6.0},
		{"checks fails", checks["fails"], 2.0},
		{"checks value (k6's rate, renamed)", checks["value"], 0.75},
		{"checks rate (moved to value)", checks["rate"], nil},
		{"checks thresholds", checks["thresholds"], map[string]any{"rate>0.5": false}},
		{"http_req_duration thresholds (true: crossed)", dur["thresholds"], map[string]any{"max<0.000001": true, "p(95)<60000": false}},
		{"http_reqs count", x.Metrics["http_reqs"]["count"], 4.0},
		{"iterations count", x.Metrics["iterations"]["count"], 4.0},
		{"http_req_duration count", dur["count"], 4.0},
		{"group g1 path", g.Path, "::g1"},
		{"check odd", g.Checks["odd"].Passes*10 + g.Checks["odd"].Fails, int64(22)},
		{"check ok", g.Checks["ok"].Passes*10 + g.Checks["ok"].Fails, int64(40)},
		{"check odd path", g.Checks["odd"].Path, "::g1::odd"},
		{"check odd id", g.Checks["odd"].ID, md5hex("::g1::odd")},
		{"root checks", len(x.RootGroup.Checks), 0},
		{"knee's requests", x.Knee.Requests, int64(4)},
		{"knee's format_version", x.Knee.FormatVersion, ExportFormatVersion},
	} {
		if !jsonEqual(c.got, c.want) {
			t.Errorf("%s = %v; want %v", c.what, c.got, c.want)
		}
	}
	if lo, hi := dur["min"].(float64), dur["max"].(float64); !(lo > 0 && lo <= dur["med"].(float64) && dur["med"].(float64) <= hi) {
		t.Errorf("http_req_duration min %v med %v max %v: not in order", dur["min"], dur["med"], hi)
	}

	// Each metric's fields are those of k6's own file for a metric of its
	// kind (../shared/testdata/k6/summary.json, a real run with the same
	// summaryTrendStats), thresholds aside.
	real, err := os.ReadFile(k6Dir + "summary.json")
	if errors.Is(err, os.ErrNotExist) {
		t.Skipf("SKIP: the comparison with k6's own file: %ssummary.json is missing: ../shared is not beside this checkout", k6Dir)
	}
	var k6 k6Export
	if err := json.Unmarshal(real, &k6); err != nil {
		t.Fatal(err)
	}
	compared := 0
	for name, want := range k6.Metrics {
		got, ok := x.Metrics[name]
		if !ok {
			continue
		}
		compared++
		if g, w := fieldNames(got), fieldNames(want); g != w {
			t.Errorf("%s: fields %s; k6's file has %s", name, g, w)
		}
	}
	if compared < 10 {
		t.Errorf("%d metrics compared with k6's file; want at least 10 (http_req_*, data_*, iterations, vus...)", compared)
	}
}

// fieldNames are a metric's fields but thresholds, sorted and joined.
func fieldNames(m map[string]any) string {
	var ks []string
	for k := range m {
		if k != "thresholds" {
			ks = append(ks, k)
		}
	}
	slices.Sort(ks)
	return strings.Join(ks, " ")
}

// jsonEqual compares decoded JSON values (and plain Go values) by their JSON.
func jsonEqual(a, b any) bool {
	if fa, ok := a.(float64); ok {
		if fb, ok := b.(float64); ok {
			return math.Abs(fa-fb) < 1e-9
		}
	}
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}
