package analyze

import (
	"math"
	"testing"
	"time"

	"github.com/knee-dev/knee/record"
	"github.com/knee-dev/knee/rundir"
)

// timelineRun is n intervals of step each; interval i holds latencies
// lat(i) (100 requests) and send lags of 1 ms, with counters per scenario.
func timelineRun(n int, step time.Duration, lat func(i int) time.Duration, scenarios ...string) *rundir.Dir {
	r := &rundir.Dir{}
	for i := 0; i < n; i++ {
		iv := rundir.Interval{Start: time.Duration(i) * step, End: time.Duration(i+1) * step,
			Histograms: map[record.Key]*record.Histogram{}, Counters: map[string]rundir.IntervalCounters{}}
		for _, sc := range scenarios {
			h := record.NewHistogram()
			h.RecordN(lat(i), 100)
			iv.Histograms[record.Key{Metric: record.Latency, Scenario: sc}] = h
			g := record.NewHistogram()
			g.RecordN(time.Millisecond, 100)
			iv.Histograms[record.Key{Metric: record.SendLag, Scenario: sc}] = g
			iv.Counters[sc] = rundir.IntervalCounters{Scenario: sc, TargetRate: 100, BusyVUs: i % 4, VUs: 10,
				Counters: record.Counters{Requests: 100, Errors: 2, Failed: 3, BytesIn: 1000, BytesOut: 500,
					ByStatus: map[string]int64{"2xx": 97, "5xx": 2, "4xx": 1}}}
		}
		r.Intervals = append(r.Intervals, iv)
	}
	return r
}

func TestChartWindowRule(t *testing.T) {
	for _, tc := range []struct {
		name string
		n    int
		step time.Duration
		want time.Duration
	}{
		{"20 s of 1 s intervals: 1 s", 20, time.Second, time.Second},
		{"5 min: still 1 s", 300, time.Second, time.Second},
		{"5 min 1 s: 2 s (151 windows)", 301, time.Second, 2 * time.Second},
		{"10 min: 2 s", 600, time.Second, 2 * time.Second},
		{"1 h: 12 s", 3600, time.Second, 12 * time.Second},
		{"500 ms intervals: 1 s", 40, 500 * time.Millisecond, time.Second},
		{"300 ms intervals: 1.2 s (whole intervals)", 40, 300 * time.Millisecond, 1200 * time.Millisecond},
		{"5 s intervals: 5 s", 10, 5 * time.Second, 5 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := timelineRun(tc.n, tc.step, func(int) time.Duration { return time.Millisecond }, "a")
			if got := ChartWindow(r); got != tc.want {
				t.Fatalf("ChartWindow = %v, want %v", got, tc.want)
			}
		})
	}
}

func nearMS(got, want float64) bool { return math.Abs(got-want) <= want*0.002 }

// A 20 s run with a slow stretch at 5–10 s: one point per second, and the
// slow seconds show as they were (1000 ms), not diluted into a 10 s window.
func TestTimelinePointsPerSecond(t *testing.T) {
	slow := func(i int) time.Duration {
		if i >= 5 && i < 10 {
			return time.Second
		}
		return 10 * time.Millisecond
	}
	r := timelineRun(20, time.Second, slow, "a")
	r.Meta.Faults = []rundir.Fault{
		{Kind: "freeze", At: 5 * time.Second, Target: "pid:7", Method: "sigstop"},
		{Kind: "thaw", At: 10 * time.Second, Target: "pid:7", Method: "sigstop"},
		{Kind: "freeze", At: 12 * time.Second, Target: "pid:8", Error: "no such process"},
		{Kind: "freeze", At: 15 * time.Second, Target: "pid:9"},
	}
	tl := TimelineOf(r, 0)
	if tl.WindowS != 1 || len(tl.Points) != 20 {
		t.Fatalf("window %g s, %d points; want 1 s, 20", tl.WindowS, len(tl.Points))
	}
	for i, p := range tl.Points {
		want := 10.0
		if i >= 5 && i < 10 {
			want = 1000
		}
		if !nearMS(p.LatencyMS.P99, want) || !nearMS(p.LatencyMS.Max, want) {
			t.Errorf("point %d: p99 %g max %g ms, want %g", i, p.LatencyMS.P99, p.LatencyMS.Max, want)
		}
		if p.StartS != float64(i) || p.EndS != float64(i+1) || p.Requests != 100 || p.Rate != 100 || p.Target != 100 {
			t.Errorf("point %d: %+v", i, p)
		}
		if p.SendLagMS == nil || !nearMS(p.SendLagMS.P99, 1) {
			t.Errorf("point %d: send lag %+v, want p99 1 ms", i, p.SendLagMS)
		}
		if p.Errors != 2 || p.Failed != 3 || p.BytesInRate != 1000 || p.BytesOutRate != 500 || p.ByStatus["2xx"] != 97 || p.ByStatus["5xx"] != 2 {
			t.Errorf("point %d counters: %+v", i, p)
		}
	}
	want := []FaultSpan{{"freeze pid:7", 5, 10}, {"freeze pid:9", 15, 20}}
	if len(tl.Faults) != len(want) {
		t.Fatalf("faults %+v, want %+v", tl.Faults, want)
	}
	for i := range want {
		if tl.Faults[i] != want[i] {
			t.Errorf("fault %d: %+v, want %+v", i, tl.Faults[i], want[i])
		}
	}
	if tl.Scenarios != nil {
		t.Errorf("one scenario: no per-scenario timelines, got %d", len(tl.Scenarios))
	}
}

// Coarse windows keep the max and the highest VU count of their intervals.
func TestTimelineCoarseKeepsMax(t *testing.T) {
	lat := func(i int) time.Duration {
		if i == 7 {
			return 2 * time.Second
		}
		return 10 * time.Millisecond
	}
	r := timelineRun(40, time.Second, lat, "a", "b")
	tl := TimelineOf(r, 10*time.Second)
	if len(tl.Points) != 4 {
		t.Fatalf("%d points, want 4", len(tl.Points))
	}
	p := tl.Points[0] // intervals 0..9, both scenarios: 2000 requests, 200 of them 2 s
	if p.Requests != 2000 || p.Rate != 200 || p.Target != 200 || !nearMS(p.LatencyMS.Max, 2000) || !nearMS(p.LatencyMS.P50, 10) {
		t.Errorf("window 0: %+v", p)
	}
	if p.BusyVUs != 6 || p.VUs != 20 { // max over intervals of the sum over scenarios: 3+3, 10+10
		t.Errorf("window 0 VUs: busy %d of %d, want 6 of 20", p.BusyVUs, p.VUs)
	}
	if !nearMS(tl.Points[1].LatencyMS.Max, 10) {
		t.Errorf("window 1 max %g, want 10 ms", tl.Points[1].LatencyMS.Max)
	}
	if len(tl.Scenarios) != 2 || tl.Scenarios[1].Scenario != "b" || tl.Scenarios[1].Points[0].Requests != 1000 {
		t.Fatalf("per scenario: %+v", tl.Scenarios)
	}
}

// ExtendTimeline on a grown run equals a timeline cut afresh.
func TestExtendTimelineMatchesFresh(t *testing.T) {
	r := timelineRun(30, time.Second, func(i int) time.Duration { return time.Duration(i+1) * time.Millisecond }, "a", "b")
	part := *r
	part.Intervals = r.Intervals[:17]
	prev := TimelineOf(&part, time.Second)
	got, want := ExtendTimeline(r, time.Second, prev), TimelineOf(r, time.Second)
	if len(got.Points) != len(want.Points) {
		t.Fatalf("%d points, want %d", len(got.Points), len(want.Points))
	}
	for i := range want.Points {
		if got.Points[i].LatencyMS != want.Points[i].LatencyMS || got.Points[i].Requests != want.Points[i].Requests {
			t.Errorf("point %d: %+v, want %+v", i, got.Points[i], want.Points[i])
		}
	}
	if !nearMS(got.Points[29].LatencyMS.P99, 30) {
		t.Errorf("last point p99 %g, want 30 ms", got.Points[29].LatencyMS.P99)
	}
}

// A k6 script's iterations (the iteration_duration Trend series) per
// window: their count, rate and duration percentiles, worked out by hand.
// Interval 0 holds 10 iterations of 200 ms, interval 1 five of 400 ms and
// five of 1 s, interval 2 none (a freeze), interval 3 twenty of 100 ms;
// scenario b adds one 3 s iteration in interval 1. A custom Trend of
// another name is not an iteration.
func TestTimelineIterations(t *testing.T) {
	r := timelineRun(4, time.Second, func(int) time.Duration { return 10 * time.Millisecond }, "a", "b")
	iters := []map[string]map[time.Duration]int64{
		{"a": {200 * time.Millisecond: 10}},
		{"a": {400 * time.Millisecond: 5, time.Second: 5}, "b": {3 * time.Second: 1}},
		{},
		{"a": {100 * time.Millisecond: 20}},
	}
	for i, bySc := range iters {
		for sc, vals := range bySc {
			h := record.NewHistogram()
			for d, n := range vals {
				h.RecordN(d, n)
			}
			r.Intervals[i].Histograms[record.Key{Metric: record.Trend, Scenario: sc, Name: record.IterationDuration}] = h
		}
		other := record.NewHistogram()
		other.RecordN(time.Hour/2, 50)
		r.Intervals[i].Histograms[record.Key{Metric: record.Trend, Scenario: "a", Name: "login_time"}] = other
	}
	type want struct {
		n             int64
		rate          float64
		p50, p95, max float64 // ms; all 0: no iteration (IterationMS nil)
	}
	for _, tc := range []struct {
		name     string
		window   time.Duration
		scenario string // "": the whole run
		want     []want
	}{
		// p50 of 11 is the 6th smallest (1 s: five of 400 ms come first), p95 the 11th (3 s).
		{"whole run, 1 s", time.Second, "", []want{{10, 10, 200, 200, 200}, {11, 11, 1000, 3000, 3000}, {}, {20, 20, 100, 100, 100}}},
		// 21 iterations in 0–2 s: p50 the 11th (400 ms), p95 the 20th (1 s); rate 21 / 2 s.
		{"whole run, 2 s", 2 * time.Second, "", []want{{21, 10.5, 400, 1000, 3000}, {20, 10, 100, 100, 100}}},
		// a alone: 20 iterations, p50 the 10th (200 ms), p95 the 19th (1 s).
		{"scenario a, 2 s", 2 * time.Second, "a", []want{{20, 10, 200, 1000, 1000}, {20, 10, 100, 100, 100}}},
		{"scenario b, 1 s", time.Second, "b", []want{{}, {1, 1, 3000, 3000, 3000}, {}, {}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tl := TimelineOf(r, tc.window)
			pts := tl.Points
			if tc.scenario != "" {
				pts = nil
				for _, s := range tl.Scenarios {
					if s.Scenario == tc.scenario {
						pts = s.Points
					}
				}
			}
			if len(pts) != len(tc.want) {
				t.Fatalf("%d points, want %d", len(pts), len(tc.want))
			}
			for i, w := range tc.want {
				p := pts[i]
				if p.Iterations != w.n || math.Abs(p.IterationRate-w.rate) > 1e-9 {
					t.Errorf("point %d: %d iterations at %g/s, want %d at %g/s", i, p.Iterations, p.IterationRate, w.n, w.rate)
				}
				if w.n == 0 {
					if p.IterationMS != nil {
						t.Errorf("point %d: durations %+v without iterations", i, *p.IterationMS)
					}
					continue
				}
				if l := p.IterationMS; l == nil || !nearMS(l.P50, w.p50) || !nearMS(l.P95, w.p95) || !nearMS(l.Max, w.max) {
					t.Errorf("point %d: durations %+v, want p50 %g p95 %g max %g ms", i, l, w.p50, w.p95, w.max)
				}
			}
		})
	}
}

// The phases of a k6 script's requests per window, each phase its own
// percentiles. Interval 0 times 10 requests: 9 on a reused connection
// (blocked 5 µs, no connect or handshake) and 1 on a new one (blocked
// 3 ms, connecting 1 ms, TLS 2 ms); sending 50 µs, waiting 8 ms and
// receiving 300 µs each. Interval 1 times none; interval 2 ten requests
// like interval 0 but waiting 40 ms.
func TestTimelinePhases(t *testing.T) {
	r := timelineRun(3, time.Second, func(int) time.Duration { return 10 * time.Millisecond }, "a")
	names := record.PhaseNames()
	for _, i := range []int{0, 2} {
		waiting := 8 * time.Millisecond
		if i == 2 {
			waiting = 40 * time.Millisecond
		}
		vals := [6]map[time.Duration]int64{
			{5 * time.Microsecond: 9, 3 * time.Millisecond: 1},
			{0: 9, time.Millisecond: 1}, // 0 reads as 1 µs, the histograms' lowest value
			{0: 9, 2 * time.Millisecond: 1},
			{50 * time.Microsecond: 10},
			{waiting: 10},
			{300 * time.Microsecond: 10},
		}
		for j, v := range vals {
			h := record.NewHistogram()
			for d, n := range v {
				h.RecordN(d, n)
			}
			r.Intervals[i].Histograms[record.Key{Metric: record.Trend, Scenario: "a", Name: names[j]}] = h
		}
	}
	pts := TimelineOf(r, time.Second).Points
	if pts[1].PhasesMS != nil {
		t.Errorf("second 1 timed no request, has phases %+v", *pts[1].PhasesMS)
	}
	for _, tc := range []struct {
		point int
		want  RequestPhases // p50, p95, max by hand (p99 is max here); nearest rank of 10: p50 the 5th, p95 the 10th
	}{
		{0, RequestPhases{
			Blocked:        WindowLatencies{P50: 0.005, P95: 3, P99: 3, Max: 3},
			Connecting:     WindowLatencies{P50: 0.001, P95: 1, P99: 1, Max: 1},
			TLSHandshaking: WindowLatencies{P50: 0.001, P95: 2, P99: 2, Max: 2},
			Sending:        WindowLatencies{P50: 0.05, P95: 0.05, P99: 0.05, Max: 0.05},
			Waiting:        WindowLatencies{P50: 8, P95: 8, P99: 8, Max: 8},
			Receiving:      WindowLatencies{P50: 0.3, P95: 0.3, P99: 0.3, Max: 0.3},
		}},
		{2, RequestPhases{
			Blocked:        WindowLatencies{P50: 0.005, P95: 3, P99: 3, Max: 3},
			Connecting:     WindowLatencies{P50: 0.001, P95: 1, P99: 1, Max: 1},
			TLSHandshaking: WindowLatencies{P50: 0.001, P95: 2, P99: 2, Max: 2},
			Sending:        WindowLatencies{P50: 0.05, P95: 0.05, P99: 0.05, Max: 0.05},
			Waiting:        WindowLatencies{P50: 40, P95: 40, P99: 40, Max: 40},
			Receiving:      WindowLatencies{P50: 0.3, P95: 0.3, P99: 0.3, Max: 0.3},
		}},
	} {
		got := pts[tc.point].PhasesMS
		if got == nil {
			t.Fatalf("point %d: no phases", tc.point)
		}
		for _, ph := range []struct {
			name      string
			got, want WindowLatencies
		}{
			{"blocked", got.Blocked, tc.want.Blocked}, {"connecting", got.Connecting, tc.want.Connecting},
			{"tls", got.TLSHandshaking, tc.want.TLSHandshaking}, {"sending", got.Sending, tc.want.Sending},
			{"waiting", got.Waiting, tc.want.Waiting}, {"receiving", got.Receiving, tc.want.Receiving},
		} {
			if !nearMS(ph.got.P50, ph.want.P50) || !nearMS(ph.got.P95, ph.want.P95) || !nearMS(ph.got.P99, ph.want.P99) || !nearMS(ph.got.Max, ph.want.Max) {
				t.Errorf("point %d %s: %+v, want %+v", tc.point, ph.name, ph.got, ph.want)
			}
		}
	}
	// One 2 s window over seconds 0 and 1: the same as second 0 alone.
	if w := TimelineOf(r, 2*time.Second).Points[0].PhasesMS; w == nil || !nearMS(w.Waiting.P99, 8) || w.Waiting != pts[0].PhasesMS.Waiting {
		t.Errorf("2 s window: phases %+v, want second 0's (waiting 8 ms)", w)
	}
}
