package cli

import (
	"crypto/md5"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// okMissingServer answers /ok 200 and anything else 404.
func okMissingServer(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/ok" {
			w.WriteHeader(http.StatusNotFound)
		}
		w.Write([]byte("x"))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// summaryData is the part of k6's handleSummary data the test reads.
type summaryData struct {
	Metrics map[string]struct {
		Type       string                       `json:"type"`
		Contains   string                       `json:"contains"`
		Values     map[string]float64           `json:"values"`
		Thresholds map[string]struct{ OK bool } `json:"thresholds"`
	} `json:"metrics"`
	RootGroup summaryGroup `json:"root_group"`
	Options   struct {
		SummaryTrendStats []string `json:"summaryTrendStats"`
		SummaryTimeUnit   string   `json:"summaryTimeUnit"`
		NoColor           bool     `json:"noColor"`
	} `json:"options"`
	State struct {
		IsStdOutTTY       bool    `json:"isStdOutTTY"`
		TestRunDurationMs float64 `json:"testRunDurationMs"`
	} `json:"state"`
	SetupData map[string]int `json:"setup_data"`
}

type summaryGroup struct {
	Name, Path, ID string
	Groups         []summaryGroup
	Checks         []struct {
		Name, Path, ID string
		Passes, Fails  int64
	}
}

func md5hex(s string) string { h := md5.Sum([]byte(s)); return hex.EncodeToString(h[:]) }

// handleSummary gets k6's data, built from the run's samples: by hand,
// 3 iterations each GET /ok in group g (check 'is 200' passes) and GET
// /missing (404) at the top, where 'is 404' passes and 'never' fails;
// so 6 requests, 3 of them failed (http_req_failed passes 3, fails 3),
// checks 6 passes and 3 fails, the Trend mine 5, 15, 25. Its outputs go
// to stdout (nothing else does: knee's summary goes to stderr), stderr
// and a file relative to the working directory.
func TestScriptHandleSummaryData(t *testing.T) {
	srv := okMissingServer(t)
	script := writeJS(t, `import http from 'k6/http';
import { check, group } from 'k6';
import { Trend } from 'k6/metrics';
const mine = new Trend('mine');
export const options = { vus: 1, iterations: 3,
  summaryTrendStats: ['avg', 'min', 'max', 'med', 'p(90)', 'p(95)', 'count'], summaryTimeUnit: 'ms',
  thresholds: { checks: ['rate>0.9'], 'http_reqs{status: 404}': ['count==3'] } };
export function setup() { return { a: 1 }; }
export default function () {
  group('g', () => { check(http.get(__ENV.BASE + '/ok'), { 'is 200': (r) => r.status === 200 }); });
  check(http.get(__ENV.BASE + '/missing'), { 'is 404': (r) => r.status === 404, 'never': () => false });
  mine.add(__ITER * 10 + 5);
}
export function handleSummary(data) {
  return { stdout: JSON.stringify(data), stderr: 'HS-STDERR\n', 'sum.txt': 'iterations ' + data.metrics.iterations.values.count };
}
`)
	dir := t.TempDir()
	t.Chdir(dir)
	csvPath := filepath.Join(dir, "k6.csv")
	code, out, stderr := runKnee(t, "run", script, "-e", "BASE="+srv.URL, "--out", filepath.Join(dir, "runs"), "--out", "csv="+csvPath, "--quiet")
	if code != ExitThresholds {
		t.Fatalf("exit %d; want %d (checks rate>0.9 fails)\n%s\n%s", code, ExitThresholds, out, stderr)
	}
	var d summaryData
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("stdout is not handleSummary's JSON alone: %v\n%s", err, out)
	}
	if !strings.Contains(stderr, "run directory:") || !strings.Contains(stderr, "HS-STDERR") {
		t.Errorf("stderr lacks knee's summary or handleSummary's stderr:\n%s", stderr)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "sum.txt")); err != nil || string(b) != "iterations 3" {
		t.Errorf("sum.txt: %q, %v; want \"iterations 3\"", b, err)
	}
	// http_req_duration's min, max and avg from the samples k6's CSV output holds.
	samples := csvValues(t, csvPath, "http_req_duration")
	lo, hi, sum := math.Inf(1), math.Inf(-1), 0.0
	for _, v := range samples {
		lo, hi, sum = math.Min(lo, v), math.Max(hi, v), sum+v
	}
	dur := d.Metrics["http_req_duration"]
	for _, tt := range []struct {
		what      string
		got, want float64
	}{
		{"http_reqs count", d.Metrics["http_reqs"].Values["count"], 6},
		{"http_reqs{status: 404} count", d.Metrics["http_reqs{status: 404}"].Values["count"], 3},
		{"iterations count", d.Metrics["iterations"].Values["count"], 3},
		{"checks passes", d.Metrics["checks"].Values["passes"], 6},
		{"checks fails", d.Metrics["checks"].Values["fails"], 3},
		{"checks rate", d.Metrics["checks"].Values["rate"], 6.0 / 9},
		{"http_req_failed passes", d.Metrics["http_req_failed"].Values["passes"], 3},
		{"http_req_failed fails", d.Metrics["http_req_failed"].Values["fails"], 3},
		{"mine min", d.Metrics["mine"].Values["min"], 5},
		{"mine max", d.Metrics["mine"].Values["max"], 25},
		{"mine avg", d.Metrics["mine"].Values["avg"], 15},
		{"mine med", d.Metrics["mine"].Values["med"], 15},
		{"mine p(90)", d.Metrics["mine"].Values["p(90)"], 23}, // rank 1.8: 15 + 0.8*10
		{"mine p(95)", d.Metrics["mine"].Values["p(95)"], 24}, // rank 1.9
		{"mine count", d.Metrics["mine"].Values["count"], 3},
		{"http_req_duration samples", float64(len(samples)), 6},
		{"http_req_duration min", dur.Values["min"], lo},
		{"http_req_duration max", dur.Values["max"], hi},
		{"http_req_duration avg", dur.Values["avg"], sum / 6},
		// A Counter's rate is its count over testRunDuration.
		{"http_reqs rate × duration", d.Metrics["http_reqs"].Values["rate"] * d.State.TestRunDurationMs / 1000, 6},
		{"setup_data.a", float64(d.SetupData["a"]), 1},
	} {
		if math.Abs(tt.got-tt.want) > 1e-6 {
			t.Errorf("%s = %g; want %g", tt.what, tt.got, tt.want)
		}
	}
	for _, tt := range []struct{ metric, typ, contains string }{
		{"http_req_duration", "trend", "time"}, {"mine", "trend", "default"}, {"http_reqs", "counter", "default"},
		{"checks", "rate", "default"}, {"iteration_duration", "trend", "time"},
	} {
		if m := d.Metrics[tt.metric]; m.Type != tt.typ || m.Contains != tt.contains {
			t.Errorf("%s: type %q contains %q; want %q %q", tt.metric, m.Type, m.Contains, tt.typ, tt.contains)
		}
	}
	if th := d.Metrics["checks"].Thresholds["rate>0.9"]; th.OK {
		t.Errorf("checks rate>0.9 ok; want failed (6 of 9 passed)")
	}
	if th, ok := d.Metrics["http_reqs{status: 404}"].Thresholds["count==3"]; !ok || !th.OK {
		t.Errorf("http_reqs{status: 404} count==3: %v, %v; want ok", th, ok)
	}
	if got := strings.Join(d.Options.SummaryTrendStats, ","); got != "avg,min,max,med,p(90),p(95),count" || d.Options.SummaryTimeUnit != "ms" {
		t.Errorf("options %+v; want the script's summaryTrendStats and summaryTimeUnit", d.Options)
	}
	// k6's ids are the MD5 of the path; the root's path is "" (d41d8cd9...).
	rg := d.RootGroup
	if rg.ID != "d41d8cd98f00b204e9800998ecf8427e" || len(rg.Groups) != 1 || len(rg.Checks) != 2 {
		t.Fatalf("root_group %+v; want id d41d8cd9..., one group, two checks", rg)
	}
	if g := rg.Groups[0]; g.Name != "g" || g.Path != "::g" || g.ID != md5hex("::g") || len(g.Checks) != 1 ||
		g.Checks[0].Path != "::g::is 200" || g.Checks[0].ID != md5hex("::g::is 200") || g.Checks[0].Passes != 3 {
		t.Errorf("group %+v; want g, ::g, with 'is 200' passed 3 times", g)
	}
	if c := rg.Checks[1]; c.Name != "never" || c.Path != "::never" || c.Passes != 0 || c.Fails != 3 {
		t.Errorf("root check %+v; want never, ::never, 0 passes, 3 fails", c)
	}
}

// csvValues are the values of metric's rows in k6's CSV output.
func csvValues(t *testing.T, path, metric string) []float64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var out []float64
	for _, r := range rows[1:] {
		if r[0] == metric {
			v, err := strconv.ParseFloat(r[2], 64)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, v)
		}
	}
	return out
}

// What handleSummary returns decides where knee's summary goes and the
// exit code: k6 prints its default summary on stdout when handleSummary
// throws (logging the exception) or returns null or undefined; an
// unwritable output or a result of the wrong type is a failure (exit 1).
func TestScriptHandleSummaryOutcomes(t *testing.T) {
	srv := okMissingServer(t)
	for _, tt := range []struct {
		name, body string
		code       int
		summaryOut bool   // knee's summary on stdout (else on stderr)
		stdout     string // handleSummary's stdout, when not knee's
		stderr     string
	}{
		{"throws", "throw new Error('boom');", ExitOK, true, "", "boom"},
		{"returns undefined", "return undefined;", ExitOK, true, "", ""},
		{"returns null", "return null;", ExitOK, true, "", ""},
		{"returns an empty object", "return {};", ExitOK, false, "", ""},
		{"returns an ArrayBuffer", "const b = new Uint8Array([104, 105]).buffer; return {stdout: b};", ExitOK, false, "hi", ""},
		{"returns a number", "return {stdout: 5};", ExitFailure, false, "", "it needs to be a string or ArrayBuffer"},
		{"returns an array", "return ['x'];", ExitFailure, false, "", "should return a map with string keys"},
		{"writes into a missing directory", "return {'nodir/s.txt': 'x', stdout: 'ok'};", ExitFailure, false, "ok", `could not write "nodir/s.txt"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			script := writeJS(t, "import http from 'k6/http';\nexport default function () { http.get(__ENV.BASE + '/ok'); }\n"+
				"export function handleSummary(data) { "+tt.body+" }\n")
			dir := t.TempDir()
			t.Chdir(dir)
			code, out, stderr := runKnee(t, "run", script, "-e", "BASE="+srv.URL, "--out", filepath.Join(dir, "runs"), "--quiet")
			if code != tt.code {
				t.Fatalf("exit %d; want %d\n%s\n%s", code, tt.code, out, stderr)
			}
			onOut, onErr := strings.Contains(out, "run directory:"), strings.Contains(stderr, "run directory:")
			if onOut != tt.summaryOut || onErr == tt.summaryOut {
				t.Errorf("knee's summary on stdout %v, on stderr %v; want on stdout %v\n%s\n%s", onOut, onErr, tt.summaryOut, out, stderr)
			}
			if !tt.summaryOut && out != tt.stdout {
				t.Errorf("stdout %q; want %q", out, tt.stdout)
			}
			if !strings.Contains(stderr, tt.stderr) {
				t.Errorf("stderr lacks %q:\n%s", tt.stderr, stderr)
			}
			if _, err := os.Stat(filepath.Join(dir, "nodir")); err == nil {
				t.Errorf("nodir was made")
			}
		})
	}
}
