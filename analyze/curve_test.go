package analyze

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/knee-dev/knee/record"
	"github.com/knee-dev/knee/rundir"
)

// articlePlan is the article's stepped test scaled down: 100..600 req/s in
// six steps of a 1 s jump and a 10 s hold, the first 3 s of each dropped.
var articlePlan = StepPlan{Start: 100, Step: 100, Steps: 6, StepDuration: 10 * time.Second, Jump: time.Second, Warmup: 3 * time.Second}

func near(got, want, tol float64) bool { return math.Abs(got-want) <= tol }

// Four workers of 10 ms each serve at most 4/0.010 = 400 req/s. Below and at
// 400 every request takes exactly 10 ms and completes at the offered rate;
// above it the workers stay busy (400 req/s) while the queue fills to
// MaxVUs and the rest is dropped.
func TestCurveKnownCapacity(t *testing.T) {
	r := simulate(queueTarget{Workers: 4, Service: 10 * time.Millisecond, MaxVUs: 200}, articlePlan)
	s, err := SummarizeCurve(r, articlePlan, Health{})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Steps) != 6 {
		t.Fatalf("got %d steps, want 6", len(s.Steps))
	}
	for i, st := range s.Steps[:4] {
		offered := float64(100 * (i + 1))
		// 8 measured seconds at the offered rate, every latency 10 ms (10 ms is
		// exact to 0.1 % in a 3-significant-digit histogram).
		if st.OfferedRate != offered || st.Rate != offered || st.Requests != int64(8*offered) {
			t.Errorf("step %d: offered %g rate %g requests %d, want %g, %g, %g", i, st.OfferedRate, st.Rate, st.Requests, offered, offered, 8*offered)
		}
		if st.DroppedIterations != 0 || !near(st.LatencyMS.P95, 10, 0.01) || !near(st.LatencyMS.Max, 10, 0.01) {
			t.Errorf("step %d: dropped %d p95 %g max %g, want 0, 10 ms, 10 ms", i, st.DroppedIterations, st.LatencyMS.P95, st.LatencyMS.Max)
		}
		if st.From != time.Duration(11*i+3)*time.Second || st.Seconds != 8 {
			t.Errorf("step %d measured from %v for %g s, want %v for 8 s", i, st.From, st.Seconds, time.Duration(11*i+3)*time.Second)
		}
	}
	for _, st := range s.Steps[4:] {
		// Saturated: 4 workers each finish one request per 10 ms.
		if !near(st.Rate, 400, 1) {
			t.Errorf("offered %g: rate %g, want 400", st.OfferedRate, st.Rate)
		}
		// The queue is full (200 in the system), so every request waits
		// about 200/400 s = 500 ms, and what exceeds 400 req/s is dropped.
		if !near(st.LatencyMS.P50, 500, 15) || st.BusyVUs != 200 {
			t.Errorf("offered %g: p50 %g ms busy %d, want about 500 ms and 200", st.OfferedRate, st.LatencyMS.P50, st.BusyVUs)
		}
		if want := (st.OfferedRate - 400) / st.OfferedRate; !near(st.DroppedRate, want, 0.01) {
			t.Errorf("offered %g: dropped rate %g, want %g", st.OfferedRate, st.DroppedRate, want)
		}
	}
	if s.Knee.LastHealthyRate != 400 || s.Knee.FirstUnhealthyRate != 500 {
		t.Errorf("knee %+v, want between 400 and 500 (the capacity is 400)", s.Knee)
	}
	if s.Collapse != nil {
		t.Errorf("collapse %+v, want none: throughput held at capacity", *s.Collapse)
	}
	if s.Knee.KneedleRate != 400 {
		t.Errorf("Kneedle on p95 says %g, want 400", s.Knee.KneedleRate)
	}
	if x, ok := KneedleThroughput(s.Steps); !ok || x != 400 {
		t.Errorf("Kneedle on throughput says %g, %v; want 400", x, ok)
	}
	want := "The knee lies between 400 and 500 req/s; run below 320 req/s (80 % of the last healthy rate, headroom for bursts and run-to-run noise)."
	if s.Capacity != want {
		t.Errorf("capacity line\n got %q\nwant %q", s.Capacity, want)
	}
}

// The same target, but every waiting request slows the others by 5 %: past
// capacity the queue fills, service grows to 10 ms * (1 + 0.05*195) =
// 107.5 ms (an accepted arrival finds 199 in the system, 4 of them in
// service) and throughput falls to 4/0.1075 = 37.2 req/s.
func TestCurveDegradingTargetCollapses(t *testing.T) {
	r := simulate(queueTarget{Workers: 4, Service: 10 * time.Millisecond, Slowdown: 0.05, MaxVUs: 200}, articlePlan)
	s, err := SummarizeCurve(r, articlePlan, Health{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Collapse == nil || s.Collapse.AtRate != 500 || s.Collapse.Rate >= 0.8*400 {
		t.Fatalf("collapse %+v, want at 500 req/s below 320 req/s", s.Collapse)
	}
	if last := s.Steps[5]; !near(last.Rate, 4/0.1075, 0.02*4/0.1075) {
		t.Errorf("rate at 600 req/s is %g, want about 37.2 (steady state of a full queue)", last.Rate)
	}
	if s.Knee.LastHealthyRate != 400 || s.Knee.FirstUnhealthyRate != 500 {
		t.Errorf("knee %+v, want between 400 and 500", s.Knee)
	}
	if !strings.Contains(s.Capacity, "Throughput collapsed at 500 req/s offered") {
		t.Errorf("capacity line %q does not report the collapse", s.Capacity)
	}
}

// warmupRun has two steps of a 1 s jump and a 3 s hold. In the first two
// seconds of each step 10 requests take 900 ms and 5 time out; afterwards
// every second brings 100*(step+1) requests of 5 ms.
func warmupRun() *rundir.Dir {
	r := &rundir.Dir{}
	for i := range 8 {
		step, cold := i/4, i%4 < 2
		h := record.NewHistogram()
		c := record.Counters{ErrorsByClass: map[string]int64{}}
		if cold {
			h.RecordN(900*time.Millisecond, 10)
			c.Requests, c.Errors, c.ErrorsByClass["timeout"] = 10, 5, 5
		} else {
			n := int64(100 * (step + 1))
			h.RecordN(5*time.Millisecond, n)
			c.Requests = n
		}
		r.Intervals = append(r.Intervals, rundir.Interval{
			Start: time.Duration(i) * time.Second, End: time.Duration(i+1) * time.Second,
			Histograms: map[record.Key]*record.Histogram{{Metric: record.Latency, Scenario: "s"}: h},
			Counters:   map[string]rundir.IntervalCounters{"s": {Scenario: "s", Counters: c, TargetRate: float64(100 * (step + 1)), BusyVUs: 3 + i}},
		})
	}
	return r
}

func TestCurveWarmup(t *testing.T) {
	plan := StepPlan{Start: 100, Step: 100, Steps: 2, StepDuration: 3 * time.Second, Jump: time.Second}
	tests := []struct {
		name          string
		warmup        time.Duration
		requests      [2]int64
		rate          [2]float64
		errors        [2]int64
		maxMS         float64
		busy          [2]int
		timeoutErrors int64
	}{
		// Warmup 2 s: only the warm seconds 2-3 and 6-7 count.
		{"warmup dropped", 2 * time.Second, [2]int64{200, 400}, [2]float64{100, 200}, [2]int64{0, 0}, 5, [2]int{6, 10}, 0},
		// Warmup 0 still drops the 1 s jump; the cold second 1 (and 5) remains.
		{"only the jump dropped", 0, [2]int64{210, 410}, [2]float64{70, 410.0 / 3}, [2]int64{5, 5}, 900, [2]int{6, 10}, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := plan
			p.Warmup = tt.warmup
			steps, err := Curve(warmupRun(), p)
			if err != nil {
				t.Fatal(err)
			}
			for i, s := range steps {
				if s.Requests != tt.requests[i] || !near(s.Rate, tt.rate[i], 1e-9) || s.Errors != tt.errors[i] || s.BusyVUs != tt.busy[i] {
					t.Errorf("step %d: requests %d rate %g errors %d busy %d, want %d %g %d %d",
						i, s.Requests, s.Rate, s.Errors, s.BusyVUs, tt.requests[i], tt.rate[i], tt.errors[i], tt.busy[i])
				}
				if !near(s.LatencyMS.Max, tt.maxMS, tt.maxMS/1000) || s.ErrorsByClass["timeout"] != tt.timeoutErrors {
					t.Errorf("step %d: max %g ms, timeouts %d; want %g ms, %d", i, s.LatencyMS.Max, s.ErrorsByClass["timeout"], tt.maxMS, tt.timeoutErrors)
				}
			}
		})
	}
}

func TestStepPlanValidate(t *testing.T) {
	tests := []struct {
		name string
		plan StepPlan
		errs int
	}{
		{"article plan", articlePlan, 0},
		{"zero", StepPlan{}, 3},
		{"warmup longer than a step", StepPlan{Start: 1, Steps: 1, StepDuration: time.Second, Warmup: 2 * time.Second}, 1},
		{"rates fall below zero", StepPlan{Start: 100, Step: -100, Steps: 3, StepDuration: time.Second}, 1},
		{"negative offset", StepPlan{Start: 1, Steps: 1, StepDuration: time.Second, Offset: -1}, 1},
	}
	for _, tt := range tests {
		if errs := tt.plan.Validate(); len(errs) != tt.errs {
			t.Errorf("%s: %d errors (%v), want %d", tt.name, len(errs), errs, tt.errs)
		}
	}
	if _, err := Curve(warmupRun(), StepPlan{}); err == nil {
		t.Error("Curve accepted an empty plan")
	}
	if _, err := Curve(&rundir.Dir{}, articlePlan); !errors.Is(err, ErrNoSteps) {
		t.Errorf("Curve of an empty run: %v, want ErrNoSteps", err)
	}
}

// rateRun builds a run of 1 s intervals offering the given target rates.
func rateRun(rates ...float64) *rundir.Dir {
	r := &rundir.Dir{}
	for i, rate := range rates {
		r.Intervals = append(r.Intervals, rundir.Interval{
			Start: time.Duration(i) * time.Second, End: time.Duration(i+1) * time.Second,
			Counters: map[string]rundir.IntervalCounters{"s": {Scenario: "s", TargetRate: rate}},
		})
	}
	return r
}

func TestInferPlan(t *testing.T) {
	sim := simulate(queueTarget{Workers: 4, Service: 10 * time.Millisecond, MaxVUs: 200}, articlePlan)
	tests := []struct {
		name string
		r    *rundir.Dir
		want StepPlan
	}{
		{"simulated article run", sim, articlePlan},
		// Jump intervals at the mean of the two rates (150, 250) are not holds.
		{"jumps at intermediate rates", rateRun(100, 100, 100, 150, 200, 200, 250, 300, 300),
			StepPlan{Start: 100, Step: 100, Steps: 3, StepDuration: 2 * time.Second, Jump: time.Second, Warmup: 3 * time.Second}},
		// Steps start 2 s into the run, after a constant-rate scenario gap.
		{"offset", rateRun(0, 0, 50, 50, 50, 80, 80, 80),
			StepPlan{Start: 50, Step: 30, Steps: 2, StepDuration: 2 * time.Second, Jump: time.Second, Warmup: 3 * time.Second, Offset: 2 * time.Second}},
		// A constant-rate run is a one-step plan.
		{"constant", rateRun(70, 70, 70, 70, 0),
			StepPlan{Start: 70, Steps: 1, StepDuration: 3 * time.Second, Jump: time.Second, Warmup: 3 * time.Second}},
	}
	for _, tt := range tests {
		got, err := InferPlan(tt.r, "", 3*time.Second)
		if err != nil || got != tt.want {
			t.Errorf("%s: got %+v, %v\nwant %+v", tt.name, got, err, tt.want)
		}
	}
	bad := []struct {
		name string
		r    *rundir.Dir
	}{
		{"no target rates", rateRun(0, 0, 0)},
		{"uneven steps", rateRun(100, 100, 200, 200, 400, 400)},
		{"no hold", rateRun(10, 20, 30)},
	}
	for _, tt := range bad {
		if got, err := InferPlan(tt.r, "", 0); err == nil {
			t.Errorf("%s: inferred %+v, want an error", tt.name, got)
		}
	}
}

// The JSON names are the --summary-export contract.
func TestCurveSummaryJSON(t *testing.T) {
	r := simulate(queueTarget{Workers: 4, Service: 10 * time.Millisecond, MaxVUs: 200}, articlePlan)
	s, err := SummarizeCurve(r, articlePlan, Health{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Steps    []map[string]json.RawMessage `json:"steps"`
		Knee     map[string]json.RawMessage   `json:"knee"`
		Collapse json.RawMessage              `json:"collapse"`
		USL      map[string]json.RawMessage   `json:"usl"`
		Capacity string                       `json:"capacity"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	has := func(what string, m map[string]json.RawMessage, keys ...string) {
		for _, k := range keys {
			if _, ok := m[k]; !ok {
				t.Errorf("%s lacks %q: %v", what, k, m)
			}
		}
	}
	has("step", got.Steps[0], "offered_rate", "rate", "dropped_iterations", "errors", "error_rate", "errors_by_class", "busy_vus", "latency_ms")
	var lat map[string]float64
	if err := json.Unmarshal(got.Steps[0]["latency_ms"], &lat); err != nil || len(lat) != 8 {
		t.Errorf("latency_ms %s: %v", got.Steps[0]["latency_ms"], err)
	}
	for _, k := range []string{"min", "mean", "p50", "p90", "p95", "p99", "p99.9", "max"} {
		if _, ok := lat[k]; !ok {
			t.Errorf("latency_ms lacks %q", k)
		}
	}
	has("knee", got.Knee, "last_healthy_rate", "first_unhealthy_rate", "reason")
	has("usl", got.USL, "sigma", "kappa", "lambda", "peak_rate", "r2")
	if string(got.Collapse) != "null" || got.Capacity == "" {
		t.Errorf("collapse %s, capacity %q; want null and a sentence", got.Collapse, got.Capacity)
	}
}

// With no plan given, SummarizeCurve infers it from target_rate; with two
// steps there is no USL fit, and the summary says why.
func TestSummarizeCurveInfersPlan(t *testing.T) {
	r := simulate(queueTarget{Workers: 4, Service: 10 * time.Millisecond, MaxVUs: 200}, articlePlan)
	s, err := SummarizeCurve(r, StepPlan{Warmup: 3 * time.Second}, Health{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Plan != articlePlan || s.Knee.LastHealthyRate != 400 || s.Knee.FirstUnhealthyRate != 500 {
		t.Errorf("plan %+v knee %+v, want %+v between 400 and 500", s.Plan, s.Knee, articlePlan)
	}
	two, err := SummarizeCurve(warmupRun(), StepPlan{Warmup: 2 * time.Second}, Health{})
	if err != nil {
		t.Fatal(err)
	}
	if two.USL != nil || !strings.Contains(two.USLNote, "at least three points") || len(two.Steps) != 2 {
		t.Errorf("two steps: usl %+v note %q steps %d; want no fit, a note and 2 steps", two.USL, two.USLNote, len(two.Steps))
	}
	if _, err := SummarizeCurve(rateRun(0, 0), StepPlan{}, Health{}); !errors.Is(err, ErrNoSteps) {
		t.Errorf("run without target rates: %v, want ErrNoSteps", err)
	}
}

// Below capacity every step has the same concurrency (N = X·R grows only
// with X, R is flat): the USL has nothing to fit, and a fit that explains
// little is reported as a note, not as a law with a peak.
func TestSummarizeCurveRejectsPoorUSLFit(t *testing.T) {
	// 100 workers × 10 ms = 10,000/s: far above every step of the plan.
	r := simulate(queueTarget{Workers: 100, Service: 10 * time.Millisecond, MaxVUs: 200}, articlePlan)
	s, err := SummarizeCurve(r, articlePlan, Health{})
	if err != nil {
		t.Fatal(err)
	}
	if s.USL != nil && s.USL.R2 < MinUSLR2 {
		t.Errorf("a fit with R² %.2f was reported", s.USL.R2)
	}
	if s.USL == nil && s.USLNote == "" {
		t.Error("no fit and no note saying why")
	}
}

// An import counts no VUs: its steps say so (NoVUs), where a run of knee's
// own, whose intervals count them, never does.
func TestCurveNoVUsInImports(t *testing.T) {
	plan := StepPlan{Start: 100, Step: 100, Steps: 2, StepDuration: 3 * time.Second, Jump: time.Second, Warmup: 2 * time.Second}
	run := warmupRun()
	steps, err := Curve(run, plan)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range steps {
		if s.NoVUs {
			t.Errorf("knee's own run, step %d: NoVUs with %d busy VUs counted", i, s.BusyVUs)
		}
	}
	for _, iv := range run.Intervals {
		c := iv.Counters["s"]
		c.BusyVUs, c.VUs = 0, 0
		iv.Counters["s"] = c
	}
	if steps, err = Curve(run, plan); err != nil {
		t.Fatal(err)
	}
	for i, s := range steps {
		if !s.NoVUs {
			t.Errorf("an import's step %d: NoVUs false, busy %d", i, s.BusyVUs)
		}
	}
}
