package importer

import (
	"errors"
	"strings"
	"testing"

	"github.com/knee-dev/knee/record"
)

func point(metric, time, value, tags string) string {
	return `{"type":"Point","metric":"` + metric + `","data":{"time":"` + time + `","value":` + value + `,"tags":{` + tags + `}}}` + "\n"
}

func TestK6JSON(t *testing.T) {
	in := `{"type":"Metric","data":{"name":"http_req_duration","type":"trend"},"metric":"http_req_duration"}` + "\n" +
		point("http_req_duration", "2026-01-01T00:00:00.5+01:00", "2.5", `"scenario":"s","name":"a","status":"200","expected_response":"true"`) +
		point("http_req_duration", "2025-12-31T23:00:01.2Z", "1e1", `"scenario":"s","url":"http://h/b","status":"0","error_code":"1050","expected_response":"false"`) +
		point("http_req_duration", "2025-12-31T23:00:01.3Z", "4", `"scenario":"s","name":"a","status":"503","expected_response":"false"`) +
		point("dropped_iterations", "2025-12-31T23:00:01.4Z", "3", `"scenario":"s"`) +
		point("http_req_waiting", "2025-12-31T23:00:01.4Z", "3", ``) + "\n"
	res, sink, err := importString(t, "r.json", in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := sink.final.Counters
	if res.Format != FormatK6JSON || c.Requests != 3 || c.Errors != 2 || c.ErrorsByClass["timeout"] != 1 || c.ByStatus["5xx"] != 1 || c.DroppedIterations != 3 {
		t.Errorf("format %q counters %+v", res.Format, c)
	}
	if len(sink.snaps) != 2 || sink.snaps[0].Counters["s"].Requests != 1 {
		t.Errorf("%d intervals; want 2, the first with 1 request", len(sink.snaps))
	}
	if h := sink.merged(latencyOf("s", "http://h/b")); h.Count() != 1 || !near(h.Max(), ms(10)) {
		t.Errorf("url-named series: n %d max %v, want 1 10ms", h.Count(), h.Max())
	}
}

func TestK6JSONBadInput(t *testing.T) {
	good := point("http_req_duration", "2026-01-01T00:00:00Z", "2.5", `"name":"a"`)
	for _, tc := range []struct {
		name, in string
		line     int64
		msg      string
	}{
		{"not json", good + "http_req_duration 2.5\n", 2, "not a JSON object"},
		{"truncated", good + good[:40], 2, "truncated last line"},
		{"unknown type", good + `{"type":"Sample"}` + "\n", 2, `unknown line type "Sample"`},
		{"string value", good + point("http_req_duration", "2026-01-01T00:00:00Z", `"fast"`, ""), 2, "is not a duration"},
		{"no time", good + point("http_req_duration", "", "1", ""), 2, `timestamp "" is not a time`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := importString(t, "bad.json", tc.in, Options{})
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Line != tc.line || !strings.Contains(pe.Msg, tc.msg) {
				t.Errorf("err = %v, want line %d containing %q", err, tc.line, tc.msg)
			}
		})
	}
}

// k6's JSON output's ws_* time Trends become the scenario's Trend series
// (as its CSV's: TestK6CSVWebSocketTrends); ws_msgs_sent is skipped.
func TestK6JSONWebSocketTrends(t *testing.T) {
	tags := `"scenario":"s","url":"ws://h/","status":"101"`
	in := point("http_req_duration", "2026-01-01T00:00:00.1Z", "2", `"scenario":"s","name":"a","status":"200"`) +
		point("ws_connecting", "2026-01-01T00:00:00.2Z", "5", tags) +
		point("ws_msgs_sent", "2026-01-01T00:00:00.3Z", "1", tags) +
		point("ws_session_duration", "2026-01-01T00:00:00.4Z", "250", tags)
	_, sink, err := importString(t, "r.json", in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]float64{"ws_connecting": 5, "ws_session_duration": 250} {
		h := sink.merged(func(k record.Key) bool { return k.Metric == record.Trend && k.Scenario == "s" && k.Name == name })
		if h.Count() != 1 || !near(h.Max(), ms(want)) {
			t.Errorf("%s: n %d max %v, want 1 %vms", name, h.Count(), h.Max(), want)
		}
	}
}
