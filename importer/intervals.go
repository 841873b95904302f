package importer

import (
	"fmt"
	"time"

	"github.com/knee-dev/knee/internal/version"
	"github.com/knee-dev/knee/record"
	"github.com/knee-dev/knee/redact"
	"github.com/knee-dev/knee/rundir"
)

// maxJump is the largest forward jump between timestamps that is taken as
// a pause in the test rather than a corrupt timestamp.
const maxJump = 6 * time.Hour

// maxQuiet is the longest gap between rows written as intervals without
// requests (a stall the analysis must see); a longer one is taken as a
// pause between tests and jumped over.
const maxQuiet = time.Hour

// otherName is the name series beyond Options.MaxSeries are folded into.
const otherName = record.OtherName

// defaultScenario is k6's name for the scenario of a script without scenarios.
const defaultScenario = "default"

// bucket is one open interval.
type bucket struct {
	idx    int64
	hists  []*record.Histogram // by series id; nil when the series saw nothing
	byScen map[string]*record.Counters
	vus    int
	hasVUs bool
	// start and end replace the interval grid for logs that bring their own
	// interval times (hlog), when builder.explicit is set.
	start, end time.Duration
}

// builder groups timed rows into intervals and flushes every interval that
// falls out of the open window to the sink.
type builder struct {
	opt    Options
	sink   sink
	src    Format
	source string // the file's name

	started  bool
	t0       int64 // unix ns: interval index 0 starts here
	first    int64 // index of open[0]
	base     int64 // index of the run's first interval (fixed at the first flush)
	flushed  bool  // an interval was written; the window can no longer grow backwards
	open     []*bucket
	firstAt  int64 // the earliest timestamp of a row, unix ns
	lastAt   int64 // the latest
	series   seriesTable
	total    *record.Histogram // every latency, for the summary
	totals   record.Counters
	late     int64
	requests int64 // latencies recorded by request
	httpReqs int64 // k6 http_reqs, to cross-check the request count
	notes    []string
	// explicit: intervals carry their own times (bucket.start/end) since t0,
	// and the run ends at the latest end seen.
	explicit    bool
	noTimes     bool // an untimed list without a duration: no rate, no duration
	explicitEnd time.Duration
}

func newBuilder(s source, format Format) *builder {
	return &builder{
		opt: s.opt, sink: s.sink, src: format, source: s.name,
		series: newSeriesTable(s.opt.MaxSeries, redact.New(s.opt.RedactQuery...)),
		total:  record.NewHistogram(),
		totals: newCounters(),
	}
}

func newCounters() record.Counters {
	return record.Counters{ByStatus: map[string]int64{}, ErrorsByClass: map[string]int64{}}
}

// at returns the open interval that holds the unix-nanosecond time t.
// ok is false when t jumps implausibly far ahead (a corrupt timestamp).
func (b *builder) at(t int64) (bk *bucket, ok bool, err error) {
	iv := int64(b.opt.Interval)
	if !b.started {
		b.started, b.t0, b.firstAt, b.lastAt = true, t-floorMod(t, iv), t, t
		b.open = []*bucket{b.newBucket(0)}
	}
	idx := floorDiv(t-b.t0, iv)
	last := b.first + int64(len(b.open)) - 1
	if idx > last {
		if t-b.lastAt > int64(maxJump) {
			return nil, false, nil
		}
		if idx-last > int64(b.opt.Window) && time.Duration(idx-last-1)*b.opt.Interval > maxQuiet {
			// A gap past maxQuiet is a pause between tests: flush what is
			// open and jump, so that it costs nothing. A shorter one is a
			// stall the rate and the stall signal must see: its quiet
			// intervals are opened, and written, as any others.
			for len(b.open) > 0 {
				if err := b.flushOldest(); err != nil {
					return nil, true, err
				}
			}
			b.first, last = idx, idx-1
		}
		for last < idx {
			last++
			b.open = append(b.open, b.newBucket(last))
		}
		for len(b.open) > b.opt.Window {
			if err := b.flushOldest(); err != nil {
				return nil, true, err
			}
		}
	}
	b.firstAt, b.lastAt = min(b.firstAt, t), max(b.lastAt, t)
	if idx < b.first && !b.flushed && last-idx < int64(b.opt.Window) {
		// Early rows before anything was written: grow the window backwards.
		for b.first > idx {
			b.first--
			b.open = append([]*bucket{b.newBucket(b.first)}, b.open...)
		}
	}
	if idx < b.first {
		b.late++
		return b.open[0], true, nil
	}
	return b.open[idx-b.first], true, nil
}

func (b *builder) newBucket(idx int64) *bucket {
	return &bucket{idx: idx, byScen: map[string]*record.Counters{}}
}

// empty reports whether no row fell in the bucket.
func (bk *bucket) empty() bool {
	if bk.hasVUs || len(bk.byScen) > 0 {
		return false
	}
	for _, h := range bk.hists {
		if h != nil {
			return false
		}
	}
	return true
}

func (bk *bucket) counters(scenario string) *record.Counters {
	c := bk.byScen[scenario]
	if c == nil {
		n := newCounters()
		c = &n
		bk.byScen[scenario] = c
	}
	return c
}

// request records one finished request of series id. status < 0 means
// unknown (lists, hlogs): only the request count is kept.
func (b *builder) request(bk *bucket, id int, d time.Duration, status int, failed bool, errClass string) {
	for len(bk.hists) <= id {
		bk.hists = append(bk.hists, nil)
	}
	h := bk.hists[id]
	if h == nil {
		h = record.NewHistogram()
		bk.hists[id] = h
	}
	h.Record(d)
	// Recording twice is cheaper than merging every interval into the total.
	b.total.Record(d)
	b.requests++
	c := bk.counters(b.series.keys[id].Scenario)
	c.Requests++
	if status < 0 {
		return
	}
	if status >= 100 && status < 600 {
		c.ByStatus[statusClass(status)]++
	}
	if failed {
		c.Errors++
		c.Failed++
	}
	if status == 0 {
		c.ErrorsByClass[errClass]++
	}
}

// statusClass is "1xx".."5xx" for a status in 100..599.
func statusClass(status int) string {
	switch status / 100 {
	case 1:
		return "1xx"
	case 2:
		return "2xx"
	case 3:
		return "3xx"
	case 4:
		return "4xx"
	}
	return "5xx"
}

// sample records a duration that is not a request latency (k6 iteration_duration).
func (b *builder) sample(bk *bucket, id int, d time.Duration) {
	for len(bk.hists) <= id {
		bk.hists = append(bk.hists, nil)
	}
	if bk.hists[id] == nil {
		bk.hists[id] = record.NewHistogram()
	}
	bk.hists[id].Record(d)
}

// flushOldest writes open[0] and drops it from the window.
func (b *builder) flushOldest() error {
	bk := b.open[0]
	b.open = b.open[1:]
	b.first++
	return b.flush(bk)
}

// flush writes one interval, creating the run directory first if needed.
// An interval no row fell in is written only after the first one with rows:
// a quiet spell between rows is time the test ran without replies, which
// the rate and the stall signal must see (see at for a pause).
func (b *builder) flush(bk *bucket) error {
	if bk.empty() && !b.flushed {
		return nil
	}
	if !b.flushed {
		b.base = bk.idx
		b.flushed = true
		if err := b.sink.open(b.meta(false)); err != nil {
			return err
		}
	}
	snap, extra := b.snapshot(bk)
	return b.sink.write(snap, extra)
}

// snapshot turns a bucket into what rundir.Writer takes, and adds it to the totals.
func (b *builder) snapshot(bk *bucket) (record.IntervalSnapshot, map[string]rundir.IntervalCounters) {
	iv := b.opt.Interval
	start, end := time.Duration(bk.idx-b.base)*iv, time.Duration(bk.idx-b.base+1)*iv
	if b.explicit {
		start, end = bk.start, bk.end
		b.explicitEnd = max(b.explicitEnd, end)
	}
	snap := record.IntervalSnapshot{
		Start:      start,
		End:        end,
		Histograms: make(map[record.Key]*record.Histogram, len(bk.hists)),
		Counters:   make(map[string]record.Counters, len(b.series.scenarios)),
	}
	for _, sc := range b.series.scenarios {
		bk.counters(sc) // every known scenario gets a line, idle or not
	}
	for id, h := range bk.hists {
		if h == nil {
			continue
		}
		k := b.series.keys[id]
		snap.Histograms[k] = h
		bk.counters(k.Scenario).Clamped += h.Clamped()
	}
	var extra map[string]rundir.IntervalCounters
	if bk.hasVUs || b.opt.TargetRate > 0 {
		extra = make(map[string]rundir.IntervalCounters, len(bk.byScen))
	}
	for sc, c := range bk.byScen {
		snap.Counters[sc] = *c
		b.totals.Add(*c)
		if extra != nil {
			// k6's vus gauge is global: every scenario is given the total.
			extra[sc] = rundir.IntervalCounters{
				Scenario: sc, Start: snap.Start.Seconds(), End: snap.End.Seconds(),
				Counters: *c, TargetRate: b.opt.TargetRate, VUs: bk.vus,
			}
		}
	}
	return snap, extra
}

// finish flushes every open interval and closes the run directory.
func (b *builder) finish(bad *badRows, rows int64) (Result, error) {
	if !b.started || b.requests == 0 {
		return Result{}, fmt.Errorf("import: %s: %w: no request latency found (%s)",
			b.source, ErrNoData, noDataHint(b.src))
	}
	for len(b.open) > 0 {
		if err := b.flushOldest(); err != nil {
			return Result{}, err
		}
	}
	if n := bad.note(); n != "" {
		b.notes = append(b.notes, n)
	}
	if b.late > 0 {
		b.notes = append(b.notes, fmt.Sprintf("%d rows came later than the %d-interval window and were counted in its oldest interval", b.late, b.opt.Window))
	}
	if n := b.series.cap.Note(); n != "" {
		b.notes = append(b.notes, n)
	}
	if b.totals.Clamped > 0 {
		b.notes = append(b.notes, fmt.Sprintf("%d latencies negative or above 1 h were clamped", b.totals.Clamped))
	}
	if b.httpReqs > 0 && b.httpReqs != b.totals.Requests {
		b.notes = append(b.notes, fmt.Sprintf("k6 http_reqs sums to %d but %d http_req_duration rows were read", b.httpReqs, b.totals.Requests))
	}
	meta := b.meta(true)
	if err := b.sink.close(meta); err != nil {
		return Result{}, err
	}
	return Result{Meta: meta, Rows: rows, Skipped: bad.count, FirstBad: bad.first, Late: b.late, Clamped: b.totals.Clamped}, nil
}

func noDataHint(f Format) string {
	switch f {
	case FormatHlog:
		return "the log holds no interval histogram lines"
	case FormatList:
		return "give one latency per line"
	}
	return "k6 writes http_req_duration samples for HTTP requests; was the script making any?"
}

// meta is run.json as far as the import knows it.
func (b *builder) meta(finished bool) rundir.Meta {
	iv := b.opt.Interval
	started := time.Unix(0, b.t0+b.base*int64(iv)).UTC()
	end := b.first + int64(len(b.open)) // one past the last interval, flushed or open
	dur := time.Duration(end-b.base) * iv
	if b.explicit {
		dur = b.explicitEnd
	}
	m := rundir.Meta{
		FormatVersion: rundir.FormatVersion,
		KneeVersion:   version.String(),
		Source:        string(b.src),
		SourceFile:    b.source,
		Started:       started,
		Ended:         started.Add(dur),
		Model:         b.opt.Model,
		Scenarios:     b.series.meta(b.opt),
		Env:           rundir.Environment{KneeVersion: version.String()},
		Counters:      b.totals,
		Finished:      finished,
		Notes:         append(append([]string(nil), b.notes...), sourceNotes(b.src)...),
		NoTimestamps:  b.noTimes,
	}
	// The run's length is what its timestamps span: the intervals' count
	// would add up to one interval (the first and last are partial), a 15 s
	// run of whole-second stamps reading as 16 s. n requests at a steady
	// rate r over whole-second stamps fill the seconds between the first
	// and the last stamp, partial ends included, with exactly r × span.
	// Each scenario's Span says so to analyze, which measures by it.
	span := dur
	if !b.explicit && b.lastAt > b.firstAt {
		span = time.Duration(b.lastAt - b.firstAt)
		for i := range m.Scenarios {
			m.Scenarios[i].Span = span
		}
	}
	m.Summary = rundir.Summary{
		Model:             b.opt.Model,
		Executor:          b.opt.Executor,
		Requests:          b.totals.Requests,
		TargetRate:        b.opt.TargetRate,
		DroppedIterations: b.totals.DroppedIterations,
		Errors:            b.totals.Errors,
		ErrorsByClass:     b.totals.ErrorsByClass,
		DurationS:         span.Seconds(),
		Warnings:          m.Notes,
	}
	if finished {
		m.Summary.LatencyMS = b.total.Latencies()
		m.Summary.SlowerThan1s = b.total.CountAbove(time.Second)
	}
	if b.noTimes {
		m.Summary.DurationS, m.Summary.NoTimestamps = 0, true
	} else if span > 0 {
		m.Summary.Rate = float64(b.totals.Requests) / span.Seconds()
	}
	return m
}

// sourceNotes say what an imported run cannot tell.
func sourceNotes(f Format) []string {
	switch f {
	case FormatHlog:
		return []string{"imported from an HdrHistogram log: request counts come from the histograms; statuses and errors are unknown"}
	case FormatList:
		return []string{"imported from a latency list: statuses and errors are unknown"}
	}
	return []string{k6LatencyNote, k6ErrorsNote}
}

const (
	k6LatencyNote = "k6 http_req_duration counts from the actual send, not the intended start: coordinated omission is not visible in it"
	k6ErrorsNote  = "errors follow k6's http_req_failed (expected_response tag; without it, status 0 or >= 400)"
)

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

func floorMod(a, b int64) int64 { return a - floorDiv(a, b)*b }
