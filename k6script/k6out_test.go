package k6script

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/knee-dev/knee/load"
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
