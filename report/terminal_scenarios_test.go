package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/knee-dev/knee/record"
	"github.com/knee-dev/knee/rundir"
)

// mixedSummary is the summary of the README's two-scenario file as
// analyze.Summarize makes it: one block per scenario.
func mixedSummary() rundir.Summary {
	open := rundir.Summary{Scenario: "open", Model: "open", Executor: "constant-arrival-rate", Requests: 1860,
		Rate: 186, TargetRate: 200, DurationS: 10, DroppedIterations: 20, LatencyMS: record.Latencies{P50: 1, Max: 1}}
	closed := rundir.Summary{Scenario: "closed", Model: "closed", Executor: "constant-vus", Requests: 250,
		Rate: 50, DurationS: 5, Errors: 5, ErrorsByClass: map[string]int64{"timeout": 5}, LatencyMS: record.Latencies{P50: 2, Max: 2}}
	return rundir.Summary{Model: "mixed", Executor: "mixed", Requests: 2110, Rate: 211, DurationS: 10, Errors: 5,
		ErrorsByClass: map[string]int64{"timeout": 5}, DroppedIterations: 20, LatencyMS: record.Latencies{P50: 1, Max: 2},
		Scenarios: []rundir.ScenarioSummary{{Summary: open}, {Summary: closed}}}
}

// A run of several scenarios prints one block per scenario, each rate
// against its own target; the all-scenarios line has counts only.
func TestSummaryScenarioBlocks(t *testing.T) {
	var buf bytes.Buffer
	if err := Summary(&buf, mixedSummary()); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"Mixed model · 2 scenarios\n",
		// 5 of 2110 = 0.24 %
		"  all scenarios       2110 requests in 10.0 s, errors 5 (0.24 %) [timeout=5]\n",
		"scenario open · Open model · constant-arrival-rate\n",
		// 186 of 200 = 93.0 %
		"  requests            1860 in 10.0 s = 186.0/s (target 200.0/s, 93.0 %)\n",
		"  dropped_iterations  20\n",
		"scenario closed · Closed model · constant-vus\n",
		"  requests            250 in 5.0 s = 50.0/s\n",
		// 5 of 250 = 2.00 %
		"  errors              5 (2.00 %) [timeout=5]\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	// The merged latency (p50 1 ms of both) is no headline, and 200/s is
	// only the open scenario's target.
	if n := strings.Count(out, "latency "); n != 2 {
		t.Errorf("%d latency lines; want 2, one per scenario:\n%s", n, out)
	}
	if n := strings.Count(out, "target"); n != 1 {
		t.Errorf("%d targets; want 1, the open scenario's:\n%s", n, out)
	}
}

// Latencies without timestamps: no rate, no duration, said so.
func TestSummaryNoTimestamps(t *testing.T) {
	var buf bytes.Buffer
	s := rundir.Summary{Model: "unknown", Requests: 5000, NoTimestamps: true, LatencyMS: record.Latencies{P50: 1}}
	if err := Summary(&buf, s); err != nil {
		t.Fatal(err)
	}
	if want := "  requests            5000 (no timestamps: no rate, no duration)\n"; !strings.Contains(buf.String(), want) {
		t.Errorf("summary lacks %q:\n%s", want, buf.String())
	}
	if strings.Contains(buf.String(), "/s") {
		t.Errorf("a rate was printed for latencies without timestamps:\n%s", buf.String())
	}
}

// The Markdown report's result table: a row per scenario with its rate
// against its own target, and an all-scenarios row with counts only.
func TestMarkdownScenarioRows(t *testing.T) {
	in := Input{Summary: mixedSummary()}
	var buf bytes.Buffer
	if err := Markdown(&buf, in); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"| all scenarios | 2110 | - | - | - | - | - | - | 5 (0.24 %) | 20 |",
		"| scenario open (open, constant-arrival-rate) | 1860 | 186.0/s of 200.0/s | 1.00ms | ",
		"| scenario closed (closed, constant-vus) | 250 | 50.0/s | 2.00ms | ",
		"- Rate: per scenario (see Result): each against its own target",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}
