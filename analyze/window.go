package analyze

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/knee-dev/knee/record"
	"github.com/knee-dev/knee/rundir"
)

// DefaultWindow is the window Windows uses when given 0 (k6's and the article's 10 s).
const DefaultWindow = 10 * time.Second

// WindowMeanTolerance is how far (relative) the mean of the windows' p99 may
// stray from the merged p99 before WindowSeries carries a warning.
const WindowMeanTolerance = 0.10

// WindowLatencies are one window's percentiles in milliseconds.
type WindowLatencies struct {
	P50 float64 `json:"p50"`
	P95 float64 `json:"p95"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

// Window is one time window of a series: its throughput and its own percentiles.
type Window struct {
	StartS    float64         `json:"start_s"`
	EndS      float64         `json:"end_s"`
	Requests  int64           `json:"requests"`
	Rate      float64         `json:"rate"`                  // achieved req/s
	Target    float64         `json:"target_rate,omitempty"` // offered req/s (open model, whole scenario)
	Dropped   int64           `json:"dropped,omitempty"`     // whole scenario
	LatencyMS WindowLatencies `json:"latency_ms"`
}

// WindowSeries is one series cut into windows. Scenario and Name are empty
// for the series merged across tags.
type WindowSeries struct {
	Scenario string   `json:"scenario,omitempty"`
	Name     string   `json:"name,omitempty"`
	Windows  []Window `json:"windows"`
	// MergedMS are the percentiles of every request of the series: the right numbers.
	MergedMS record.Latencies `json:"merged_ms"`
	// WindowP99MeanMS is the average of the windows' p99: the wrong number,
	// shown so that the difference can be seen.
	WindowP99MeanMS float64 `json:"window_p99_mean_ms"`
	Warning         string  `json:"warning,omitempty"`

	window time.Duration
}

// WindowReport is Windows' answer: the series merged across tags, then,
// when there is more than one, one series per (scenario, request name).
type WindowReport struct {
	WindowS float64        `json:"window_s"`
	All     WindowSeries   `json:"all"`
	ByTag   []WindowSeries `json:"by_tag,omitempty"`

	first time.Duration // the first interval's start, for ExtendWindows
}

// Windows cuts r into windows of the given length (0 means DefaultWindow),
// aligned to the first interval, over the latency series keep accepts (nil
// keeps all). An interval belongs to the window its start falls in.
func Windows(r *rundir.Dir, window time.Duration, keep func(record.Key) bool) WindowReport {
	return ExtendWindows(r, window, keep, WindowReport{})
}

// ExtendWindows is Windows(r, window, keep) for a run that has grown since
// prev was cut from it with the same window and keep (a live run): every
// window of prev but its last was complete then, since intervals come in
// time order, so it is kept as it is and only the windows from prev's last
// on are merged again. A zero prev, or one of another window or first
// interval, computes everything.
func ExtendWindows(r *rundir.Dir, window time.Duration, keep func(record.Key) bool, prev WindowReport) WindowReport {
	if window <= 0 {
		window = DefaultWindow
	}
	all := keep == nil
	if all {
		keep = func(record.Key) bool { return true }
	}
	latencyKeep := func(k record.Key) bool { return k.Metric == record.Latency && keep(k) }
	tags := latencyTags(r, latencyKeep)
	namesIn := countNames(tags)
	ownNames := scenarioNames(r)

	rep := WindowReport{WindowS: window.Seconds()}
	scenarios := []string{""} // every scenario
	if !all {
		scenarios = scenarios[:0]
		for sc := range namesIn {
			scenarios = append(scenarios, sc)
		}
	}
	if prev.WindowS != window.Seconds() || len(r.Intervals) == 0 || prev.first != r.Intervals[0].Start {
		prev = WindowReport{}
	}
	rep.All = windowSeries(r, window, latencyKeep, scenarios, prev.All.Windows)
	if len(r.Intervals) > 0 {
		rep.first = r.Intervals[0].Start
	}

	if len(tags) < 2 {
		return rep // the only tag is All
	}
	for _, tag := range tags {
		tagKeep := func(k record.Key) bool {
			return latencyKeep(k) && k.Scenario == tag.Scenario && k.Name == tag.Name
		}
		var own []string
		if ownNames[tag.Scenario] == 1 {
			own = []string{tag.Scenario} // the tag is its whole scenario
		}
		var was []Window
		for _, p := range prev.ByTag {
			if p.Scenario == tag.Scenario && p.Name == tag.Name {
				was = p.Windows
			}
		}
		s := windowSeries(r, window, tagKeep, own, was)
		s.Scenario, s.Name = tag.Scenario, tag.Name
		rep.ByTag = append(rep.ByTag, s)
	}
	return rep
}

// scenarioNames counts the request names each scenario recorded latencies for.
func scenarioNames(r *rundir.Dir) map[string]int {
	return countNames(latencyTags(r, func(k record.Key) bool { return k.Metric == record.Latency }))
}

func countNames(tags []Selector) map[string]int {
	n := make(map[string]int)
	for _, t := range tags {
		n[t.Scenario]++
	}
	return n
}

// windowSeries builds one series. Scenario-level throughput (target, dropped)
// is summed over scenarios ("" = all); pass none for a series that is only
// part of a scenario, since counters are not kept per request name.
// The windows of done but its last are taken as they are (see ExtendWindows).
func windowSeries(r *rundir.Dir, window time.Duration, keep func(record.Key) bool, scenarios []string, done []Window) WindowSeries {
	s := WindowSeries{window: window}
	if len(r.Intervals) == 0 {
		return s
	}
	ivs := sortedIntervals(r.Intervals)
	first, end := ivs[0].Start, ivs[len(ivs)-1].End
	var p99Sum float64
	var withData int
	from := first
	if len(done) > 1 {
		s.Windows = append(s.Windows, done[:len(done)-1]...)
		for _, w := range s.Windows {
			if w.Requests > 0 {
				p99Sum += w.LatencyMS.P99
				withData++
			}
		}
		// Windows are sparse: start again at the last kept window's successor.
		last := s.Windows[len(s.Windows)-1]
		from = first + time.Duration(math.Round(last.StartS/window.Seconds())+1)*window
	}
	// Sparse: only windows that some interval starts in, so time without
	// data costs nothing, and each interval is visited once per series (a
	// view of the window's intervals, not a scan of the run, per window).
	view := rundir.Dir{Dir: r.Dir, Meta: r.Meta}
	spanEnd := measuredSpan(r)
	i := sort.Search(len(ivs), func(i int) bool { return ivs[i].Start >= from })
	for i < len(ivs) {
		from = first + (ivs[i].Start-first)/window*window
		to := min(from+window, end)
		j := i + sort.Search(len(ivs)-i, func(k int) bool { return ivs[i+k].Start >= from+window })
		view.Intervals = ivs[i:j]
		i = j
		h := view.Merged(keep, from, to)
		w := Window{
			StartS:   (from - first).Seconds(),
			EndS:     (to - first).Seconds(),
			Requests: h.Count(),
			LatencyMS: WindowLatencies{
				P50: durationMS(h.Percentile(50)),
				P95: durationMS(h.Percentile(95)),
				P99: durationMS(h.Percentile(99)),
				Max: durationMS(h.Max()),
			},
		}
		if to > from {
			w.Rate = float64(w.Requests) / (to - from).Seconds()
		}
		for _, sc := range scenarios {
			w.Target += targetRateOf(&view, sc, from, to)
			w.Dropped += countersOf(&view, sc, from, to).DroppedIterations
		}
		if w.Requests == 0 && w.Dropped == 0 && spanEnd > 0 && from >= first+spanEnd {
			continue // the tail after the load's end (the final flush): nothing was offered or measured
		}
		if w.Requests > 0 {
			p99Sum += w.LatencyMS.P99
			withData++
		}
		s.Windows = append(s.Windows, w)
	}
	s.MergedMS = r.Merged(keep, 0, 0).Latencies()
	if withData > 0 {
		s.WindowP99MeanMS = p99Sum / float64(withData)
	}
	s.Warning = averagedPercentileWarning(s.WindowP99MeanMS, s.MergedMS.P99, window)
	return s
}

// averagedPercentileWarning explains, when the two differ by more than
// WindowMeanTolerance, why the mean of windowed p99s is not the p99.
func averagedPercentileWarning(meanMS, mergedMS float64, window time.Duration) string {
	if mergedMS <= 0 || math.Abs(meanMS-mergedMS)/mergedMS <= WindowMeanTolerance {
		return ""
	}
	return fmt.Sprintf("the average of the %s windows' p99 (%.1f ms) is not the p99 of the run (%.1f ms, %+.0f%%): "+
		"a percentile depends on the order of all values, and a window with few slow requests weighs as much "+
		"as one with many, so percentiles cannot be averaged; knee merges the histograms instead",
		windowLabel(window), meanMS, mergedMS, 100*(meanMS-mergedMS)/mergedMS)
}

// Line is the article's one-line view of the series:
// "p99 per 10s: [1.3, 1.1, ...] avg= 1141.7 overall= 4230.6" (milliseconds).
// Windows without requests print as "-" and do not count in avg.
func (s WindowSeries) Line() string {
	vals := make([]string, len(s.Windows))
	for i, w := range s.Windows {
		if w.Requests == 0 {
			vals[i] = "-"
			continue
		}
		vals[i] = fmt.Sprintf("%.1f", w.LatencyMS.P99)
	}
	label := windowLabel(s.window)
	if s.window == 0 && len(s.Windows) > 0 {
		label = windowLabel(time.Duration((s.Windows[0].EndS - s.Windows[0].StartS) * float64(time.Second)))
	}
	return fmt.Sprintf("p99 per %s: [%s] avg= %.1f overall= %.1f",
		label, strings.Join(vals, ", "), s.WindowP99MeanMS, s.MergedMS.P99)
}

// Line is the line of the series merged across tags.
func (r WindowReport) Line() string { return r.All.Line() }

// windowLabel prints a window length compactly: "10s", "1m", "500ms".
func windowLabel(d time.Duration) string {
	switch {
	case d >= time.Minute && d%time.Minute == 0:
		return fmt.Sprintf("%dm", d/time.Minute)
	case d >= time.Second && d%time.Second == 0:
		return fmt.Sprintf("%ds", d/time.Second)
	}
	return d.String()
}

// sortedIntervals is ivs in order of start (a copy only when it is not).
func sortedIntervals(ivs []rundir.Interval) []rundir.Interval {
	less := func(a, b rundir.Interval) int { return cmp.Compare(a.Start, b.Start) }
	if slices.IsSortedFunc(ivs, less) {
		return ivs
	}
	out := slices.Clone(ivs)
	slices.SortFunc(out, less)
	return out
}

// latencyTags lists the (scenario, name) pairs of the latency series keep
// accepts, in a stable order.
func latencyTags(r *rundir.Dir, keep func(record.Key) bool) []Selector {
	seen := make(map[Selector]bool)
	var tags []Selector
	for _, iv := range r.Intervals {
		for k := range iv.Histograms {
			t := Selector{Scenario: k.Scenario, Name: k.Name}
			if keep(k) && !seen[t] {
				seen[t] = true
				tags = append(tags, t)
			}
		}
	}
	// Sorting tag names (not latencies) keeps the report stable across map order.
	sort.Slice(tags, func(i, j int) bool {
		if tags[i].Scenario != tags[j].Scenario {
			return tags[i].Scenario < tags[j].Scenario
		}
		return tags[i].Name < tags[j].Name
	})
	return tags
}
