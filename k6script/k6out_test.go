package k6script

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/knee-dev/knee/load"
	"github.com/knee-dev/knee/request"
)

// The JSON output declares a custom metric as k6 does: its type, and
// contains "time" for a Trend made with new Trend(name, true), else
// "default"; then writes one Point per add, with its tags. By hand: one
// iteration adds 12.5 ms to lat, 3 to n and a check that passes.
func TestJSONOutputDeclaresCustomMetrics(t *testing.T) {
	s := loadScript(t, `import { Trend, Counter } from 'k6/metrics';
import { check } from 'k6';
const lat = new Trend('lat', true);
const n = new Counter('n');
export default function () {
  lat.add(12.5, { step: 'a' });
  n.add(3);
  check(1, { 'one': (x) => x === 1 });
}`, nil)
	var buf bytes.Buffer
	o := NewJSONOutput(nopCloser{&buf})
	s.SetOutput(o)
	it := s.Iteration("s", ScenarioPlan{Exec: "default"}, nil).(load.SelfRecording)
	var got samples
	it.DoRecord(context.Background(), load.Start{Scenario: "s", VU: 1, Called: time.Now()}, &got)
	if err := o.Close(); err != nil {
		t.Fatal(err)
	}
	declared := map[string][2]string{}
	points := map[string][]float64{}
	tags := map[string]map[string]any{}
	for _, line := range bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n")) {
		var l struct {
			Type, Metric string
			Data         map[string]any
		}
		if err := json.Unmarshal(line, &l); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		switch l.Type {
		case "Metric":
			declared[l.Metric] = [2]string{l.Data["type"].(string), l.Data["contains"].(string)}
		case "Point":
			points[l.Metric] = append(points[l.Metric], l.Data["value"].(float64))
			tags[l.Metric], _ = l.Data["tags"].(map[string]any)
		}
	}
	for name, want := range map[string][2]string{"lat": {"trend", "time"}, "n": {"counter", "default"}, "checks": {"rate", "default"}} {
		if declared[name] != want {
			t.Errorf("%s declared as %v; want %v", name, declared[name], want)
		}
	}
	if p := points["lat"]; len(p) != 1 || p[0] != 12.5 || tags["lat"]["step"] != "a" {
		t.Errorf("lat points %v tags %v; want [12.5] with step a", p, tags["lat"])
	}
	if p := points["n"]; len(p) != 1 || p[0] != 3 {
		t.Errorf("n points %v; want [3]", p)
	}
	if p := points["checks"]; len(p) != 1 || p[0] != 1 || tags["checks"]["check"] != "one" {
		t.Errorf("checks points %v tags %v; want [1] for check one", p, tags["checks"])
	}
}

// Every metric_value of a request's CSV rows is written as k6 writes it:
// k6's csv output formats each sample's value with %f
// (internal/output/csv/output.go, SampleToRow: fmt.Sprintf("%f",
// sample.Value)), and k6 emits http_reqs with the value 1
// (lib/netext/httpext/tracer.go) and http_req_failed with 0 or 1
// (transport.go). So by hand: http_reqs "1.000000", http_req_failed
// "0.000000" for an expected response and "1.000000" for an unexpected
// one, http_req_duration 12.5 ms "12.500000"; an unjudged request has no
// http_req_failed row.
func TestCSVRequestRowValuesAsK6Writes(t *testing.T) {
	for _, tt := range []struct {
		name             string
		expected, judged bool
		want             map[string]string // metric -> metric_value
	}{
		{"expected response", true, true,
			map[string]string{"http_reqs": "1.000000", "http_req_failed": "0.000000", "http_req_duration": "12.500000"}},
		{"unexpected response", false, true,
			map[string]string{"http_reqs": "1.000000", "http_req_failed": "1.000000", "http_req_duration": "12.500000"}},
		{"no response callback", true, false,
			map[string]string{"http_reqs": "1.000000", "http_req_duration": "12.500000"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			o := NewCSVOutput(nopCloser{&buf})
			o.request(&hopRow{done: time.Unix(1700000000, 0), tags: map[string]string{"method": "GET", "name": "n", "url": "n",
				"scenario": "s", "proto": "HTTP/1.1", "status": "200"}, expected: tt.expected, judged: tt.judged,
				t: request.Timings{Duration: 12500 * time.Microsecond}})
			if err := o.Close(); err != nil {
				t.Fatal(err)
			}
			rows, err := csv.NewReader(&buf).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, r := range rows[1:] {
				if _, ok := tt.want[r[0]]; ok || r[0] == "http_req_failed" {
					got[r[0]] = r[2]
				}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("metric_value by metric: %v; want %v", got, tt.want)
			}
		})
	}
}
