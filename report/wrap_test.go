package report

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/knee-dev/knee/record"
	"github.com/knee-dev/knee/rundir"
)

// On an 80-column terminal the summary fits: no row over 80 columns, no
// word cut (every word of the full-width summary is whole in the narrow
// one, in order), and a wrapped value continues under its value column.
func TestSummaryFitsTheTerminal(t *testing.T) {
	lat := record.Latencies{P50: 1.19, P90: 3.92, P95: 6.71, P99: 14.7, P999: 31.4, Max: 4980.7, Mean: 2.14, Min: 0.723}
	s := rundir.Summary{Model: "open", Executor: "constant-arrival-rate", Requests: 11510, Rate: 191.8, TargetRate: 200,
		DurationS: 60, LatencyMS: lat, ServiceMS: &lat, SendLagMS: &lat, GeneratorCPUS: 1.2,
		Warnings: []string{"generator-limited: send-lag p99 14.7 ms > 1.00 ms and over 3× this machine's own wake-up floor (p99 198 µs, a bare thread's timed waits before the run): knee started requests late"}}
	var full, narrow bytes.Buffer
	if err := Summary(&full, s); err != nil {
		t.Fatal(err)
	}
	if err := Summary(Fit(&narrow, 80), s); err != nil {
		t.Fatal(err)
	}
	long := false
	for _, line := range strings.Split(full.String(), "\n") {
		long = long || utf8.RuneCountInString(line) > 80
	}
	if !long {
		t.Fatal("no line of the full summary is over 80 columns: the test shows nothing")
	}
	rows := strings.Split(strings.TrimRight(narrow.String(), "\n"), "\n")
	for _, r := range rows {
		if n := utf8.RuneCountInString(r); n > 80 {
			t.Errorf("row of %d columns: %q", n, r)
		}
	}
	if got, want := strings.Fields(narrow.String()), strings.Fields(full.String()); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("words changed by wrapping:\n got %q\nwant %q", got, want)
	}
	for i, r := range rows {
		if strings.HasPrefix(r, "  latency ") {
			if i+1 >= len(rows) || !strings.HasPrefix(rows[i+1], strings.Repeat(" ", valueColumn)) || rows[i+1][valueColumn] == ' ' {
				t.Errorf("the latency line's second row %q does not start at column %d", rows[min(i+1, len(rows)-1)], valueColumn)
			}
		}
		if strings.HasPrefix(r, "  WARNING: ") && (i+1 >= len(rows) || !strings.HasPrefix(rows[i+1], strings.Repeat(" ", 11))) {
			t.Errorf("the warning's next row %q is not under its text", rows[min(i+1, len(rows)-1)])
		}
	}
	if t.Failed() {
		t.Logf("narrow:\n%s", narrow.String())
	}
}
