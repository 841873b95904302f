package runner

import (
	"testing"
	"time"

	"github.com/knee-dev/knee/record"
	"github.com/knee-dev/knee/rundir"
)

// trendOf merges a Trend over every interval and scenario (hand-made: "g"
// has 1 ms in s1, 2 ms and 3 ms in s2, in two intervals), and knows no
// values of a name never recorded.
func TestTrendOfMergesEveryInterval(t *testing.T) {
	h := func(ds ...time.Duration) *record.Histogram {
		x := record.NewHistogram()
		for _, d := range ds {
			x.Record(d)
		}
		return x
	}
	run := &rundir.Dir{Intervals: []rundir.Interval{
		{Start: 0, End: time.Second, Histograms: map[record.Key]*record.Histogram{
			{Metric: record.Trend, Scenario: "s1", Name: "g"}:   h(time.Millisecond),
			{Metric: record.Latency, Scenario: "s1", Name: "g"}: h(time.Hour),
		}},
		{Start: time.Second, End: 2 * time.Second, Histograms: map[record.Key]*record.Histogram{
			{Metric: record.Trend, Scenario: "s2", Name: "g"}: h(2*time.Millisecond, 3*time.Millisecond),
		}},
	}}
	trend := trendOf(&Result{Run: run})
	g := trend("g")
	if g == nil || g.Count() != 3 || g.Min() != time.Millisecond || g.Percentile(50) != 2*time.Millisecond || g.Max() != 3001*time.Microsecond {
		t.Fatalf("g = %v, want 3 values 1, 2, 3 ms (the latency of the same name not among them)", g)
	}
	if x := trend("never"); x != nil && x.Count() != 0 {
		t.Errorf("a name never recorded has %d values", x.Count())
	}
}
