package dashboard

import (
	"encoding/json"
	"math"
	"time"

	"github.com/knee-dev/knee/analyze"
	"github.com/knee-dev/knee/record"
	"github.com/knee-dev/knee/report"
	"github.com/knee-dev/knee/rundir"
)

// Snapshot is one event: the charts (the report's chart data) and the
// figures of the newest interval.
type Snapshot struct {
	Charts json.RawMessage   `json:"charts"`
	Status Status            `json:"status"`
	CO     analyze.COSignals `json:"co"`
	// Run is the summary of the run so far; the page shows it as the final
	// summary once Done is set.
	Run  *rundir.Summary `json:"run,omitempty"`
	Done *Done           `json:"done,omitempty"`
}

// Status is the run so far and its newest interval.
type Status struct {
	RunDir    string  `json:"run_dir"`
	Model     string  `json:"model,omitempty"`
	Intervals int     `json:"intervals"`
	ElapsedS  float64 `json:"elapsed_s"`
	// The newest interval: achieved and offered rate, percentiles from its
	// merged histogram (null when it saw no request), VUs, send lag p99.
	Rate      float64  `json:"rate"`
	Target    float64  `json:"target,omitempty"`
	P50MS     *float64 `json:"p50_ms"`
	P95MS     *float64 `json:"p95_ms"`
	P99MS     *float64 `json:"p99_ms"`
	BusyVUs   int      `json:"busy_vus"`
	VUs       int      `json:"vus"`
	SendLagMS *float64 `json:"send_lag_p99_ms"`
	// The run so far.
	Requests      int64            `json:"requests"`
	Errors        int64            `json:"errors"`
	ErrorsByClass map[string]int64 `json:"errors_by_class,omitempty"`
	Dropped       int64            `json:"dropped"`
	Steps         int              `json:"steps,omitempty"` // stepped runs: steps measured so far
	// Scenarios has one entry per scenario when there are several: their
	// models and targets differ, so the page shows each on its own.
	Scenarios []ScenarioStatus `json:"scenarios,omitempty"`
}

// ScenarioStatus is one scenario's newest interval (rate against its own
// target, percentiles) and its dropped iterations so far.
type ScenarioStatus struct {
	Name     string   `json:"name"`
	Model    string   `json:"model"`
	Executor string   `json:"executor"`
	Rate     float64  `json:"rate"`
	Target   float64  `json:"target,omitempty"`
	P50MS    *float64 `json:"p50_ms"`
	P95MS    *float64 `json:"p95_ms"`
	P99MS    *float64 `json:"p99_ms"`
	Requests int64    `json:"requests"`
	Errors   int64    `json:"errors"`
	Dropped  int64    `json:"dropped"`
}

// Done is the run's end: where to find what it left.
type Done struct {
	RunDir string `json:"run_dir"`
	Report string `json:"report,omitempty"`
}

// Build computes a snapshot of r (nil: nothing recorded yet) with windows
// of one interval, all from analyze: the same numbers knee analyze prints.
func Build(r *rundir.Dir, dir string, interval time.Duration) Snapshot {
	var b builder
	return b.build(r, dir, interval)
}

// builder builds the snapshots of one growing run, keeping the chart
// windows already complete (analyze.ExtendTimeline): late in a long run they
// were most of a snapshot's cost.
type builder struct {
	timeline analyze.Timeline
}

func (b *builder) build(r *rundir.Dir, dir string, interval time.Duration) Snapshot {
	snap := Snapshot{Status: Status{RunDir: dir}}
	in := report.Input{}
	if r != nil && len(r.Intervals) > 0 {
		sum := analyze.Summarize(r, analyze.SummaryOptions{})
		in.Summary = sum
		snap.Run = &sum
		in.Timeline = analyze.ExtendTimeline(r, analyze.ChartWindow(r), b.timeline)
		b.timeline = in.Timeline
		snap.CO = analyze.DetectCO(r, analyze.COOptions{})
		st := &snap.Status
		st.Model, st.Intervals = sum.Model, len(r.Intervals)
		st.Requests, st.Errors, st.ErrorsByClass, st.Dropped = sum.Requests, sum.Errors, sum.ErrorsByClass, sum.DroppedIterations
		last := r.Intervals[len(r.Intervals)-1]
		st.ElapsedS = last.End.Seconds()
		if n := len(r.Intervals); n > 1 && last.End-last.Start < interval/2 {
			// The run's last interval is cut short by its end: the one before
			// it says more of how the run went.
			last = r.Intervals[n-2]
		}
		st.Rate, st.P50MS, st.P95MS, st.P99MS = newest(last, func(k record.Key) bool { return k.Metric == record.Latency })
		if lag := record.Series(last.Histograms).Merged(func(k record.Key) bool { return k.Metric == record.SendLag }); lag.Count() > 0 {
			st.SendLagMS = num(lag.Latencies().P99)
		}
		for _, c := range last.Counters {
			st.Target += c.TargetRate
			st.BusyVUs += c.BusyVUs
			st.VUs += c.VUs
		}
		for _, sc := range sum.Scenarios {
			st.Scenarios = append(st.Scenarios, scenarioStatus(sc.Summary, last))
		}
		if plan, ok := analyze.PlanFromMeta(r, ""); ok {
			plan.Steps = min(plan.Steps, analyze.StepsIn(r, plan))
			if plan.Steps > 0 {
				if cs, err := analyze.SummarizeCurve(r, plan, analyze.Health{}); err == nil {
					in.Curve = &cs
					st.Steps = len(cs.Steps)
				}
			}
		}
	}
	if snap.CO.Signals == nil {
		snap.CO.Signals = []analyze.COSignal{}
	}
	charts, err := report.ChartJSON(in)
	if err != nil {
		charts = []byte(`{}`)
	}
	snap.Charts = charts
	return snap
}

// scenarioStatus is one scenario's figures: the run so far from its summary,
// the newest interval from last's histograms and counters of that scenario.
func scenarioStatus(sum rundir.Summary, last rundir.Interval) ScenarioStatus {
	ss := ScenarioStatus{Name: sum.Scenario, Model: sum.Model, Executor: sum.Executor,
		Requests: sum.Requests, Errors: sum.Errors, Dropped: sum.DroppedIterations}
	ss.Rate, ss.P50MS, ss.P95MS, ss.P99MS = newest(last, func(k record.Key) bool {
		return k.Metric == record.Latency && k.Scenario == sum.Scenario
	})
	if c, ok := last.Counters[sum.Scenario]; ok {
		ss.Target = c.TargetRate
	}
	return ss
}

// newest is the rate and percentiles of the latencies keep selects in the
// interval last (nil percentiles when it saw no request): the status line's
// figures, for the run and for each scenario.
func newest(last rundir.Interval, keep func(record.Key) bool) (rate float64, p50, p95, p99 *float64) {
	lat := record.Series(last.Histograms).Merged(keep)
	if secs := (last.End - last.Start).Seconds(); secs > 0 {
		rate = float64(lat.Count()) / secs
	}
	if lat.Count() > 0 {
		l := lat.Latencies()
		p50, p95, p99 = num(l.P50), num(l.P95), num(l.P99)
	}
	return rate, p50, p95, p99
}

func num(ms float64) *float64 {
	if math.IsNaN(ms) || math.IsInf(ms, 0) {
		return nil
	}
	return &ms
}
