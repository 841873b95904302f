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
