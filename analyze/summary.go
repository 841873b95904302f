package analyze

import (
	"fmt"
	"strings"
	"time"

	"github.com/knee-dev/knee/record"
	"github.com/knee-dev/knee/rundir"
)

// DefaultSendLagLimit is the send-lag p99 above which a run is reported as
// generator-limited: knee itself started requests late.
const DefaultSendLagLimit = time.Millisecond

// FloorFactor is how far above the machine's own wake-up floor (p99, see
// rundir.WakeFloor) send lag must be before knee blames itself: up to it, a
// thread of any generator on this machine would have woken as late, and a
// warning that fires on every run of a shared machine teaches users to
// ignore warnings. 3× the floor's p99 leaves the floor's own run-to-run
// spread (bench/floor.sh: p99 257-369 µs on one machine) well inside.
const FloorFactor = 3.0

// floorOf is the floor of record for the send lag of scenario ("" for the
// whole run). An open scenario's is the floor measured beside it, at its own
// gap between starts, or the floor before the run when none was (its starts
// came often) or none of its waits fitted in the run (then unmeasured is the
// floor beside it, whose Period says the gap). Several scenarios' send lag,
// merged, is compared with the highest of their floors (by p99): each
// scenario's own block is judged on its own floor, and the run is not blamed
// on knee for what its slowest scenario's long waits cost any thread.
func floorOf(r *rundir.Dir, scenario string) (floor, unmeasured *rundir.WakeFloor) {
	before := r.Meta.Env.WakeFloor
	var short *rundir.WakeFloor
	for _, sc := range r.Meta.Scenarios {
		if scenario != "" && sc.Name != scenario || sc.Model != "open" {
			continue
		}
		f := before
		if b := sc.WakeFloor; b != nil && b.Waits > 0 {
			f = b
		} else if b != nil {
			short = b
		}
		if floor == nil || f != nil && f.P99MS > floor.P99MS {
			floor = f
		}
	}
	if floor == nil {
		return before, nil
	}
	if floor == before {
		return floor, short
	}
	return floor, nil
}

// FloorWaits says what waits a floor was measured with, and when: "1 ms
// before the run", "1 s beside the run", "10 ms to 1 s beside the run" (a
// ramp's gaps).
func FloorWaits(f rundir.WakeFloor) string {
	length := periodText(f.Period)
	if f.PeriodMax > 0 && periodText(f.PeriodMax) != length {
		length += " to " + periodText(f.PeriodMax)
	}
	if f.Beside {
		return length + " beside the run"
	}
	return length + " before the run"
}

// periodText is a wait's length as humanDuration prints it, without
// trailing zeros: "1 s", "1 ms", "333.3 ms".
func periodText(d time.Duration) string {
	num, unit, _ := strings.Cut(humanDuration(d), " ")
	if strings.Contains(num, ".") {
		num = strings.TrimRight(strings.TrimRight(num, "0"), ".")
	}
	return num + " " + unit
}

// floorDuration is a floor figure in milliseconds as a Duration.
func floorDuration(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }

// Selector picks series by tag. An empty field matches every value.
// Counters (errors, dropped iterations) are kept per scenario only, so Name
// narrows latencies and request counts but not them.
type Selector struct {
	Scenario string `json:"scenario,omitempty"`
	Name     string `json:"name,omitempty"`
}

// Keep reports whether k's scenario and name match s (any metric).
func (s Selector) Keep(k record.Key) bool {
	return (s.Scenario == "" || s.Scenario == k.Scenario) && (s.Name == "" || s.Name == k.Name)
}

// Of returns a keep function for metric m restricted to s, for Dir.Merged.
func (s Selector) Of(m record.Metric) func(record.Key) bool {
	return func(k record.Key) bool { return k.Metric == m && s.Keep(k) }
}

// String is the selector in threshold syntax ("{scenario:a,name:GET /x}"), "" when empty.
func (s Selector) String() string {
	switch {
	case s.Scenario != "" && s.Name != "":
		return "{scenario:" + s.Scenario + ",name:" + s.Name + "}"
	case s.Scenario != "":
		return "{scenario:" + s.Scenario + "}"
	case s.Name != "":
		return "{name:" + s.Name + "}"
	}
	return ""
}

// SummaryOptions tunes Summarize. The zero value summarises the whole run.
type SummaryOptions struct {
	Select Selector
	// SendLagLimit is the send-lag p99 above which the run is flagged
	// generator-limited; 0 means DefaultSendLagLimit.
	SendLagLimit time.Duration
}

// Summarize is the end-of-run summary of r (or of the series opt selects):
// counts and rates from the counters, latencies from the merged histograms.
func Summarize(r *rundir.Dir, opt SummaryOptions) rundir.Summary {
	sel := opt.Select
	lat := r.Merged(sel.Of(record.Latency), 0, 0)
	c := countersOf(r, sel.Scenario, 0, 0)
	span := measuredSpan(r)

	s := rundir.Summary{
		Model:             modelOf(r, sel.Scenario),
		Executor:          executorOf(r, sel.Scenario),
		Requests:          requestsOf(c, lat, sel),
		TargetRate:        targetRateOf(r, sel.Scenario, 0, 0),
		DroppedIterations: c.DroppedIterations,
		DroppedLate:       c.DroppedLate,
		Errors:            c.Errors,
		ErrorsByClass:     nonZero(c.ErrorsByClass),
		LatencyMS:         lat.Latencies(),
		SlowerThan1s:      lat.CountAbove(time.Second),
		DurationS:         span.Seconds(),
		GeneratorCPUS:     r.Meta.Env.Generator.CPUSeconds,
		Interrupted:       r.Meta.Interrupted,
	}
	if sel.Scenario != "" {
		span = scenarioSpan(r, sel.Scenario, span)
		s.DurationS = span.Seconds()
		s.Scenario = sel.Scenario
	}
	if s.Model == "mixed" {
		s.TargetRate = 0 // its closed scenarios have none, so the open ones' sum is no target of the run
	}
	if r.Meta.NoTimestamps {
		span, s.DurationS, s.TargetRate = 0, 0, 0 // nothing says when the latencies were taken
		s.NoTimestamps = true
	}
	if span > 0 {
		s.Rate = float64(s.Requests) / span.Seconds()
	}
	s.Failed = c.Failed
	for _, n := range c.ErrorsByClass {
		s.NoResponse += n
	}
	if sel.Scenario == "" {
		s.FirstError = r.Meta.FirstError // kept for the run, not per scenario
		if len(r.Meta.Scenarios) > 1 {
			for _, sc := range r.Meta.Scenarios {
				o := opt
				o.Select.Scenario = sc.Name
				s.Scenarios = append(s.Scenarios, rundir.ScenarioSummary{Summary: Summarize(r, o)})
			}
		}
	}
	if svc := r.Merged(sel.Of(record.Service), 0, 0); svc.Count() > 0 {
		l := svc.Latencies()
		s.ServiceMS = &l
	}
	lag := r.Merged(sel.Of(record.SendLag), 0, 0)
	if lag.Count() > 0 {
		l := lag.Latencies()
		s.SendLagMS = &l
	}
	var unmeasured *rundir.WakeFloor
	s.WakeFloor, unmeasured = floorOf(r, sel.Scenario)
	s.Warnings = append(summaryWarnings(s, lag, lat, unmeasured, opt), r.Torn...)
	if m := r.Meta; m.Source == "knee" && !m.Finished && !m.Interrupted && m.Ended.IsZero() {
		// run.json still says what rundir.Create wrote: knee never reached
		// the run's end (kill -9, a crash, the machine stopped).
		s.Warnings = append(s.Warnings, fmt.Sprintf("unfinished: knee stopped before it wrote the run's end (killed, "+
			"e.g. with kill -9, or crashed); this covers the %.1f s it had flushed, less than was asked", span.Seconds()))
	}
	return s
}

// FailureHeadline is the one line that goes above a summary in which every
// request failed, naming the first error; "" otherwise. "NO RESPONSE AT ALL"
// when not one request got a response (refused, DNS, timeouts): the target
// was never measured.
func FailureHeadline(s rundir.Summary) string {
	if s.Requests == 0 || s.Failed < s.Requests {
		return ""
	}
	what := "EVERY REQUEST FAILED"
	if s.NoResponse >= s.Requests {
		what = "NO RESPONSE AT ALL"
	}
	line := fmt.Sprintf("%s: %d of %d requests failed", what, s.Failed, s.Requests)
	if s.FirstError != "" {
		line += "; the first: " + s.FirstError
	}
	return line
}

// NoResponse reports whether requests were sent and not one got a response.
func NoResponse(s rundir.Summary) bool {
	return s.Requests > 0 && s.NoResponse >= s.Requests
}

// summaryWarnings lists what makes s less trustworthy than it looks.
// unmeasured is the floor beside the run that fitted no wait, when the
// floor before the run stands in for it.
func summaryWarnings(s rundir.Summary, lag, lat *record.Histogram, unmeasured *rundir.WakeFloor, opt SummaryOptions) []string {
	var w []string
	limit := opt.SendLagLimit
	if limit <= 0 {
		limit = DefaultSendLagLimit
	}
	if lag.Count() > 0 {
		p99 := lag.Percentile(99)
		floor := s.WakeFloor
		switch {
		case p99 <= limit:
		case floor == nil:
			w = append(w, fmt.Sprintf("generator-limited: send-lag p99 %s > %s; knee started requests late, "+
				"so latencies include its own delay (give it more CPU or fewer requests per core)",
				humanDuration(p99), humanDuration(limit)))
		case float64(p99) > FloorFactor*floor.P99MS*float64(time.Millisecond):
			short := ""
			if unmeasured != nil {
				short = fmt.Sprintf("; the run was too short for one wait of its own gap between starts (%s) beside it, "+
					"and on some machines a longer wait wakes later", periodText(unmeasured.Period))
			}
			w = append(w, fmt.Sprintf("generator-limited: send-lag p99 %s > %s and over %g× this machine's own wake-up floor "+
				"(p99 %s, a bare thread's timed waits of %s%s): knee started requests late, so latencies include "+
				"its own delay (give it more CPU or fewer requests per core)",
				humanDuration(p99), humanDuration(limit), FloorFactor, humanDuration(floorDuration(floor.P99MS)),
				FloorWaits(*floor), short))
		}
	}
	if s.Requests == 0 {
		w = append(w, "no requests were measured")
	}
	if n := s.ErrorsByClass[record.GeneratorClass]; n > 0 {
		w = append(w, fmt.Sprintf("generator-limited: knee could not send %d of %d requests (%.1f %%) for want of its own "+
			"file descriptors, local ports or memory; they never reached the target and are not among its errors, "+
			"and the rate and latencies say more about knee than about the target (raise ulimit -n, widen "+
			"net.ipv4.ip_local_port_range, lower the rate or split it among runners)", n, s.Requests, 100*float64(n)/float64(max(s.Requests, 1))))
	}
	if n := s.DroppedIterations - s.DroppedLate; n > 0 {
		w = append(w, fmt.Sprintf("%d dropped iterations: the open model found no free VU (maxVUs reached) and "+
			"did not start them; the target could not keep up with the offered rate", n))
	}
	if s.DroppedLate > 0 {
		w = append(w, fmt.Sprintf("generator-limited: %d dropped iterations were knee's: it fell behind its schedule and had "+
			"not started them by the span's end plus gracefulStop; they never reached the target (give knee more CPU, "+
			"lower the rate or split it among runners)", s.DroppedLate))
	}
	if n := lat.Clamped(); n > 0 {
		w = append(w, fmt.Sprintf("%d latencies were negative or above 1 h and were clamped", n))
	}
	if opt.Select.Name != "" {
		w = append(w, "errors and dropped iterations are counted per scenario; the name filter does not narrow them")
	}
	if s.Interrupted {
		w = append(w, "the run was interrupted: it measured less than was asked")
	}
	return w
}

// requestsOf prefers the counters; imports without counters (or a name
// filter, which counters cannot honour) fall back to the histogram count.
func requestsOf(c record.Counters, lat *record.Histogram, sel Selector) int64 {
	if sel.Name != "" || c.Requests == 0 {
		return lat.Count()
	}
	return c.Requests
}

// inWindow reports whether an interval starting at start belongs to [from, to);
// to <= 0 means the end of the run (Dir.Merged's rule).
func inWindow(start, from, to time.Duration) bool {
	return start >= from && (to <= 0 || start < to)
}

// countersOf sums the counters of scenario ("" = all) over intervals starting in [from, to).
func countersOf(r *rundir.Dir, scenario string, from, to time.Duration) record.Counters {
	var c record.Counters
	for _, iv := range r.Intervals {
		if !inWindow(iv.Start, from, to) {
			continue
		}
		for name, ic := range iv.Counters {
			if scenario == "" || scenario == name {
				c.Add(ic.Counters)
			}
		}
	}
	return c
}

// measuredSpan is the time the intervals cover, from the first start to the last end.
//
// When run.json says how long the scenarios were scheduled to start
// iterations, the span stops there, as k6's rates do: the graceful-stop drain
// after the schedule ends would otherwise dilute the rates.
func measuredSpan(r *rundir.Dir) time.Duration {
	if len(r.Intervals) == 0 {
		return 0
	}
	measured := r.Intervals[len(r.Intervals)-1].End - r.Intervals[0].Start
	var scheduled time.Duration
	for _, sc := range r.Meta.Scenarios {
		scheduled = max(scheduled, sc.StartTime+sc.Span)
	}
	if scheduled > 0 && scheduled < measured {
		measured = scheduled
	}
	if stop := r.Meta.StoppedAt; stop > 0 && stop < measured {
		return stop // interrupted: nothing started after the stop
	}
	return measured
}

// scenarioSpan is how long scenario started iterations: its span from
// run.json, cut where the run's intervals end (an interrupted run); run when
// run.json does not say.
func scenarioSpan(r *rundir.Dir, scenario string, run time.Duration) time.Duration {
	for _, sc := range r.Meta.Scenarios {
		if sc.Name != scenario || sc.Span <= 0 || len(r.Intervals) == 0 {
			continue
		}
		measured := r.Intervals[len(r.Intervals)-1].End - r.Intervals[0].Start - sc.StartTime
		if stop := r.Meta.StoppedAt; stop > 0 {
			measured = min(measured, stop-sc.StartTime)
		}
		return max(0, min(sc.Span, measured))
	}
	return run
}

// targetRateOf is the offered rate (req/s) over intervals starting in [from, to):
// the time-weighted mean of the counters' per-interval target, or else the
// sum of the open scenarios' constant targets from run.json. 0 when unknown.
func targetRateOf(r *rundir.Dir, scenario string, from, to time.Duration) float64 {
	whole := from == 0 && to <= 0
	if rate, ok := askedRate(r, scenario); whole && ok {
		return rate // exactly what was asked, not a measurement of it
	}
	var offered, seconds float64
	if whole {
		seconds = measuredSpan(r).Seconds() // the drain after the schedule offers nothing
	}
	for _, iv := range r.Intervals {
		if !inWindow(iv.Start, from, to) {
			continue
		}
		if !whole {
			seconds += (iv.End - iv.Start).Seconds()
		}
		for name, ic := range iv.Counters {
			if scenario == "" || scenario == name {
				offered += ic.TargetRate * (iv.End - iv.Start).Seconds()
			}
		}
	}
	if offered > 0 && seconds > 0 {
		return offered / seconds
	}
	rate, _ := askedRate(r, scenario)
	return rate
}

// askedRate sums the constant target rates run.json records for the open
// scenarios; ok only when every open scenario has one (no ramps).
func askedRate(r *rundir.Dir, scenario string) (sum float64, ok bool) {
	ok = true
	open := 0
	for _, sc := range r.Meta.Scenarios {
		if (scenario == "" || scenario == sc.Name) && sc.Model == "open" {
			open++
			sum += sc.TargetRate
			ok = ok && sc.TargetRate > 0
		}
	}
	return sum, ok && open > 0
}

// modelOf is the model of one scenario, or of the run when scenario is "".
func modelOf(r *rundir.Dir, scenario string) string {
	for _, sc := range r.Meta.Scenarios {
		if scenario != "" && sc.Name == scenario {
			return sc.Model
		}
	}
	return r.Meta.Model
}

// executorOf is the executor of the selected scenarios, "mixed" when they differ.
func executorOf(r *rundir.Dir, scenario string) string {
	ex := ""
	for _, sc := range r.Meta.Scenarios {
		if scenario != "" && sc.Name != scenario {
			continue
		}
		if ex != "" && ex != sc.Executor {
			return "mixed"
		}
		ex = sc.Executor
	}
	return ex
}

// nonZero drops zero entries so the JSON shows only what happened; nil when empty.
func nonZero(m map[string]int64) map[string]int64 {
	var out map[string]int64
	for k, v := range m {
		if v != 0 {
			if out == nil {
				out = make(map[string]int64)
			}
			out[k] = v
		}
	}
	return out
}

// humanDuration prints d the way the article does: "4.98 s", "8.1 ms", "350 µs".
//
// Its digits are the terminal summary's (report.Ms), so a warning quotes a
// figure as the line above it shows it.
func humanDuration(d time.Duration) string {
	ms := float64(d) / float64(time.Millisecond)
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.2f s", d.Seconds())
	case d >= 10*time.Millisecond:
		return fmt.Sprintf("%.1f ms", ms)
	case d >= time.Millisecond:
		return fmt.Sprintf("%.2f ms", ms)
	default:
		return fmt.Sprintf("%.0f µs", ms*1000)
	}
}

// durationMS converts d to float milliseconds.
func durationMS(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
