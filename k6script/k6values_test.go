package k6script

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

// A custom metric's values in handleSummary's data, the k6 block and the
// script's metric line are k6 v1.8.1's (metrics/sink.go, js/summary.go),
// worked out by hand from the values one iteration adds. A Gauge's max
// starts at 0 in k6's GaugeSink, so a Gauge of negative values has max 0;
// its min is the least value.
func TestCustomMetricValuesAsK6(t *testing.T) {
	s := loadScript(t, `import { Trend, Counter, Rate, Gauge } from 'k6/metrics';
const t10 = new Trend('t10');
const dup = new Trend('dup');
const one = new Trend('one');
const c = new Counter('c');
const r = new Rate('r');
const neg = new Gauge('neg');
const pos = new Gauge('pos');
export default function () {
  for (let i = 10; i >= 1; i--) t10.add(i);
  [3, 2, 1, 2, 2].forEach((v) => dup.add(v));
  one.add(7);
  c.add(5); c.add(10);
  r.add(5); r.add(0); r.add(-0.5); r.add(false);
  neg.add(-5); neg.add(-3);
  pos.add(3); pos.add(1); pos.add(2);
}`, nil)
	iterateInto(t, s, NewCSVOutput(nopCloser{&bytes.Buffer{}}))
	stats := []string{"avg", "min", "med", "max", "p(90)", "p(95)", "p(99.9)", "count"}
	s.Options.SummaryTrendStats = stats
	metrics := s.SummaryData(SummaryInput{Duration: 2 * time.Second})["metrics"].(map[string]any)
	for _, tt := range []struct {
		metric string
		want   map[string]float64
	}{
		// 1..10: rank p*(n-1); p(90) 8.1 -> 9 + 0.1, p(95) 8.55 -> 9.55, p(99.9) 8.991 -> 9.991.
		{"t10", map[string]float64{"avg": 5.5, "min": 1, "med": 5.5, "max": 10, "p(90)": 9.1, "p(95)": 9.55, "p(99.9)": 9.991, "count": 10}},
		// 1 2 2 2 3: p(90) rank 3.6 -> 2 + 0.6, p(95) 3.8 -> 2.8, p(99.9) 3.996 -> 2.996.
		{"dup", map[string]float64{"avg": 2, "min": 1, "med": 2, "max": 3, "p(90)": 2.6, "p(95)": 2.8, "p(99.9)": 2.996, "count": 5}},
		{"one", map[string]float64{"avg": 7, "min": 7, "med": 7, "max": 7, "p(90)": 7, "p(95)": 7, "p(99.9)": 7, "count": 1}},
		{"c", map[string]float64{"count": 15, "rate": 7.5}}, // 15 over 2 s
		{"r", map[string]float64{"rate": 0.5, "passes": 2, "fails": 2}},
		{"neg", map[string]float64{"value": -3, "min": -5, "max": 0}},
		{"pos", map[string]float64{"value": 2, "min": 1, "max": 3}},
	} {
		m, ok := metrics[tt.metric].(map[string]any)
		if !ok {
			t.Errorf("no %s in data.metrics", tt.metric)
			continue
		}
		got := m["values"].(map[string]float64)
		if len(got) != len(tt.want) {
			t.Errorf("%s values %v; want %v", tt.metric, got, tt.want)
		}
		for k, want := range tt.want {
			if v, ok := got[k]; !ok || !closeTo(v, want) {
				t.Errorf("%s %s = %v; want %g", tt.metric, k, got[k], want)
			}
		}
	}
	// The script's own metric line and the k6 block read the same values.
	for _, r := range s.Metrics(nil) {
		if r.Name == "neg" && (r.Value != -3 || r.Min != -5 || r.Max != 0) {
			t.Errorf("neg in metrics.json: value %g min %g max %g; want -3, -5, 0", r.Value, r.Min, r.Max)
		}
	}
	if st, _ := s.k6.Stat("neg"); st.Max != 0 || st.Min != -5 {
		t.Errorf("neg's k6 stat: min %g max %g; want -5 and 0", st.Min, st.Max)
	}
}

func closeTo(a, b float64) bool {
	d := a - b
	return d < 1e-9 && d > -1e-9
}

// k6's outputs write a sample's value as it was added (csv.SampleToRow's
// %f): a Rate's 5 is 5.000000, -0.5 is -0.500000, false is 0.000000,
// where its sink counts every non-zero value as a pass.
func TestCSVRateRowKeepsItsValue(t *testing.T) {
	s := loadScript(t, `import { Rate } from 'k6/metrics';
const r = new Rate('r');
export default function () { r.add(5); r.add(-0.5); r.add(false); r.add(true); }`, nil)
	var buf bytes.Buffer
	iterateInto(t, s, NewCSVOutput(nopCloser{&buf}))
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, row := range rows[1:] {
		if row[0] == "r" {
			got = append(got, row[2])
		}
	}
	if want := []string{"5.000000", "-0.500000", "0.000000", "1.000000"}; !reflect.DeepEqual(got, want) {
		t.Errorf("r rows %v; want %v", got, want)
	}
	if st, _ := s.k6.Stat("r"); st.Trues != 3 || st.Count != 4 {
		t.Errorf("r: %d of %d passes; want 3 of 4", st.Trues, st.Count)
	}
}

// At the end of an iteration k6's runFn sends data_sent and
// data_received (0 without a request: k6's summary shows data_sent 0 B),
// then iteration_duration and iterations, all four at the iteration's end
// (internal/js/runner.go); setup() and teardown() send the first two.
func TestIterationEndRowsAsK6Writes(t *testing.T) {
	s := loadScript(t, `export function setup() {}
export default function () {}
export function teardown() {}`, nil)
	var buf bytes.Buffer
	o := NewCSVOutput(nopCloser{&buf})
	s.SetOutput(o)
	if err := s.Setup(context.Background()); err != nil {
		t.Fatal(err)
	}
	iterateInto(t, s, o) // closes o after the iteration
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var got [][3]string // metric, value, group
	for _, row := range rows[1:] {
		value := row[2]
		if row[0] == "iteration_duration" {
			value = "d"
		}
		got = append(got, [3]string{row[0], value, row[7]})
	}
	want := [][3]string{
		{"data_sent", "0.000000", "::setup"}, {"data_received", "0.000000", "::setup"},
		{"data_sent", "0.000000", ""}, {"data_received", "0.000000", ""},
		{"iteration_duration", "d", ""}, {"iterations", "1.000000", ""},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("rows %v; want %v", got, want)
	}
	if rows[3][1] != rows[6][1] {
		t.Errorf("data_sent at %s, iterations at %s; want one time", rows[3][1], rows[6][1])
	}
	metrics := s.SummaryData(SummaryInput{Duration: time.Second})["metrics"].(map[string]any)
	for _, name := range []string{"data_sent", "data_received"} {
		m, _ := metrics[name].(map[string]any)
		if m == nil || !reflect.DeepEqual(m["values"], map[string]float64{"count": 0, "rate": 0}) {
			t.Errorf("%s in data.metrics: %v; want count 0, rate 0", name, m)
		}
	}
}

// k6.json's values are k6's for each built-in, under k6's names (a
// Counter's count is the sum of what was added, its rate per second of
// the test run), beside the number of samples. By hand: one iteration of
// 100 ms-ish, so iterations count 1 and rate 1 / 4 s = 0.25.
func TestK6BuiltinsValues(t *testing.T) {
	s := loadScript(t, `export default function () {}`, nil)
	iterateInto(t, s, NewCSVOutput(nopCloser{&bytes.Buffer{}}))
	s.Options.SummaryTrendStats = []string{"count", "p(50)"}
	got := map[string]K6Stat{}
	for _, st := range s.K6Builtins(4 * time.Second) {
		got[st.Name] = st
	}
	for _, tt := range []struct {
		metric, contains string
		values           map[string]float64
	}{
		{"iterations", "default", map[string]float64{"count": 1, "rate": 0.25}},
		{"data_sent", "data", map[string]float64{"count": 0, "rate": 0}},
	} {
		st := got[tt.metric]
		if st.Contains != tt.contains || !reflect.DeepEqual(st.Values, tt.values) {
			t.Errorf("%s: contains %q values %v; want %q %v", tt.metric, st.Contains, st.Values, tt.contains, tt.values)
		}
	}
	d := got["iteration_duration"]
	if len(d.Values) != 2 || d.Values["count"] != 1 || d.Values["p(50)"] != d.Max || d.Contains != "time" {
		t.Errorf("iteration_duration %+v; want count 1 and p(50) its one value, contains time", d)
	}
}

// k6 hands handleSummary its data as JavaScript values, so a Trend given
// Infinity and -Infinity has avg NaN (the sum Infinity - Infinity), min
// -Infinity and max Infinity, and its median the middle of the sorted
// -Infinity, 1, Infinity: 1 (metrics/sink.go). By hand.
func TestHandleSummaryNonFiniteValues(t *testing.T) {
	s := loadScript(t, `import { Trend } from 'k6/metrics';
const t = new Trend('t');
export const options = { summaryTrendStats: ['avg', 'min', 'max', 'med', 'count'] };
export default function () { t.add(1); t.add(Infinity); t.add(-Infinity); }
export function handleSummary(data) {
  const v = data.metrics.t.values;
  return { stdout: ['avg', 'min', 'max', 'med', 'count'].map((k) => k + '=' + v[k]).join(' ') };
}`, nil)
	iterateInto(t, s, NewCSVOutput(nopCloser{&bytes.Buffer{}}))
	res, err := s.HandleSummary(context.Background(), s.SummaryData(SummaryInput{Duration: time.Second}))
	if err != nil {
		t.Fatal(err)
	}
	want := "avg=NaN min=-Infinity max=Infinity med=1 count=3"
	if len(res.Outputs) != 1 || string(res.Outputs[0].Data) != want {
		t.Errorf("outputs %+v; want stdout %q", res.Outputs, want)
	}
}

// k6's arrival-rate executors send dropped_iterations as one sample of 1
// per dropped iteration, with the test-wide tags and the scenario's name
// (lib/executor getMetricTags): a row each in the outputs, a Counter in
// handleSummary's data whose rate is over the test run. By hand: 3 drops
// over 2 s, rate 1.5.
func TestDroppedIterationsAsK6Sends(t *testing.T) {
	s := loadScript(t, `export const options = { tags: { env: 'ci' } };
export default function () {}`, nil)
	var buf bytes.Buffer
	o := NewCSVOutput(nopCloser{&buf})
	s.SetOutput(o)
	s.RecordDropped("open", 3)
	if err := o.Close(); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var got [][4]string // metric, value, scenario, extra_tags
	for _, row := range rows[1:] {
		got = append(got, [4]string{row[0], row[2], row[11], row[17]})
	}
	one := [4]string{"dropped_iterations", "1.000000", "open", "env=ci"}
	if want := [][4]string{one, one, one}; !reflect.DeepEqual(got, want) {
		t.Errorf("rows %v; want %v", got, want)
	}
	m, _ := s.SummaryData(SummaryInput{Duration: 2 * time.Second})["metrics"].(map[string]any)["dropped_iterations"].(map[string]any)
	if m == nil || m["type"] != "counter" || !reflect.DeepEqual(m["values"], map[string]float64{"count": 3, "rate": 1.5}) {
		t.Errorf("dropped_iterations in data.metrics: %v; want a counter of count 3, rate 1.5", m)
	}
}

// k6's JSON output writes a sample's value whole (a float64 in its
// Point), its CSV with %f (6 decimals). By hand: 1.23456789 is
// 1.23456789 in the JSON, 1.234568 in the CSV; 1e-7 is 0.000000 there.
func TestOutputValuePrecision(t *testing.T) {
	src := `import { Trend } from 'k6/metrics';
const t = new Trend('t');
export default function () { t.add(1.23456789); t.add(1e-7); }`
	var js, cs bytes.Buffer
	iterateInto(t, loadScript(t, src, nil), NewJSONOutput(nopCloser{&js}))
	iterateInto(t, loadScript(t, src, nil), NewCSVOutput(nopCloser{&cs}))
	var points []float64
	for _, line := range strings.Split(strings.TrimSpace(js.String()), "\n") {
		var l struct {
			Type, Metric string
			Data         struct{ Value float64 }
		}
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatal(err)
		}
		if l.Type == "Point" && l.Metric == "t" {
			points = append(points, l.Data.Value)
		}
	}
	if want := []float64{1.23456789, 1e-7}; !reflect.DeepEqual(points, want) {
		t.Errorf("JSON points %v; want %v", points, want)
	}
	rows, err := csv.NewReader(&cs).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, row := range rows[1:] {
		if row[0] == "t" {
			got = append(got, row[2])
		}
	}
	if want := []string{"1.234568", "0.000000"}; !reflect.DeepEqual(got, want) {
		t.Errorf("CSV rows %v; want %v", got, want)
	}
}
