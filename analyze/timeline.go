package analyze

import (
	"fmt"
	"sort"
	"time"

	"github.com/knee-dev/knee/record"
	"github.com/knee-dev/knee/rundir"
)

// The resolution rule of every chart over time (the HTML report's and the
// live dashboard's): one point per interval (1 s) for runs up to
// FineChartSpan, beyond it the fewest whole intervals per window that keep
// the run within MaxChartWindows windows. A coarse window still carries its
// max latency and its highest VU count, so a short spike is not averaged away.
const (
	FineChartSpan   = 5 * time.Minute
	MaxChartWindows = 300
)

// ChartWindow is the window of the charts over time of r (see FineChartSpan):
// the run's interval (at least 1 s), or a whole multiple of it for long runs.
func ChartWindow(r *rundir.Dir) time.Duration {
	if r == nil || len(r.Intervals) == 0 {
		return time.Second
	}
	// The median length, to 10 ms: each interval's own jitters with the
	// machine's load, and the shortest (the most common when none repeats)
	// made a 500 ms run's windows 1.5 s (three intervals to reach 1 s).
	step := roundTo(nominalInterval(r), 10*time.Millisecond)
	if step <= 0 {
		return time.Second
	}
	if step < time.Second {
		step *= (time.Second + step - 1) / step
	}
	span := r.Intervals[len(r.Intervals)-1].End - r.Intervals[0].Start
	if span <= FineChartSpan {
		return step
	}
	n := (span + step - 1) / step
	return step * max(1, (n+MaxChartWindows-1)/MaxChartWindows)
}

// TimePoint is one chart window of a run: everything the charts over time draw.
type TimePoint struct {
	StartS   float64 `json:"start_s"`
	EndS     float64 `json:"end_s"`
	Requests int64   `json:"requests"`
	Rate     float64 `json:"rate"`             // achieved req/s
	Target   float64 `json:"target,omitempty"` // offered req/s; 0 in a closed model
	// LatencyMS are the percentiles of the window's merged histogram;
	// SendLagMS those of its send lag (nil when none was recorded: closed model).
	LatencyMS WindowLatencies  `json:"latency_ms"`
	SendLagMS *WindowLatencies `json:"send_lag_ms,omitempty"`
	Errors    int64            `json:"errors"`
	Failed    int64            `json:"failed"`
	Dropped   int64            `json:"dropped"`
	ByStatus  map[string]int64 `json:"by_status,omitempty"` // "2xx".. as counted
	// Data rates in bytes/s over the window.
	BytesInRate  float64 `json:"bytes_in_rate"`
	BytesOutRate float64 `json:"bytes_out_rate"`
	// A k6 script's check() outcomes in the window.
	ChecksPassed int64 `json:"checks_passed,omitempty"`
	ChecksFailed int64 `json:"checks_failed,omitempty"`
	// A k6 script's iterations that finished in the window (k6's
	// iterations), their rate per second of the window, and the percentiles
	// of their durations (k6's iteration_duration; nil when none finished).
	Iterations    int64            `json:"iterations,omitempty"`
	IterationRate float64          `json:"iteration_rate,omitempty"`
	IterationMS   *WindowLatencies `json:"iteration_ms,omitempty"`
	// The phases of a k6 script's requests in the window (every hop of a
	// redirect chain, as k6 counts them); nil when none was timed.
	PhasesMS *RequestPhases `json:"phases_ms,omitempty"`
	// The highest busy and allocated VU counts of the window's intervals.
	BusyVUs int `json:"busy_vus"`
	VUs     int `json:"vus"`
}

// RequestPhases are each phase's percentiles in one window: k6's
// http_req_blocked, _connecting, _tls_handshaking, _sending, _waiting and
// _receiving (see request.Timings for what each covers).
type RequestPhases struct {
	Blocked        WindowLatencies `json:"blocked"`
	Connecting     WindowLatencies `json:"connecting"`
	TLSHandshaking WindowLatencies `json:"tls_handshaking"`
	Sending        WindowLatencies `json:"sending"`
	Waiting        WindowLatencies `json:"waiting"`
	Receiving      WindowLatencies `json:"receiving"`
}

// ScenarioTimeline is one scenario's points.
type ScenarioTimeline struct {
	Scenario string      `json:"scenario"`
	Points   []TimePoint `json:"points"`
}

// FaultSpan is a fault applied during the run, in the timeline's seconds: a
// freeze from its freeze to its thaw (or the run's end when none was
// recorded), a fault with a duration over it.
type FaultSpan struct {
	Label  string  `json:"label"`
	StartS float64 `json:"start_s"`
	EndS   float64 `json:"end_s"`
}

// Timeline is a run cut into chart windows: the whole run, each scenario
// when there are several, and the faults.
type Timeline struct {
	WindowS   float64            `json:"window_s"`
	Points    []TimePoint        `json:"points"`
	Scenarios []ScenarioTimeline `json:"scenarios,omitempty"`
	Faults    []FaultSpan        `json:"faults,omitempty"`

	window time.Duration
	first  time.Duration
}

// TimelineOf cuts r into windows of the given length (0: ChartWindow(r)),
// aligned to the first interval; an interval belongs to the window its start
// falls in, as in Windows.
func TimelineOf(r *rundir.Dir, window time.Duration) Timeline {
	return ExtendTimeline(r, window, Timeline{})
}

// ExtendTimeline is TimelineOf for a run that has grown since prev was cut
// from it with the same window (a live run): prev's points but its last
// were complete and are kept; only the rest is merged again.
func ExtendTimeline(r *rundir.Dir, window time.Duration, prev Timeline) Timeline {
	if window <= 0 {
		window = ChartWindow(r)
	}
	t := Timeline{WindowS: window.Seconds(), window: window}
	if r == nil || len(r.Intervals) == 0 {
		return t
	}
	t.first = r.Intervals[0].Start
	if prev.window != window || prev.first != t.first {
		prev = Timeline{}
	}
	names := scenariosOf(r)
	t.Points = timePoints(r, window, "", prev.Points)
	if len(names) > 1 {
		for _, sc := range names {
			var was []TimePoint
			for _, p := range prev.Scenarios {
				if p.Scenario == sc {
					was = p.Points
				}
			}
			t.Scenarios = append(t.Scenarios, ScenarioTimeline{Scenario: sc, Points: timePoints(r, window, sc, was)})
		}
	}
	t.Faults = faultSpans(r.Meta.Faults, t.first, r.Intervals[len(r.Intervals)-1].End)
	return t
}

// scenariosOf lists the scenarios r recorded anything for, sorted.
func scenariosOf(r *rundir.Dir) []string {
	seen := map[string]bool{}
	for _, iv := range r.Intervals {
		for name := range iv.Counters {
			seen[name] = true
		}
		for k := range iv.Histograms {
			if k.Metric == record.Latency {
				seen[k.Scenario] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for name := range seen {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// timePoints cuts scenario ("": all) into windows, in one pass over the
// intervals; the points of done but its last are taken as they are.
func timePoints(r *rundir.Dir, window time.Duration, scenario string, done []TimePoint) []TimePoint {
	first, end := r.Intervals[0].Start, r.Intervals[len(r.Intervals)-1].End
	n := int((end - first + window - 1) / window)
	keep := max(0, min(len(done)-1, n))
	out := append(make([]TimePoint, 0, n), done[:keep]...)
	ivs := r.Intervals
	for len(ivs) > 0 && ivs[0].Start-first < time.Duration(keep)*window {
		ivs = ivs[1:]
	}
	trends := newK6Trends()
	for i := keep; i < n; i++ {
		from := first + time.Duration(i)*window
		to := min(from+window, end)
		lat, lag := record.NewHistogram(), record.NewHistogram()
		trends.reset()
		var c record.Counters
		var target, seconds float64
		p := TimePoint{StartS: (from - first).Seconds(), EndS: (to - first).Seconds()}
		for len(ivs) > 0 && ivs[0].Start < to {
			iv := ivs[0]
			ivs = ivs[1:]
			for k, h := range iv.Histograms {
				if scenario != "" && k.Scenario != scenario {
					continue
				}
				switch k.Metric {
				case record.Latency:
					lat.Merge(h)
				case record.SendLag:
					lag.Merge(h)
				case record.Trend:
					trends.merge(k.Name, h)
				}
			}
			secs := (iv.End - iv.Start).Seconds()
			seconds += secs
			var busy, vus int
			for name, ic := range iv.Counters {
				if scenario != "" && name != scenario {
					continue
				}
				c.Add(ic.Counters)
				target += ic.TargetRate * secs
				busy += ic.BusyVUs
				vus += ic.VUs
			}
			p.BusyVUs, p.VUs = max(p.BusyVUs, busy), max(p.VUs, vus)
		}
		p.Requests = lat.Count()
		p.LatencyMS = windowLatencies(lat)
		if lag.Count() > 0 {
			l := windowLatencies(lag)
			p.SendLagMS = &l
		}
		p.Iterations, p.IterationMS = trends.count(0), trends.latencies(0)
		p.PhasesMS = trends.phases()
		if secs := (to - from).Seconds(); secs > 0 {
			p.Rate = float64(p.Requests) / secs
			p.IterationRate = float64(p.Iterations) / secs
			p.BytesInRate, p.BytesOutRate = float64(c.BytesIn)/secs, float64(c.BytesOut)/secs
		}
		if seconds > 0 {
			p.Target = target / seconds
		}
		p.Errors, p.Failed, p.Dropped = c.Errors, c.Failed, c.DroppedIterations
		p.ChecksPassed, p.ChecksFailed = c.ChecksPassed, c.ChecksFailed
		for k, v := range c.ByStatus {
			if v != 0 {
				if p.ByStatus == nil {
					p.ByStatus = map[string]int64{}
				}
				p.ByStatus[k] = v
			}
		}
		out = append(out, p)
	}
	return out
}

// k6Trends merges, window by window, the Trend series of a k6 script that
// the charts draw: iteration durations (slot 0) and the request phases
// (slots 1 to 6, record.PhaseNames' order). Its histograms (~190 KB each)
// are made on first use, so other runs pay nothing, and reset for each
// window rather than made again.
type k6Trends struct {
	slot  map[string]int
	hists [1 + len(record.Phases{})]*record.Histogram
}

func newK6Trends() *k6Trends {
	t := &k6Trends{slot: map[string]int{record.IterationDuration: 0}}
	for i, name := range record.PhaseNames() {
		t.slot[name] = i + 1
	}
	return t
}

// merge adds h to its series' slot; other Trends are not charted.
func (t *k6Trends) merge(name string, h *record.Histogram) {
	i, ok := t.slot[name]
	if !ok {
		return
	}
	if t.hists[i] == nil {
		t.hists[i] = record.NewHistogram()
	}
	t.hists[i].Merge(h)
}

func (t *k6Trends) reset() {
	for _, h := range t.hists {
		if h != nil {
			h.Reset()
		}
	}
}

func (t *k6Trends) count(i int) int64 {
	if t.hists[i] == nil {
		return 0
	}
	return t.hists[i].Count()
}

// latencies are slot i's percentiles, nil when the window has no value.
func (t *k6Trends) latencies(i int) *WindowLatencies {
	if t.count(i) == 0 {
		return nil
	}
	l := windowLatencies(t.hists[i])
	return &l
}

// phases are the request phases' percentiles, nil when no request was timed.
func (t *k6Trends) phases() *RequestPhases {
	var l [len(record.Phases{})]WindowLatencies
	for i := range l {
		if t.count(i+1) == 0 {
			return nil // every request times every phase: one missing, all are
		}
		l[i] = windowLatencies(t.hists[i+1])
	}
	return &RequestPhases{Blocked: l[0], Connecting: l[1], TLSHandshaking: l[2], Sending: l[3], Waiting: l[4], Receiving: l[5]}
}

func windowLatencies(h *record.Histogram) WindowLatencies {
	return WindowLatencies{
		P50: durationMS(h.Percentile(50)), P95: durationMS(h.Percentile(95)),
		P99: durationMS(h.Percentile(99)), Max: durationMS(h.Max()),
	}
}

// faultSpans pairs each freeze with the thaw of its target that follows;
// a freeze not thawed within the run lasts to its end. Faults that failed
// changed nothing and are left out. Times are from first, the timeline's zero.
func faultSpans(faults []rundir.Fault, first, end time.Duration) []FaultSpan {
	var out []FaultSpan
	open := map[string]int{} // target → index in out of its open freeze
	secs := func(d time.Duration) float64 { return max(0, (d - first).Seconds()) }
	for _, f := range faults {
		if f.Error != "" {
			continue
		}
		switch {
		case f.Kind == "thaw":
			if i, ok := open[f.Target]; ok {
				out[i].EndS = secs(f.At)
				delete(open, f.Target)
			}
		case f.Kind == "freeze" && f.For <= 0:
			open[f.Target] = len(out)
			out = append(out, FaultSpan{Label: "freeze " + f.Target, StartS: secs(f.At), EndS: secs(end)})
		default:
			to := end
			if f.For > 0 {
				to = min(end, f.At+f.For)
			}
			out = append(out, FaultSpan{Label: fmt.Sprintf("%s %s", f.Kind, f.Target), StartS: secs(f.At), EndS: secs(to)})
		}
	}
	return out
}
