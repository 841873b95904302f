package analyze_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/knee-dev/knee/analyze"
	"github.com/knee-dev/knee/record"
	"github.com/knee-dev/knee/rundir"
)

func TestParseThreshold(t *testing.T) {
	tests := []struct {
		expr string
		want analyze.Threshold
	}{
		{"p(95)<200ms", analyze.Threshold{Agg: analyze.AggPercentile, Pct: 95, Op: "<", Value: 200}},
		{"p(99)<1s", analyze.Threshold{Agg: analyze.AggPercentile, Pct: 99, Op: "<", Value: 1000}},
		{"p(99.9) <= 250", analyze.Threshold{Agg: analyze.AggPercentile, Pct: 99.9, Op: "<=", Value: 250}}, // bare = ms
		{"avg<800us", analyze.Threshold{Agg: analyze.AggAvg, Op: "<", Value: 0.8}},
		{"med<1500µs", analyze.Threshold{Agg: analyze.AggMed, Op: "<", Value: 1.5}},
		{"min>=2000ns", analyze.Threshold{Agg: analyze.AggMin, Op: ">=", Value: 0.002}},
		{"max<2s", analyze.Threshold{Agg: analyze.AggMax, Op: "<", Value: 2000}},
		{"max<1.5m", analyze.Threshold{Agg: analyze.AggMax, Op: "<", Value: 90000}},
		{"rate>190", analyze.Threshold{Agg: analyze.AggRate, Op: ">", Value: 190}},
		{"requests>=1000", analyze.Threshold{Agg: analyze.AggRequests, Op: ">=", Value: 1000}},
		{"errors<1%", analyze.Threshold{Agg: analyze.AggErrors, Op: "<", Value: 0.01}},
		{"errors<0.01", analyze.Threshold{Agg: analyze.AggErrors, Op: "<", Value: 0.01}},
		{"failed<2.5%", analyze.Threshold{Agg: analyze.AggFailed, Op: "<", Value: 0.025}},
		{"dropped_iterations==0", analyze.Threshold{Agg: analyze.AggDropped, Op: "==", Value: 0}},
		{"{name:GET /x}p(95)<100ms", analyze.Threshold{Select: analyze.Selector{Name: "GET /x"},
			Agg: analyze.AggPercentile, Pct: 95, Op: "<", Value: 100}},
		{"{scenario:open, name:GET /api/books/{isbn}}max!=5s", analyze.Threshold{
			Select: analyze.Selector{Scenario: "open", Name: "GET /api/books/{isbn}"},
			Agg:    analyze.AggMax, Op: "!=", Value: 5000}},
		{"{scenario:open}errors<5%", analyze.Threshold{Select: analyze.Selector{Scenario: "open"},
			Agg: analyze.AggErrors, Op: "<", Value: 0.05}},
	}
	for _, tt := range tests {
		got, err := analyze.ParseThreshold(tt.expr)
		if err != nil {
			t.Errorf("ParseThreshold(%q): %v", tt.expr, err)
			continue
		}
		tt.want.Expr = tt.expr
		if !closeTo(got.Value, tt.want.Value, 1e-12) {
			t.Errorf("ParseThreshold(%q).Value = %v, want %v", tt.expr, got.Value, tt.want.Value)
		}
		got.Value = tt.want.Value
		if got != tt.want {
			t.Errorf("ParseThreshold(%q) = %+v, want %+v", tt.expr, got, tt.want)
		}
	}
}

func TestParseThresholdErrors(t *testing.T) {
	tests := []struct{ expr, msg, fix string }{
		{"", "empty", "p(95)<200ms"},
		{"p(95)", "missing comparison", "< <= > >= == !="},
		{"p(95)<", "missing value", "duration"},
		{"p(95)<200xs", `unknown unit "xs"`, "200ms, 1.5s"},
		{"p(101)<1s", "not a number in (0, 100]", ""},
		{"p(95<1s", "not closed", ""},
		{"p99<1s", `unknown aggregate "p99"`, "use p(N)"},
		{"errors<1ms", `not "ms"`, "1%"},
		{"rate>fast", "not a number", "plain number"},
		{"{name:GET /x p(95)<1s", "unclosed", `{name:GET /x}`},
		{"{url:/x}p(95)<1s", `unknown tag "url"`, ""},
		{"{name}p(95)<1s", "no value", ""},
		{"{name:GET /x}errors<1%", "per scenario", "{scenario:...}"},
		{"{name:GET /x}dropped_iterations==0", "per scenario", ""},
	}
	for _, tt := range tests {
		_, err := analyze.ParseThreshold(tt.expr)
		var te *analyze.ThresholdError
		if !errors.As(err, &te) || !errors.Is(err, analyze.ErrThreshold) {
			t.Errorf("ParseThreshold(%q) error = %v; want a *ThresholdError", tt.expr, err)
			continue
		}
		if !strings.Contains(te.Msg, tt.msg) || !strings.Contains(te.Fix, tt.fix) || !strings.Contains(err.Error(), tt.expr) {
			t.Errorf("ParseThreshold(%q) = %q; want message %q and fix %q", tt.expr, err, tt.msg, tt.fix)
		}
	}
}

func TestParseThresholdsJoinsErrors(t *testing.T) {
	ts, err := analyze.ParseThresholds([]string{"p(95)<1s", "bogus", "rate>1", "max<"})
	if len(ts) != 2 || err == nil || !strings.Contains(err.Error(), `"bogus"`) || !strings.Contains(err.Error(), `"max<"`) {
		t.Errorf("got %d thresholds and %v; want 2 and both bad ones named", len(ts), err)
	}
}

func TestParseK6Thresholds(t *testing.T) {
	ts, err := analyze.ParseK6Thresholds(map[string][]string{
		"http_req_duration":              {"p(95)<200", "avg<100"},
		"http_req_duration{name:GET /x}": {"p(99)<1000"},
		"http_req_failed":                {"rate<0.01"},
		"http_reqs":                      {"rate>190", "count>=1000"},
		"dropped_iterations":             {"count==0"},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{ // canonical forms, in sorted metric order
		"dropped_iterations==0",
		"p(95)<200ms", "avg<100ms",
		"{name:GET /x}p(99)<1000ms",
		"failed<0.01",
		"rate>190", "requests>=1000",
	}
	if len(ts) != len(want) {
		t.Fatalf("got %d thresholds, want %d", len(ts), len(want))
	}
	for i, th := range ts {
		if th.String() != want[i] {
			t.Errorf("threshold %d = %q (expr %q), want %q", i, th.String(), th.Expr, want[i])
		}
	}
	if ts[4].Expr != "http_req_failed: rate<0.01" {
		t.Errorf("expr = %q, want the k6 form", ts[4].Expr)
	}

	bad := map[string][]string{
		"checks":             {"rate>0.9"},
		"http_req_failed":    {"count<1"},
		"dropped_iterations": {"rate<1"},
		"http_req_duration":  {"rate>1"},
		"http_req_duration{expected_response:true}": {"p(95)<1"},
	}
	_, err = analyze.ParseK6Thresholds(bad)
	for _, phrase := range []string{`metric "checks"`, `http_req_failed has no aggregate "count"`,
		`dropped_iterations has no aggregate "rate"`, `http_req_duration has no aggregate "rate"`, `unknown tag "expected_response"`} {
		if err == nil || !strings.Contains(err.Error(), phrase) {
			t.Errorf("error %v lacks %q", err, phrase)
		}
	}
}

// thresholdRun: 10 s, scenario "s" with GET /a (900 × 1 ms) and GET /b
// (90 × 10 ms, 10 × 1 s); 1,000 requests, 20 errors, 3 dropped.
func thresholdRun() *rundir.Dir {
	f := newFakeRun("open", 10, rundir.Scenario{Name: "s", Model: "open", TargetRate: 100})
	for sec := range 10 {
		f.add(sec, lat("s", "GET /a"), time.Millisecond, 90)
		f.add(sec, lat("s", "GET /b"), 10*time.Millisecond, 9)
		f.add(sec, lat("s", "GET /b"), time.Second, 1)
		f.count(sec, "s", record.Counters{Requests: 100, Errors: 2, Failed: 5}, 100)
	}
	f.count(5, "s", record.Counters{DroppedIterations: 3}, 100)
	return f.r
}

func TestEvaluateThresholds(t *testing.T) {
	// By hand. All 1,000: p(95) is rank 950 > 900, so 10 ms (10,000 µs lies in
	// the 8 µs bucket [10,000, 10,007]: 10.007 ms); p(99) rank 990 = 10.007 ms;
	// max 1 s (bucket [999,936, 1,000,447]: 1000.447 ms).
	// GET /b alone (100): p(95) rank 95 ≤ 90? no: 95 > 90, so 1000.447 ms.
	// Rate 1,000 / 10 s = 100; errors 20 / 1,000 = 0.02; failed 50 / 1,000 = 0.05; dropped 3.
	tests := []struct {
		expr  string
		value float64
		unit  string
		pass  bool
	}{
		{"p(95)<20ms", 10.007, "ms", true},
		{"p(99)<10ms", 10.007, "ms", false},
		{"max<=1s", 1000.447, "ms", false},
		{"med==1", 1, "ms", true},
		{"min>=1ms", 1, "ms", true},
		{"{name:GET /b}p(95)<100ms", 1000.447, "ms", false},
		{"{name:GET /a}p(95)<100ms", 1, "ms", true},
		{"rate>=100", 100, "req/s", true},
		{"rate>190", 100, "req/s", false},
		{"requests==1000", 1000, "requests", true},
		{"errors<1%", 0.02, "fraction", false},
		{"errors<5%", 0.02, "fraction", true},
		{"failed<5%", 0.05, "fraction", false},
		{"failed<=0.05", 0.05, "fraction", true},
		{"dropped_iterations==0", 3, "requests", false},
		{"{scenario:s}dropped_iterations<=3", 3, "requests", true},
	}
	r := thresholdRun()
	for _, tt := range tests {
		th, err := analyze.ParseThreshold(tt.expr)
		if err != nil {
			t.Fatal(err)
		}
		got := analyze.EvaluateThresholds(r, []analyze.Threshold{th})[0]
		if got.Expr != tt.expr || !closeTo(got.Value, tt.value, 1e-9) || got.Unit != tt.unit || got.Pass != tt.pass {
			t.Errorf("%s = %+v; want value %v %s, pass %v", tt.expr, got, tt.value, tt.unit, tt.pass)
		}
	}
}

func TestEvaluateThresholdsNothingMeasured(t *testing.T) {
	th, err := analyze.ParseThreshold("{name:GET /missing}p(95)<1s")
	if err != nil {
		t.Fatal(err)
	}
	res := analyze.EvaluateThresholds(thresholdRun(), []analyze.Threshold{th})
	if res[0].Pass || !strings.Contains(res[0].Note, "no requests matched {name:GET /missing}") {
		t.Errorf("got %+v; want a failure that says nothing matched", res[0])
	}
	if analyze.ThresholdsPass(res) {
		t.Error("ThresholdsPass = true with a failed threshold")
	}
}

func FuzzParseThreshold(f *testing.F) {
	for _, s := range []string{"p(95)<200ms", "{name:GET /b/{isbn}}p(99.9)<=1.5s", "errors<1%", "rate>190",
		"dropped_iterations==0", "{scenario:a,name:b}max!=2m", "avg<800us", "p(1e-3)>0", "{"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		th, err := analyze.ParseThreshold(expr)
		if err != nil {
			var te *analyze.ThresholdError
			if !errors.As(err, &te) {
				t.Fatalf("error %v is not a *ThresholdError", err)
			}
			return
		}
		// The canonical form parses back to the same threshold.
		back, err := analyze.ParseThreshold(th.String())
		if err != nil {
			t.Fatalf("canonical %q of %q does not parse: %v", th.String(), expr, err)
		}
		back.Expr = th.Expr
		if back != th {
			t.Fatalf("%q -> %+v -> %q -> %+v", expr, th, th.String(), back)
		}
	})
}

// Expressions read as k6 v1.8.1's thresholds_parser.go reads them: the
// first of <=, <, >=, >, ===, ==, != with text after it splits the
// expression, so JavaScript's === is == and "count!==3" is the method
// "count!", refused as k6 refuses it; the value is any float strconv
// reads. The expression keeps what the script wrote.
func TestParseK6ExprAsK6(t *testing.T) {
	for _, tt := range []struct {
		expr string
		op   string // "" when refused
		val  float64
		agg  string
	}{
		{"count===3", "==", 3, "count"},
		{"count==3", "==", 3, "count"},
		{"count<=3", "<=", 3, "count"},
		{"count!=3", "!=", 3, "count"},
		{"count!==3", "", 0, ""},
		{" p(95) < 200 ", "<", 200, "p"},
		{"rate>=.5", ">=", 0.5, "rate"},
		{"value == 1e2", "==", 100, "value"},
		{"avg<5.", "<", 5, "avg"},
		{"p(95)<=", "", 0, ""},
		{"p95<200", "", 0, ""},
		{"count>x", "", 0, ""},
		{"count", "", 0, ""},
	} {
		th, err := analyze.ParseK6Expr("c", tt.expr)
		if tt.op == "" {
			if err == nil {
				t.Errorf("%q: %+v; want it refused, as k6 refuses it", tt.expr, th)
			}
			continue
		}
		if err != nil || th.Op != tt.op || th.Expr != "c: "+strings.TrimSpace(tt.expr) || th.Value != tt.val || th.Agg != tt.agg {
			t.Errorf("%q: %+v, %v; want op %s value %v aggregate %s", tt.expr, th, err, tt.op, tt.val, tt.agg)
		}
	}
}

// Keys read as k6's ParseMetricName and AddSubmetric read them: the first
// ':' splits a tag (a URL's or a group's own colons stay in the value);
// the metric is the text before '{' as written (k6 finds no metric
// "http_reqs " and refuses it); '}' ends the key; a tag with nothing after
// its ':' is refused, one of spaces is the empty value; a later tag of the
// same key wins.
func TestParseK6Key(t *testing.T) {
	for _, tt := range []struct {
		key, metric string
		tags        map[string]string
		bad         bool
	}{
		{key: "http_req_duration", metric: "http_req_duration"},
		{key: "http_req_duration{expected_response:true}", metric: "http_req_duration", tags: map[string]string{"expected_response": "true"}},
		{key: "http_reqs{url:http://127.0.0.1:8080/a, method:GET}", metric: "http_reqs", tags: map[string]string{"url": "http://127.0.0.1:8080/a", "method": "GET"}},
		{key: "group_duration{group:::a::b}", metric: "group_duration", tags: map[string]string{"group": "::a::b"}},
		{key: `my_trend{"staticAsset":'yes'}`, metric: "my_trend", tags: map[string]string{"staticAsset": "yes"}},
		{key: "http_reqs{status}", bad: true},
		{key: "http_reqs{status:200", bad: true},
		{key: "http_reqs{}", bad: true},
		{key: "http_reqs {status:200}", metric: "http_reqs ", tags: map[string]string{"status": "200"}},
		{key: " http_reqs", metric: " http_reqs"},
		{key: "http_reqs{status:200} ", bad: true},
		{key: "http_reqs{status:200,}", bad: true},
		{key: "http_reqs{,status:200}", bad: true},
		{key: "http_reqs{status:}", bad: true},
		{key: "http_reqs{ }", bad: true},
		{key: "http_reqs{group: }", metric: "http_reqs", tags: map[string]string{"group": ""}},
		{key: "http_reqs{:x}", metric: "http_reqs", tags: map[string]string{"": "x"}},
		{key: "http_reqs{status:200,status:404}", metric: "http_reqs", tags: map[string]string{"status": "404"}},
		{key: "http_reqs{ status : ' 200' }", metric: "http_reqs", tags: map[string]string{"status": " 200"}},
	} {
		m, tags, err := analyze.ParseK6Key(tt.key)
		if tt.bad {
			if err == nil {
				t.Errorf("%s: no error", tt.key)
			}
			continue
		}
		if err != nil || m != tt.metric || !reflect.DeepEqual(tags, tt.tags) {
			t.Errorf("%s: %q %v %v; want %q %v", tt.key, m, tags, err, tt.metric, tt.tags)
		}
	}
}

// k6's end-of-test judgement: a Counter's count is its sum and its rate
// per second of the test; an empty Trend is judged on 0 (k6's sink gives
// 0), an empty Rate is not judged and does not fail; a wrong aggregate
// for the kind is refused as k6's Validate refuses it.
func TestEvaluateK6(t *testing.T) {
	parse := func(key, expr string) analyze.K6Expr {
		e, err := analyze.ParseK6Expr(key, expr)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	series := map[string]analyze.K6Series{
		"http_reqs":         {Kind: "counter", Count: 10, Sum: 10},
		"http_req_duration": {Kind: "trend", Time: true, Count: 4, Avg: 2.5, Pct: func(p float64) float64 { return p / 10 }},
		"empty_trend":       {Kind: "trend"},
		"empty_rate":        {Kind: "rate"},
	}
	ts := []analyze.K6Expr{
		parse("http_reqs", "count==10"), parse("http_reqs", "rate==2"), parse("http_req_duration", "p(95)<9.5"),
		parse("http_req_duration", "med==5"), parse("empty_trend", "p(95)<1"), parse("empty_trend", "max>0"), parse("empty_rate", "rate>0.9"),
	}
	got := analyze.EvaluateK6(ts, func(e analyze.K6Expr) analyze.K6Series { return series[e.Metric] }, 5*time.Second)
	want := []struct {
		pass  bool
		value float64
	}{{true, 10}, {true, 2}, {false, 9.5}, {true, 5}, {true, 0}, {false, 0}, {true, 0}}
	for i, w := range want {
		if got[i].Pass != w.pass || got[i].Value != w.value {
			t.Errorf("%s: pass %v value %g; want %v %g", got[i].Expr, got[i].Pass, got[i].Value, w.pass, w.value)
		}
	}
	if err := analyze.CheckK6Agg(parse("http_reqs", "p(95)<1"), "counter"); err == nil || !strings.Contains(err.Error(), "count, rate") {
		t.Errorf("p(95) on a counter: %v; want refused naming count, rate", err)
	}
}
