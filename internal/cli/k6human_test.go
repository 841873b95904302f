package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/knee-dev/knee/k6metric"
	"github.com/knee-dev/knee/k6script"
)

// Values are written as k6 v1.8.1's summary.js writes them, worked out by
// hand from its rules; the first rows are from shared/testdata/k6's
// stdout.txt beside summary.json's values.
func TestK6ValueAsK6Writes(t *testing.T) {
	for _, tt := range []struct {
		v                    float64
		kind, contains, unit string
		want                 string
	}{
		{4.6171810796019885, "trend", k6metric.Time, "", "4.61ms"}, // stdout: avg=4.61ms (truncated, not 4.62)
		{4.603655, "trend", k6metric.Time, "", "4.6ms"},            // med=4.6ms: no trailing zero
		{43818, "counter", k6metric.Data, "", "44 kB"},
		{10946.52430765682, "counter", k6metric.Data, "", "11 kB"},
		{50.21341425530652, "counter", k6metric.Plain, "", "50.213414"},
		{201, "counter", k6metric.Plain, "", "201"},
		{0, "rate", k6metric.Plain, "", "0.00%"},
		{0.99996, "rate", k6metric.Plain, "", "99.99%"}, // truncated: never 100.00 % with a failure
		{0.0714285714, "rate", k6metric.Plain, "", "7.14%"},
		{0, "trend", k6metric.Time, "", "0s"},
		{0.0005, "trend", k6metric.Time, "", "500ns"},
		{0.15082564, "trend", k6metric.Time, "", "150.82µs"},
		{1999.999, "trend", k6metric.Time, "", "1.99s"},
		{61500, "trend", k6metric.Time, "", "1m1s"},
		{3723000, "trend", k6metric.Time, "", "1h2m3s"},
		{4.6171810796019885, "trend", k6metric.Time, "ms", "4.62ms"}, // summaryTimeUnit: toFixed(2), rounded
		{4.6171810796019885, "trend", k6metric.Time, "s", "0.00s"},
		{0.125, "trend", k6metric.Time, "ms", "0.13ms"}, // a tie rounds away from zero, as JavaScript's toFixed
		{4.6171810796019885, "trend", k6metric.Time, "us", "4617.18µs"},
		{5, "counter", k6metric.Data, "", "5 B"},
		{1043, "counter", k6metric.Data, "", "1.0 kB"},
		{-3, "gauge", k6metric.Plain, "", "-3"},
		{2.5, "trend", k6metric.Plain, "", "2.5"},
	} {
		if got := k6Value(tt.v, tt.kind, tt.contains, tt.unit); got != tt.want {
			t.Errorf("k6Value(%v, %s, %s, %q) = %q; want %q", tt.v, tt.kind, tt.contains, tt.unit, got, tt.want)
		}
	}
}

// The k6 block prints each metric's values as k6's summary lines do:
// a Trend's summaryTrendStats columns in their order (count as a plain
// number), a Counter's count and rate per second, a Rate's share and
// passes out of all, a Gauge's value, min and max. The values are
// summary.json's of shared/testdata/k6, the lines its stdout.txt's.
func TestPrintK6AsK6Summary(t *testing.T) {
	stats := []string{"avg", "min", "med", "max", "p(90)", "p(95)", "p(99)", "count"}
	var buf bytes.Buffer
	printK6(&buf, []k6script.K6Stat{
		{Name: "http_req_duration", Kind: "trend", Contains: k6metric.Time, Values: map[string]float64{
			"p(95)": 6.681875, "p(99)": 6.972307, "count": 201, "avg": 4.6171810796019885, "min": 2.469602,
			"med": 4.603655, "max": 7.522921, "p(90)": 6.610413}},
		{Name: "http_req_failed", Kind: "rate", Contains: k6metric.Plain, Values: map[string]float64{"rate": 0, "passes": 0, "fails": 201}},
		{Name: "http_reqs", Kind: "counter", Contains: k6metric.Plain, Values: map[string]float64{"count": 201, "rate": 50.21341425530652}},
		{Name: "vus_max", Kind: "gauge", Contains: k6metric.Plain, Values: map[string]float64{"value": 5, "min": 5, "max": 5}},
		{Name: "data_received", Kind: "counter", Contains: k6metric.Data, Values: map[string]float64{"count": 43818, "rate": 10946.52430765682}},
	}, stats, "")
	for _, want := range []string{
		"http_req_duration                avg=4.61ms min=2.46ms med=4.6ms max=7.52ms p(90)=6.61ms p(95)=6.68ms p(99)=6.97ms count=201\n",
		"http_req_failed                  0.00% 0 out of 201\n",
		"http_reqs                        201 50.213414/s\n",
		"vus_max                          5 min=5 max=5\n",
		"data_received                    44 kB 11 kB/s\n",
	} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("k6 block lacks %q:\n%s", want, buf.String())
		}
	}
}
