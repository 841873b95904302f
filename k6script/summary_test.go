package k6script

import (
	"context"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/knee-dev/knee/analyze"
	"github.com/knee-dev/knee/load"
)

// A Trend's summary values are k6's columns (metrics.GetResolversForTrendColumns):
// avg, min, med, max, count and p(N) interpolated between the sorted
// values; every one 0 with no values. Expected values by hand.
func TestSummaryTrendValues(t *testing.T) {
	for _, tt := range []struct {
		values []float64
		stat   string
		want   float64
	}{
		{[]float64{10, 20, 30, 40}, "avg", 25},
		{[]float64{10, 20, 30, 40}, "min", 10},
		{[]float64{10, 20, 30, 40}, "max", 40},
		{[]float64{10, 20, 30, 40}, "med", 25},   // rank 1.5
		{[]float64{10, 20, 30, 40}, "p(90)", 37}, // rank 2.7: 30 + 0.7*10
		{[]float64{40, 10, 30, 20}, "p(99.9)", 39.97},
		{[]float64{10, 20, 30, 40}, "p(0)", 10},
		{[]float64{10, 20, 30, 40}, "count", 4},
		{nil, "min", 0},
		{nil, "p(95)", 0},
		{nil, "count", 0},
	} {
		s := &k6Sink{kind: KindTrend, keep: TrendKeep}
		for _, v := range tt.values {
			s.add(v)
		}
		if got := trendValues(s, []string{tt.stat})[tt.stat]; math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("%v %s = %g; want %g", tt.values, tt.stat, got, tt.want)
		}
	}
}

// A threshold key names its series as k6's AddSubmetric does: the
// criteria trimmed as a whole, not rewritten.
func TestK6SeriesName(t *testing.T) {
	for _, tt := range []struct{ key, want string }{
		{"http_req_duration", "http_req_duration"},
		{" checks ", "checks"},
		{"http_reqs{status: 404}", "http_reqs{status: 404}"},
		{"http_reqs{ status:200,method:GET }", "http_reqs{status:200,method:GET}"},
	} {
		if got := k6SeriesName(tt.key); got != tt.want {
			t.Errorf("%q: %q; want %q", tt.key, got, tt.want)
		}
	}
}

// summaryTrendStats takes k6's columns; anything else is refused before
// the test, as k6 refuses it.
func TestSummaryTrendStatsOption(t *testing.T) {
	for _, tt := range []struct {
		json string
		bad  string // in the error; "" when accepted
	}{
		{`{"summaryTrendStats": ["avg", "min", "med", "max", "count", "p(99.99)", "p(0)", "p(100)"]}`, ""},
		{`{"summaryTrendStats": ["p(101)"]}`, `"p(101)"`},
		{`{"summaryTrendStats": ["p(x)"]}`, `"p(x)"`},
		{`{"summaryTrendStats": ["mean"]}`, `"mean"`},
		{`{"summaryTimeUnit": "weeks"}`, ""}, // k6 passes the script's on as written
	} {
		_, err := DecodeOptions([]byte(tt.json))
		if (err != nil) != (tt.bad != "") || err != nil && !strings.Contains(err.Error(), tt.bad) {
			t.Errorf("%s: %v; want an error naming %q", tt.json, err, tt.bad)
		}
	}
}

// HandleSummary reads handleSummary's result as k6 does: an object of
// strings and ArrayBuffers (in key order); null, undefined or an
// exception is k6's default summary; other values are errors; past
// handleSummaryTimeout it is interrupted.
func TestHandleSummaryResult(t *testing.T) {
	for _, tt := range []struct {
		name, body string
		outputs    string // path=data;...
		dflt       bool
		exception  string
		err        string
	}{
		{"strings", "return {stdout: 'a', 'x/y.json': JSON.stringify({n: data.state.testRunDurationMs})};", "stdout=a;x/y.json={\"n\":1500}", false, "", ""},
		{"an ArrayBuffer", "return {stderr: new Uint8Array([104, 105]).buffer};", "stderr=hi", false, "", ""},
		{"empty", "return {};", "", false, "", ""},
		{"undefined", "", "", true, "", ""},
		{"null", "return null;", "", true, "", ""},
		{"throws", "throw new Error('boom');", "", true, "boom", ""},
		{"a number", "return {stdout: 1};", "", false, "", "it needs to be a string or ArrayBuffer"},
		{"a string", "return 'text';", "", false, "", "should return a map with string keys"},
		{"too long", "for (;;) {}", "", false, "", "handleSummary() execution timed out after 50ms"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := writeScript(t, "s.js", map[string]string{"s.js": "export const options = {handleSummaryTimeout: '50ms'};\n" +
				"export default function () {}\nexport function handleSummary(data) { " + tt.body + " }\n"})
			s, err := Load(context.Background(), path, Config{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			res, err := s.HandleSummary(context.Background(), s.SummaryData(SummaryInput{Duration: 1500 * time.Millisecond}))
			if tt.err != "" {
				var te *TimeoutError
				if err == nil || !strings.Contains(err.Error(), tt.err) || strings.Contains(tt.err, "timed out") && !errors.As(err, &te) {
					t.Fatalf("error %v; want one saying %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var outs []string
			for _, o := range res.Outputs {
				outs = append(outs, o.Path+"="+string(o.Data))
			}
			if got := strings.Join(outs, ";"); got != tt.outputs || res.Default != tt.dflt {
				t.Errorf("outputs %q, default %v; want %q, %v", got, res.Default, tt.outputs, tt.dflt)
			}
			if (res.Exception != nil) != (tt.exception != "") || res.Exception != nil && !strings.Contains(res.Exception.Error(), tt.exception) {
				t.Errorf("exception %v; want %q", res.Exception, tt.exception)
			}
		})
	}
}

// With no run, the data has no metrics, an empty root group (k6's id
// of the path "", the MD5 of nothing) and k6's default options.
func TestSummaryDataEmpty(t *testing.T) {
	path := writeScript(t, "s.js", map[string]string{"s.js": "export default function () {}\n"})
	s, err := Load(context.Background(), path, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	d := s.SummaryData(SummaryInput{StdoutTTY: true})
	rg := d["root_group"].(SummaryGroup)
	opts := d["options"].(map[string]any)
	state := d["state"].(map[string]any)
	_, hasSetup := d["setup_data"]
	if len(d["metrics"].(map[string]any)) != 0 || rg.ID != "d41d8cd98f00b204e9800998ecf8427e" || rg.Path != "" || len(rg.Groups) != 0 || len(rg.Checks) != 0 ||
		strings.Join(opts["summaryTrendStats"].([]string), ",") != "avg,min,med,max,p(90),p(95)" || opts["summaryTimeUnit"] != "" ||
		state["isStdOutTTY"] != true || state["isStdErrTTY"] != false || hasSetup {
		t.Errorf("data %v", d)
	}
}

// A metric a threshold names is in data.metrics even without values, as
// k6 marks it observed; its thresholds carry their verdicts, keyed by the
// expression as written.
func TestSummaryDataThresholds(t *testing.T) {
	path := writeScript(t, "s.js", map[string]string{"s.js": "export default function () {}\n"})
	s, err := Load(context.Background(), path, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, tt := range []struct {
		name    string
		in      SummaryInput
		metric  string
		values  map[string]float64
		verdict map[string]bool // expression -> ok; nil: no thresholds entry
	}{
		{"a failed threshold", SummaryInput{Thresholds: map[string][]string{"checks": {"rate>0.5"}},
			Results: []analyze.ThresholdResult{{Expr: "checks: rate>0.5", Pass: false}}},
			"checks", map[string]float64{"rate": 0, "passes": 0, "fails": 0}, map[string]bool{"rate>0.5": false}},
		{"a submetric, as written", SummaryInput{Thresholds: map[string][]string{"http_reqs{ status: 200 }": {"count>=0 "}},
			Results: []analyze.ThresholdResult{{Expr: "http_reqs{ status: 200 }: count>=0", Pass: true}}},
			"http_reqs{status: 200}", map[string]float64{"count": 0, "rate": 0}, map[string]bool{"count>=0 ": true}},
		{"a threshold not judged here", SummaryInput{Thresholds: map[string][]string{"iterations": {"count>1"}}},
			"iterations", map[string]float64{"count": 0, "rate": 0}, nil},
		{"dropped_iterations named by a threshold", SummaryInput{Thresholds: map[string][]string{"dropped_iterations": {"count<1"}}},
			"dropped_iterations", map[string]float64{"count": 0, "rate": 0}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m, ok := s.SummaryData(tt.in)["metrics"].(map[string]any)[tt.metric].(map[string]any)
			if !ok {
				t.Fatalf("no %s in data.metrics", tt.metric)
			}
			if got := m["values"].(map[string]float64); !reflect.DeepEqual(got, tt.values) {
				t.Errorf("values %v; want %v", got, tt.values)
			}
			th, _ := m["thresholds"].(map[string]any)
			if len(th) != len(tt.verdict) {
				t.Fatalf("thresholds %v; want %v", th, tt.verdict)
			}
			for expr, ok := range tt.verdict {
				if e, _ := th[expr].(map[string]any); e == nil || e["ok"] != ok {
					t.Errorf("thresholds[%q] = %v; want ok %v", expr, th[expr], ok)
				}
			}
		})
	}
}

// data.metrics' contains is k6's for each metric (metrics/builtin.go,
// k6/metrics): data for the bytes of data_sent and data_received, time
// for durations and for a Trend declared with isTime, default otherwise,
// as jslib's textSummary formats each (1.6 kB, 2.1ms, 4).
func TestSummaryDataContains(t *testing.T) {
	srv := okServer(t)
	s := loadScript(t, `import http from 'k6/http';
import { Counter, Trend } from 'k6/metrics';
const waits = new Trend('waits', true);
const sizes = new Trend('sizes');
const orders = new Counter('orders');
export default function () {
  http.get(__ENV.BASE + '/');
  waits.add(5);
  sizes.add(7);
  orders.add(1);
}`, map[string]string{"BASE": srv.URL})
	it := s.Iteration("x", ScenarioPlan{Exec: "default"}, nil).(load.SelfRecording)
	it.DoRecord(context.Background(), load.Start{Scenario: "x", VU: 1, Called: time.Now()}, &samples{})
	metrics := s.SummaryData(SummaryInput{Duration: time.Second})["metrics"].(map[string]any)
	for _, tt := range []struct{ metric, want string }{
		{"data_sent", "data"},
		{"data_received", "data"},
		{"http_req_duration", "time"},
		{"iteration_duration", "time"},
		{"http_reqs", "default"},
		{"iterations", "default"},
		{"http_req_failed", "default"},
		{"waits", "time"},
		{"sizes", "default"},
		{"orders", "default"},
	} {
		m, ok := metrics[tt.metric].(map[string]any)
		if !ok {
			t.Errorf("no %s in data.metrics", tt.metric)
			continue
		}
		if m["contains"] != tt.want {
			t.Errorf("%s contains %v; want %q", tt.metric, m["contains"], tt.want)
		}
	}
}

// k6 sums http_req_duration{expected_response:true} in every test (v1.8.1
// internal/metrics/engine/engine.go), so handleSummary's data has it once
// a request was expected, with only those requests; a test with none has
// no such entry, as k6 marks a submetric observed at its first value. By
// hand: okServer answers / with 200 and /missing with 404.
func TestSummaryDataExpectedResponse(t *testing.T) {
	srv := okServer(t)
	const name = "http_req_duration{expected_response:true}"
	for _, tt := range []struct {
		paths []string
		count float64 // 0: no entry
	}{
		{[]string{"/", "/missing", "/"}, 2},
		{[]string{"/missing"}, 0},
	} {
		t.Run(strings.Join(tt.paths, ","), func(t *testing.T) {
			s := loadScript(t, `import http from 'k6/http';
export default function () { for (const p of __ENV.PATHS.split(',')) http.get(__ENV.BASE + p); }`,
				map[string]string{"BASE": srv.URL, "PATHS": strings.Join(tt.paths, ",")})
			it := s.Iteration("x", ScenarioPlan{Exec: "default"}, nil).(load.SelfRecording)
			it.DoRecord(context.Background(), load.Start{Scenario: "x", VU: 1, Called: time.Now()}, &samples{})
			metrics := s.SummaryData(SummaryInput{Duration: time.Second})["metrics"].(map[string]any)
			m, ok := metrics[name].(map[string]any)
			if tt.count == 0 {
				if ok {
					t.Errorf("%s = %v; want no entry", name, m)
				}
				return
			}
			if !ok {
				t.Fatalf("no %s in data.metrics", name)
			}
			if st, _ := s.k6.Stat(name); m["type"] != "trend" || m["contains"] != "time" || float64(st.Count) != tt.count {
				t.Errorf("%s = %v of %d values; want a time trend of %v", name, m, st.Count, tt.count)
			}
		})
	}
}
