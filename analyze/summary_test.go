package analyze_test

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/knee-dev/knee/analyze"
	"github.com/knee-dev/knee/record"
	"github.com/knee-dev/knee/rundir"
)

// fakeRun builds a run by hand, one 1 s interval per second.
type fakeRun struct{ r *rundir.Dir }

func newFakeRun(model string, seconds int, scenarios ...rundir.Scenario) *fakeRun {
	f := &fakeRun{r: &rundir.Dir{Meta: rundir.Meta{Model: model, Scenarios: scenarios}}}
	for i := range seconds {
		f.r.Intervals = append(f.r.Intervals, rundir.Interval{
			Start:      time.Duration(i) * time.Second,
			End:        time.Duration(i+1) * time.Second,
			Histograms: map[record.Key]*record.Histogram{},
			Counters:   map[string]rundir.IntervalCounters{},
		})
	}
	return f
}

// add records n values of d for key k in second sec.
func (f *fakeRun) add(sec int, k record.Key, d time.Duration, n int64) *fakeRun {
	iv := &f.r.Intervals[sec]
	h, ok := iv.Histograms[k]
	if !ok {
		h = record.NewHistogram()
		iv.Histograms[k] = h
	}
	h.RecordN(d, n)
	return f
}

// count adds c (and a target rate) to scenario sc's counters of second sec.
func (f *fakeRun) count(sec int, sc string, c record.Counters, target float64) *fakeRun {
	iv := &f.r.Intervals[sec]
	ic := iv.Counters[sc]
	ic.Scenario = sc
	ic.Counters.Add(c)
	ic.TargetRate = target
	iv.Counters[sc] = ic
	return f
}

func lat(sc, name string) record.Key {
	return record.Key{Metric: record.Latency, Scenario: sc, Name: name}
}

func key(m record.Metric, sc string) record.Key {
	return record.Key{Metric: m, Scenario: sc, Name: "GET /"}
}

func closeTo(got, want, tol float64) bool { return math.Abs(got-want) <= tol }

func hasWarning(ws []string, sub string) bool {
	return slices.ContainsFunc(ws, func(w string) bool { return strings.Contains(w, sub) })
}

// openRun is an open-model run of 10 s at a target of 100 req/s: 98 req/s
// of 2 ms, 2 req/s of 1.5 s, send lag 0.5 ms (98/s) and 3 ms (2/s), one
// timeout error and 4 dropped iterations per second.
func openRun() *rundir.Dir {
	f := newFakeRun("open", 10, rundir.Scenario{Name: "s", Executor: "constant-arrival-rate", Model: "open", TargetRate: 100})
	for sec := range 10 {
		f.add(sec, key(record.Latency, "s"), 2*time.Millisecond, 98)
		f.add(sec, key(record.Latency, "s"), 1500*time.Millisecond, 2)
		f.add(sec, key(record.Service, "s"), time.Millisecond, 100)
		f.add(sec, key(record.SendLag, "s"), 500*time.Microsecond, 98)
		f.add(sec, key(record.SendLag, "s"), 3*time.Millisecond, 2)
		f.count(sec, "s", record.Counters{Requests: 100, Errors: 1, DroppedIterations: 4,
			ErrorsByClass: map[string]int64{"timeout": 1, "reset": 0}}, 100)
	}
	return f.r
}

func TestSummarize(t *testing.T) {
	r := openRun()
	s := analyze.Summarize(r, analyze.SummaryOptions{})
	// 1000 requests over 10 s; 980 at 2 ms and 20 at 1.5 s: p50 = 2 ms;
	// p99 is rank round(0.99·1000) = 990 > 980, so 1.5 s; 20 above 1 s.
	// 1.5 s = 1,500,000 µs lies in the 1024 µs-wide bucket
	// [1,499,136, 1,500,159] whose highest value is what record reports.
	checks := []struct {
		name      string
		got, want float64
	}{
		{"requests", float64(s.Requests), 1000},
		{"rate", s.Rate, 100},
		{"target_rate", s.TargetRate, 100},
		{"dropped", float64(s.DroppedIterations), 40},
		{"errors", float64(s.Errors), 10},
		{"p50_ms", s.LatencyMS.P50, 2},
		{"p99_ms", s.LatencyMS.P99, 1500.159},
		{"slower_than_1s", float64(s.SlowerThan1s), 20},
		{"duration_s", s.DurationS, 10},
		{"service_p50_ms", s.ServiceMS.P50, 1},
		// Send lag: 980 at 0.5 ms, 20 at 3 ms: p99 (rank 990) is 3 ms, whose
		// bucket above 2048 µs is 2 µs wide: [3000, 3001].
		{"send_lag_p99_ms", s.SendLagMS.P99, 3.001},
	}
	for _, c := range checks {
		if !closeTo(c.got, c.want, 1e-9) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if s.Model != "open" || s.Executor != "constant-arrival-rate" {
		t.Errorf("model/executor = %q/%q", s.Model, s.Executor)
	}
	if len(s.ErrorsByClass) != 1 || s.ErrorsByClass["timeout"] != 10 {
		t.Errorf("errors_by_class = %v, want only timeout: 10", s.ErrorsByClass)
	}
	if !hasWarning(s.Warnings, "generator-limited: send-lag p99 3.00 ms > 1.00 ms") {
		t.Errorf("warnings %q lack generator-limited", s.Warnings)
	}
	if !hasWarning(s.Warnings, "40 dropped iterations") {
		t.Errorf("warnings %q lack dropped iterations", s.Warnings)
	}
	relaxed := analyze.Summarize(r, analyze.SummaryOptions{SendLagLimit: 5 * time.Millisecond})
	if hasWarning(relaxed.Warnings, "generator-limited") {
		t.Errorf("with a 5 ms limit, warnings %q still say generator-limited", relaxed.Warnings)
	}
	// The machine's own wake-up floor: send lag p99 3.001 ms is knee's fault
	// only when over 3× the floor's p99. A floor p99 of 1.5 ms (4.5 ms ×3)
	// explains it; one of 0.9 ms (2.7 ms ×3) does not, and both are named.
	for _, tc := range []struct {
		floorP99 float64
		want     string // "" for no generator-limited warning
	}{
		{1.5, ""},
		{0.9, "generator-limited: send-lag p99 3.00 ms > 1.00 ms and over 3× this machine's own wake-up floor (p99 900 µs"},
	} {
		r.Meta.Env.WakeFloor = &rundir.WakeFloor{Waits: 200, Period: time.Millisecond, P50MS: 0.1, P99MS: tc.floorP99}
		s := analyze.Summarize(r, analyze.SummaryOptions{})
		if s.WakeFloor == nil || s.WakeFloor.P99MS != tc.floorP99 {
			t.Errorf("floor p99 %v: the summary carries floor %+v", tc.floorP99, s.WakeFloor)
		}
		switch {
		case tc.want == "" && hasWarning(s.Warnings, "generator-limited"):
			t.Errorf("floor p99 %v ms: warnings %q blame the generator for the machine's own lateness", tc.floorP99, s.Warnings)
		case tc.want != "" && !hasWarning(s.Warnings, tc.want):
			t.Errorf("floor p99 %v ms: warnings %q, want one starting %q", tc.floorP99, s.Warnings, tc.want)
		}
	}
	r.Meta.Env.WakeFloor = nil
}

func TestSummarizeSelect(t *testing.T) {
	f := newFakeRun("open", 2, rundir.Scenario{Name: "a", Model: "open", Executor: "constant-arrival-rate", TargetRate: 10},
		rundir.Scenario{Name: "b", Model: "closed", Executor: "constant-vus", VUs: 2})
	for sec := range 2 {
		f.add(sec, lat("a", "GET /x"), time.Millisecond, 6)
		f.add(sec, lat("a", "GET /y"), 1500*time.Microsecond, 4)
		f.add(sec, lat("b", "GET /x"), 2*time.Millisecond, 5)
		f.count(sec, "a", record.Counters{Requests: 10, Errors: 2}, 10)
		f.count(sec, "b", record.Counters{Requests: 5}, 0)
	}
	tests := []struct {
		sel      analyze.Selector
		requests int64
		errors   int64
		maxMS    float64
		executor string
	}{
		{analyze.Selector{}, 30, 4, 2, "mixed"},
		{analyze.Selector{Scenario: "a"}, 20, 4, 1.5, "constant-arrival-rate"},
		{analyze.Selector{Scenario: "b"}, 10, 0, 2, "constant-vus"},
		// A name narrows latencies and requests (from the histogram), not the scenario's counters.
		{analyze.Selector{Name: "GET /y"}, 8, 4, 1.5, "mixed"},
	}
	for _, tt := range tests {
		s := analyze.Summarize(f.r, analyze.SummaryOptions{Select: tt.sel})
		if s.Requests != tt.requests || s.Errors != tt.errors || s.LatencyMS.Max != tt.maxMS || s.Executor != tt.executor {
			t.Errorf("%+v: requests %d errors %d max %v executor %q, want %d %d %v %q", tt.sel,
				s.Requests, s.Errors, s.LatencyMS.Max, s.Executor, tt.requests, tt.errors, tt.maxMS, tt.executor)
		}
	}
}

func TestSelectorString(t *testing.T) {
	tests := []struct {
		sel  analyze.Selector
		want string
	}{
		{analyze.Selector{}, ""},
		{analyze.Selector{Name: "GET /x"}, "{name:GET /x}"},
		{analyze.Selector{Scenario: "open", Name: "GET /b/{isbn}"}, "{scenario:open,name:GET /b/{isbn}}"},
	}
	for _, tt := range tests {
		if got := tt.sel.String(); got != tt.want {
			t.Errorf("%+v.String() = %q, want %q", tt.sel, got, tt.want)
		}
	}
}

// Requests knee could not send (the generator class) are named in a
// warning that puts the limit on the generator, with their share: 30 of
// 1000 is 3.0 %.
func TestSummarizeGeneratorErrors(t *testing.T) {
	f := newFakeRun("open", 10, rundir.Scenario{Name: "s", Executor: "constant-arrival-rate", Model: "open", TargetRate: 100})
	for sec := range 10 {
		f.add(sec, key(record.Latency, "s"), 2*time.Millisecond, 100)
		f.count(sec, "s", record.Counters{Requests: 100, Errors: 0, Failed: 3, ErrorsByClass: map[string]int64{"generator": 3}}, 100)
	}
	s := analyze.Summarize(f.r, analyze.SummaryOptions{})
	if s.Errors != 0 || s.ErrorsByClass["generator"] != 30 {
		t.Errorf("errors %d by class %v; want 0 of the target's and generator: 30", s.Errors, s.ErrorsByClass)
	}
	if !hasWarning(s.Warnings, "generator-limited: knee could not send 30 of 1000 requests (3.0 %)") {
		t.Errorf("warnings %q do not put the limit on the generator", s.Warnings)
	}
	if hasWarning(analyze.Summarize(openRun(), analyze.SummaryOptions{}).Warnings, "could not send") {
		t.Errorf("a run without generator errors is warned about them")
	}
}

// A knee run whose run.json is still the one written at its start (killed
// with -9: not finished, not interrupted, no end) is summarised with an
// unfinished warning naming the 3 s flushed; a finished one and an
// interrupted one are not.
func TestSummarizeUnfinished(t *testing.T) {
	for _, tc := range []struct {
		name                  string
		finished, interrupted bool
		ended                 time.Time
		want                  bool
	}{
		{"killed", false, false, time.Time{}, true},
		{"finished", true, false, time.Unix(1000, 0), false},
		{"interrupted", false, true, time.Unix(1000, 0), false},
	} {
		f := newFakeRun("open", 3, rundir.Scenario{Name: "s", Executor: "constant-arrival-rate", Model: "open", TargetRate: 10, Span: 10 * time.Second})
		f.r.Meta.Source, f.r.Meta.Finished, f.r.Meta.Interrupted, f.r.Meta.Ended = "knee", tc.finished, tc.interrupted, tc.ended
		for sec := range 3 {
			f.add(sec, key(record.Latency, "s"), time.Millisecond, 10)
			f.count(sec, "s", record.Counters{Requests: 10}, 10)
		}
		s := analyze.Summarize(f.r, analyze.SummaryOptions{})
		if got := hasWarning(s.Warnings, "unfinished: knee stopped before it wrote the run's end (killed, e.g. with kill -9, or crashed); this covers the 3.0 s"); got != tc.want {
			t.Errorf("%s: unfinished warning %v, want %v: %q", tc.name, got, tc.want, s.Warnings)
		}
	}
}

// A run stopped by a signal at 4.9 s of a planned 10 s, whose in-flight
// requests then took until 12 s to answer: its rate is over the 4.9 s up
// to the stop (no iteration started after it), not over the planned 10 s
// nor the 12 s drained. 47 requests: 47 / 4.9 = 9.5918.../s; the scenario's
// own span is cut alike. Without a stop time, the planned 10 s caps the
// 12 s measured, as for a finished run: 47 / 10 = 4.7/s.
func TestSummarizeInterruptedRateOverTheTimeToTheStop(t *testing.T) {
	for _, tc := range []struct {
		name      string
		stoppedAt time.Duration
		wantS     float64
	}{
		{"stopped at 4.9 s", 4900 * time.Millisecond, 4.9},
		{"stop time unknown", 0, 10},
	} {
		f := newFakeRun("open", 12, rundir.Scenario{Name: "s", Executor: "constant-arrival-rate", Model: "open", TargetRate: 10, Span: 10 * time.Second})
		f.r.Meta.Source, f.r.Meta.Interrupted, f.r.Meta.StoppedAt = "knee", true, tc.stoppedAt
		for sec, n := range []int64{10, 10, 10, 10, 7} {
			f.add(sec+7, key(record.Latency, "s"), 7*time.Second, n) // each answered 7 s later
			f.count(sec+7, "s", record.Counters{Requests: n}, 10)
		}
		for _, opt := range []analyze.SummaryOptions{{}, {Select: analyze.Selector{Scenario: "s"}}} {
			s := analyze.Summarize(f.r, opt)
			if want := 47 / tc.wantS; s.Requests != 47 || s.DurationS != tc.wantS || math.Abs(s.Rate-want) > 1e-9 {
				t.Errorf("%s (scenario %q): %d in %v s = %v/s; want 47 in %v s = %v/s", tc.name, opt.Select.Scenario, s.Requests, s.DurationS, s.Rate, tc.wantS, want)
			}
		}
	}
}
