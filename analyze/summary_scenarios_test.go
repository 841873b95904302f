package analyze_test

import (
	"testing"
	"time"

	"github.com/knee-dev/knee/analyze"
	"github.com/knee-dev/knee/record"
	"github.com/knee-dev/knee/rundir"
)

// mixedRun is the README's two-scenario file, shrunk: an open scenario at a
// target of 200 req/s for 10 s achieving 186 req/s of 1 ms (2 dropped per
// second), and a closed one of 20 VUs that starts at 5 s and runs 5 s,
// 50 req/s of 2 ms.
func mixedRun() *rundir.Dir {
	f := newFakeRun("mixed", 10,
		rundir.Scenario{Name: "open", Executor: "constant-arrival-rate", Model: "open", TargetRate: 200, Span: 10 * time.Second},
		rundir.Scenario{Name: "closed", Executor: "constant-vus", Model: "closed", VUs: 20, StartTime: 5 * time.Second, Span: 5 * time.Second})
	for sec := range 10 {
		f.add(sec, lat("open", "GET /"), time.Millisecond, 186)
		f.count(sec, "open", record.Counters{Requests: 186, DroppedIterations: 2}, 200)
		if sec >= 5 {
			f.add(sec, lat("closed", "GET /"), 2*time.Millisecond, 50)
			f.count(sec, "closed", record.Counters{Requests: 50, Errors: 1, ErrorsByClass: map[string]int64{"timeout": 1}}, 0)
		}
	}
	return f.r
}

// Each scenario gets its own summary: its model, executor, rate against
// its own target over its own span, latency and drops. The run's own figures
// keep only what adds up: no target (only one scenario had one).
func TestSummarizeMixedScenarios(t *testing.T) {
	s := analyze.Summarize(mixedRun(), analyze.SummaryOptions{})
	if s.TargetRate != 0 {
		t.Errorf("run target rate %v; want none: the closed scenario had no target, so 200/s is not the run's", s.TargetRate)
	}
	// 1860 + 250 requests; 5 timeouts, all in the closed scenario.
	if s.Requests != 2110 || s.Errors != 5 || len(s.Scenarios) != 2 {
		t.Fatalf("run: %d requests, %d errors, %d scenario blocks; want 2110, 5, 2", s.Requests, s.Errors, len(s.Scenarios))
	}
	want := []struct {
		name, model, executor      string
		requests                   int64
		rate, target, p50, seconds float64
		dropped, errors            int64
	}{
		// 186/s × 10 s; 1 ms is exact below 2048 µs.
		{"open", "open", "constant-arrival-rate", 1860, 186, 200, 1, 10, 20, 0},
		// 50/s × 5 s over its own 5 s span, not the run's 10 s (25/s).
		{"closed", "closed", "constant-vus", 250, 50, 0, 2, 5, 0, 5},
	}
	for i, w := range want {
		sc := s.Scenarios[i]
		if sc.Scenario != w.name || sc.Model != w.model || sc.Executor != w.executor {
			t.Errorf("block %d: %s/%s/%s; want %s/%s/%s", i, sc.Scenario, sc.Model, sc.Executor, w.name, w.model, w.executor)
		}
		for _, c := range []struct {
			what      string
			got, want float64
		}{
			{"requests", float64(sc.Requests), float64(w.requests)},
			{"rate", sc.Rate, w.rate},
			{"target", sc.TargetRate, w.target},
			{"p50_ms", sc.LatencyMS.P50, w.p50},
			{"duration_s", sc.DurationS, w.seconds},
			{"dropped", float64(sc.DroppedIterations), float64(w.dropped)},
			{"errors", float64(sc.Errors), float64(w.errors)},
		} {
			if !closeTo(c.got, c.want, 1e-9) {
				t.Errorf("scenario %s: %s = %v, want %v", w.name, c.what, c.got, c.want)
			}
		}
	}
}

// A run with one scenario keeps one summary, no blocks.
func TestSummarizeOneScenarioHasNoBlocks(t *testing.T) {
	if s := analyze.Summarize(openRun(), analyze.SummaryOptions{}); len(s.Scenarios) != 0 || s.TargetRate != 100 {
		t.Errorf("%d blocks, target %v; want none and 100", len(s.Scenarios), s.TargetRate)
	}
}

// Latencies without timestamps have no rate and no duration, whatever
// length the interval that holds them has.
func TestSummarizeNoTimestamps(t *testing.T) {
	f := newFakeRun("unknown", 1, rundir.Scenario{Name: "default"})
	f.add(0, lat("default", ""), time.Millisecond, 5000)
	f.r.Meta.NoTimestamps = true
	s := analyze.Summarize(f.r, analyze.SummaryOptions{})
	if s.Requests != 5000 || s.Rate != 0 || s.DurationS != 0 || !s.NoTimestamps {
		t.Errorf("%d requests, rate %v, duration %v, no_timestamps %v; want 5000, 0, 0, true", s.Requests, s.Rate, s.DurationS, s.NoTimestamps)
	}
}

// The headline above a summary in which every request failed.
func TestFailureHeadline(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    rundir.Summary
		want string
	}{
		{"no response", rundir.Summary{Requests: 500, Failed: 500, NoResponse: 500, FirstError: "dial tcp 127.0.0.1:9: connect: connection refused"},
			"NO RESPONSE AT ALL: 500 of 500 requests failed; the first: dial tcp 127.0.0.1:9: connect: connection refused"},
		{"every status 503", rundir.Summary{Requests: 40, Failed: 40, Errors: 40, FirstError: "HTTP status 503"},
			"EVERY REQUEST FAILED: 40 of 40 requests failed; the first: HTTP status 503"},
		{"one answered", rundir.Summary{Requests: 40, Failed: 39, NoResponse: 39}, ""},
		{"nothing sent", rundir.Summary{}, ""},
	} {
		if got := analyze.FailureHeadline(tc.s); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
		if got, want := analyze.NoResponse(tc.s), tc.s.Requests > 0 && tc.s.NoResponse == tc.s.Requests; got != want {
			t.Errorf("%s: NoResponse %v, want %v", tc.name, got, want)
		}
	}
}
