package record

import (
	"encoding/json"
	"math"
	"runtime"
	"strings"
	"sync"
	"time"
)

// Metric names what a histogram measures.
type Metric string

// The metrics knee records. Latency of the open model counts from the
// intended start; of the closed model, from the actual send.
const (
	Latency  Metric = "latency"  // end - intended start (open) or end - send (closed)
	Service  Metric = "service"  // end - actual send
	SendLag  Metric = "sendlag"  // actual send - intended start (open model only)
	Interval Metric = "interval" // closed model: one VU's iteration period (response + think)
)

func knownMetric(m Metric) bool {
	switch m {
	case Latency, Service, SendLag, Interval, Trend:
		return true
	}
	return false
}

// Key identifies one histogram series: a metric of one request name in one
// scenario. Steps of a stepped test are told apart by time, not by tag.
type Key struct {
	Metric   Metric
	Scenario string
	Name     string
}

// Tag encodes k as an hlog tag ("latency|scenario|name", with characters that
// hlog readers split on — space, comma, '|' and '%' — percent-escaped).
// Control characters and '=' are escaped too, so a tag never breaks a line.
func (k Key) Tag() string {
	return escapeTag(string(k.Metric)) + "|" + escapeTag(k.Scenario) + "|" + escapeTag(k.Name)
}

const hexDigits = "0123456789ABCDEF"

func needsEscape(c byte) bool {
	return c <= ' ' || c == ',' || c == '|' || c == '%' || c == '=' || c == 0x7f
}

func escapeTag(s string) string {
	n := 0
	for i := 0; i < len(s); i++ {
		if needsEscape(s[i]) {
			n++
		}
	}
	if n == 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 2*n)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if needsEscape(c) {
			b.WriteByte('%')
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&15])
		} else {
			b.WriteByte(c)
		}
	}
	return b.String()
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}

func unescapeTag(s string) (string, bool) {
	if !strings.Contains(s, "%") {
		return s, true
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b.WriteByte(s[i])
			continue
		}
		if i+2 >= len(s) {
			return "", false
		}
		hi, ok1 := unhex(s[i+1])
		lo, ok2 := unhex(s[i+2])
		if !ok1 || !ok2 {
			return "", false
		}
		b.WriteByte(hi<<4 | lo)
		i += 2
	}
	return b.String(), true
}

// ParseTag decodes a Tag. An empty or foreign tag becomes {Latency, "", tag}.
func ParseTag(tag string) Key {
	foreign := Key{Metric: Latency, Name: tag}
	parts := strings.Split(tag, "|")
	if len(parts) != 3 {
		return foreign
	}
	var dec [3]string
	for i, p := range parts {
		s, ok := unescapeTag(p)
		if !ok {
			return foreign
		}
		dec[i] = s
	}
	if !knownMetric(Metric(dec[0])) {
		return foreign
	}
	return Key{Metric: Metric(dec[0]), Scenario: dec[1], Name: dec[2]}
}

// Sample is one finished request as the recorder sees it.
type Sample struct {
	Key      Key           // Metric is ignored: Latency, Service, SendLag, Interval are all taken from here
	Latency  time.Duration // always set
	Service  time.Duration // always set
	SendLag  time.Duration // open model; 0 and not recorded for closed
	Interval time.Duration // closed model; 0 and not recorded for open
	Status   int           // HTTP status, 0 when the request failed
	ErrClass string        // "" or one of the ErrorClasses
	BytesIn  int64
	BytesOut int64
	Expected int8 // a k6 response callback's verdict (load.Result.Expected): 1, -1, or 0 for the default rule
}

// ErrorClasses are the error classes knee counts, in report order.
// "generator" is knee's own failure to send (no descriptor, port or
// memory), which Counters.Errors, the target's errors, leaves out.
var ErrorClasses = []string{"timeout", "refused", "reset", "dns", "tls", ProtocolClass, "other", GeneratorClass}

// GeneratorClass is the class of requests knee could not send.
const GeneratorClass = "generator"

// ProtocolClass is a reply that is not HTTP's: a status outside 100..599.
const ProtocolClass = "protocol"

// errClassIndex maps a class to its ErrorClasses slot; unknown classes are "other".
func errClassIndex(c string) int {
	switch c {
	case "timeout":
		return 0
	case "refused":
		return 1
	case "reset":
		return 2
	case "dns":
		return 3
	case "tls":
		return 4
	case ProtocolClass:
		return 5
	case GeneratorClass:
		return 7
	}
	return 6
}

// Counters are what a run counts besides latencies. JSON names are the ones
// run.json and --summary-export use.
type Counters struct {
	Requests          int64            `json:"requests"`
	Errors            int64            `json:"errors"`          // transport errors plus 5xx responses; not the generator class (knee could not send)
	Failed            int64            `json:"failed"`          // k6's http_req_failed: transport errors plus statuses >= 400, unless a script's response callback said otherwise
	ByStatus          map[string]int64 `json:"by_status"`       // "1xx".."5xx"
	ErrorsByClass     map[string]int64 `json:"errors_by_class"` // ErrorClasses
	DroppedIterations int64            `json:"dropped_iterations"`
	DroppedLate       int64            `json:"dropped_late,omitempty"` // of DroppedIterations: the open-model generator, behind its schedule, never started them (load.LateSink)
	BytesIn           int64            `json:"bytes_in"`
	BytesOut          int64            `json:"bytes_out"`
	Clamped           int64            `json:"clamped,omitempty"`
	// A k6 script's check() evaluations (k6's checks metric), by outcome.
	ChecksPassed int64 `json:"checks_passed,omitempty"`
	ChecksFailed int64 `json:"checks_failed,omitempty"`
}

// UnmarshalJSON reads counters; those written before knee counted Failed
// (no "failed" key) get Errors plus the 4xx responses, which is what the
// recorder would have counted unless a transport error followed a 4xx
// status line.
func (c *Counters) UnmarshalJSON(data []byte) error {
	type plain Counters // no methods: no recursion
	var v struct {
		plain
		Failed *int64 `json:"failed"`
	}
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	*c = Counters(v.plain)
	if v.Failed != nil {
		c.Failed = *v.Failed
	} else {
		c.Failed = c.Errors + c.ByStatus["4xx"]
	}
	return nil
}

// Add adds o into c, saturating at the int64 limits: counts read from a
// run directory someone else wrote may be huge, and a sum that wrapped
// would print as -9.2e18.
func (c *Counters) Add(o Counters) {
	c.Requests = satAdd(c.Requests, o.Requests)
	c.Errors = satAdd(c.Errors, o.Errors)
	c.Failed = satAdd(c.Failed, o.Failed)
	c.DroppedIterations = satAdd(c.DroppedIterations, o.DroppedIterations)
	c.DroppedLate = satAdd(c.DroppedLate, o.DroppedLate)
	c.BytesIn = satAdd(c.BytesIn, o.BytesIn)
	c.BytesOut = satAdd(c.BytesOut, o.BytesOut)
	c.Clamped = satAdd(c.Clamped, o.Clamped)
	c.ChecksPassed = satAdd(c.ChecksPassed, o.ChecksPassed)
	c.ChecksFailed = satAdd(c.ChecksFailed, o.ChecksFailed)
	c.ByStatus = addMap(c.ByStatus, o.ByStatus)
	c.ErrorsByClass = addMap(c.ErrorsByClass, o.ErrorsByClass)
}

func addMap(dst, src map[string]int64) map[string]int64 {
	for k, v := range src {
		if dst == nil {
			dst = make(map[string]int64, len(src))
		}
		dst[k] = satAdd(dst[k], v)
	}
	return dst
}

// satAdd is a+b, held at math.MaxInt64 or math.MinInt64 instead of wrapping.
func satAdd(a, b int64) int64 {
	s := a + b
	switch {
	case a > 0 && b > 0 && s < 0:
		return math.MaxInt64
	case a < 0 && b < 0 && s >= 0:
		return math.MinInt64
	}
	return s
}

// IntervalSnapshot is what one Rotate hands out: every series' histogram for
// [Start, End) and the counters of that interval, per scenario.
type IntervalSnapshot struct {
	Start, End time.Duration // since the recorder's t0
	Histograms map[Key]*Histogram
	Counters   map[string]Counters // by scenario
}

// tally is one scenario's counters in one shard, kept in fixed arrays so
// the hot path never allocates.
type tally struct {
	requests, errors, failed, bytesIn, bytesOut, clamped int64
	checksPassed, checksFailed                           int64
	status                                               [5]int64 // 1xx..5xx
	classes                                              [8]int64 // ErrorClasses order
}

func (t *tally) counters() Counters {
	c := Counters{
		Requests: t.requests, Errors: t.errors, Failed: t.failed,
		BytesIn: t.bytesIn, BytesOut: t.bytesOut, Clamped: t.clamped,
		ChecksPassed: t.checksPassed, ChecksFailed: t.checksFailed,
	}
	for i, n := range t.status {
		if n != 0 {
			if c.ByStatus == nil {
				c.ByStatus = map[string]int64{}
			}
			c.ByStatus[string(rune('1'+i))+"xx"] = n
		}
	}
	for i, n := range t.classes {
		if n != 0 {
			if c.ErrorsByClass == nil {
				c.ErrorsByClass = map[string]int64{}
			}
			c.ErrorsByClass[ErrorClasses[i]] = n
		}
	}
	return c
}

// interval is what a shard collects between two rotations. Its maps keep
// their entries across rotations (reset, not deleted), so after the first
// interval recording a known key allocates nothing, and a *series found
// once stays valid for as long as the interval is reused.
type interval struct {
	hists  map[Key]*Histogram
	tallys map[string]*tally
	series map[Key]*series // by Scenario and Name; Metric unset
	// phases are a scenario's phase histograms (also in hists), found with
	// one lookup instead of one per phase.
	phases map[string]*[len(Phases{})]*Histogram
}

func newInterval() *interval {
	return &interval{hists: map[Key]*Histogram{}, tallys: map[string]*tally{}, series: map[Key]*series{},
		phases: map[string]*[len(Phases{})]*Histogram{}}
}

// metrics are the series' histograms in slot order.
var metrics = [...]Metric{Latency, Service, SendLag, Interval}

// Slots of series.hists, in metrics order.
const (
	slotLatency = iota
	slotService
	slotSendLag
	slotInterval
)

// series is one request name of one scenario in one interval: its
// histograms (nil until first recorded: each costs ~190 KB) and its
// scenario's tally. It saves Record a map lookup per metric.
type series struct {
	key   Key // Metric unset
	hists [len(metrics)]*Histogram
	// few are a metric's first values in an interval, before it has a
	// histogram: most names (one URL each) never need one, which keeps a
	// series at about a KB instead of a histogram per metric and stripe.
	few   [len(metrics)][]time.Duration
	tally *tally
}

// fewValues is how many values a series keeps before its histogram is
// made: 64 durations are 512 bytes, a histogram ~190 KB.
const fewValues = 64

// seriesOf returns k's series, creating it on first use.
func (iv *interval) seriesOf(k Key) *series {
	k.Metric = ""
	if sr, ok := iv.series[k]; ok {
		return sr
	}
	t, ok := iv.tallys[k.Scenario]
	if !ok {
		t = &tally{}
		iv.tallys[k.Scenario] = t
	}
	sr := &series{key: k, tally: t}
	iv.series[k] = sr
	return sr
}

// record adds d to the series' histogram in slot, creating it on first use.
func (iv *interval) record(sr *series, slot int, d time.Duration) (clamped bool) {
	h := sr.hists[slot]
	if h == nil {
		if f := sr.few[slot]; len(f) < fewValues {
			if f == nil {
				f = make([]time.Duration, 0, fewValues)
			}
			sr.few[slot] = append(f, d)
			_, clamped = micros(d)
			return clamped
		}
		k := sr.key
		k.Metric = metrics[slot]
		h = NewHistogram()
		for _, v := range sr.few[slot] {
			h.Record(v)
		}
		sr.few[slot] = nil
		iv.hists[k] = h
		sr.hists[slot] = h
	}
	before := h.clamped
	h.Record(d)
	return h.clamped != before
}

func (iv *interval) reset() {
	for _, sr := range iv.series {
		for i := range sr.few {
			sr.few[i] = sr.few[i][:0]
		}
	}
	for _, h := range iv.hists {
		if h.Count() != 0 || h.clamped != 0 {
			h.Reset()
		}
	}
	for _, t := range iv.tallys {
		*t = tally{}
	}
}

// stripe is one lock and its interval data. Shards are spread over a fixed
// pool of stripes (two per CPU, at most MaxStripes): a histogram covering
// 1 µs .. 1 h costs ~190 KB, too much to give each of thousands of VUs its own.
type stripe struct {
	mu    sync.Mutex
	cur   *interval
	spare *interval // reset, ready to become cur at the next Rotate
}

// Recorder is a sharded recorder. Safe for concurrent use (see package doc).
type Recorder struct {
	t0 time.Time

	rotateMu sync.Mutex // serialises Rotate, so a stripe's spare is always ready
	// free are histograms of a snapshot given back (Recycle), for Rotate
	// to fill instead of allocating; guarded by rotateMu.
	free []*Histogram

	cap *SeriesCap // names past DefaultMaxSeries fold into OtherName

	mu      sync.Mutex // guards the fields below
	stripes []*stripe
	next    int
	last    time.Time
	dropped map[string]int64
	late    map[string]int64 // of dropped: the generator was behind
}

// Stripe counts: two per CPU spread the locks, between MinStripes and
// MaxStripes. Each stripe a request name is recorded in holds its
// histograms for two intervals (the current and the spare), three metrics
// each at ~190 KB: the cap bounds a name's memory at
// MaxStripes × 2 × 3 × 190 KB ≈ 9 MB whatever the core count (uncapped, a
// 64-core generator spent ~146 MB per name). Eight locks held for a few
// hundred nanoseconds per request are far from contended at any rate a
// generator's network stack can sustain.
const (
	MinStripes = 4
	MaxStripes = 8
)

// stripeCount is the number of stripes for gomaxprocs CPUs.
func stripeCount(gomaxprocs int) int { return min(max(MinStripes, 2*gomaxprocs), MaxStripes) }

// NewRecorder returns a Recorder whose first interval starts at t0.
func NewRecorder(t0 time.Time) *Recorder {
	n := stripeCount(runtime.GOMAXPROCS(0))
	return &Recorder{t0: t0, last: t0, stripes: make([]*stripe, n), dropped: map[string]int64{}, late: map[string]int64{}, cap: NewSeriesCap(DefaultMaxSeries)}
}

// FoldNote is the warning when names were folded into OtherName ("" if none).
func (r *Recorder) FoldNote() string { return r.cap.Note() }

// Shard returns a new shard; give one to each recording goroutine. Shards
// are spread round-robin over the stripes, each with its own mutex, so
// recording goroutines rarely wait on each other.
func (r *Recorder) Shard() *Shard {
	r.mu.Lock()
	defer r.mu.Unlock()
	i := r.next % len(r.stripes)
	r.next++
	if r.stripes[i] == nil {
		r.stripes[i] = &stripe{cur: newInterval(), spare: newInterval()}
	}
	return &Shard{st: r.stripes[i], cap: r.cap}
}

// Dropped counts n dropped iterations of a scenario in the current interval.
func (r *Recorder) Dropped(scenario string, n int64) {
	r.mu.Lock()
	r.dropped[scenario] += n
	r.mu.Unlock()
}

// DroppedLate counts n iterations of a scenario dropped because the
// generator, behind its schedule, never started them: among the dropped,
// and apart from those that found no free VU.
func (r *Recorder) DroppedLate(scenario string, n int64) {
	r.mu.Lock()
	r.dropped[scenario] += n
	r.late[scenario] += n
	r.mu.Unlock()
}

// Begin moves the recorder's t0, and the start of its first interval, to
// t0. Call it when the load's own t0 is known (after the VUs are set up,
// before the first iteration), so interval times and fault times share one
// origin. It keeps what was recorded; it is meant for before anything was.
func (r *Recorder) Begin(t0 time.Time) {
	r.mu.Lock()
	r.t0, r.last = t0, t0
	r.mu.Unlock()
}

// Rotate closes the current interval at now and returns it; the next one starts at now.
// The snapshot's histograms and counters belong to the caller.
func (r *Recorder) Rotate(now time.Time) IntervalSnapshot {
	r.rotateMu.Lock()
	defer r.rotateMu.Unlock()

	r.mu.Lock()
	snap := IntervalSnapshot{
		Start:      r.last.Sub(r.t0),
		End:        now.Sub(r.t0),
		Histograms: map[Key]*Histogram{},
		Counters:   map[string]Counters{},
	}
	r.last = now
	dropped, late := r.dropped, r.late
	r.dropped, r.late = map[string]int64{}, map[string]int64{}
	stripes := append([]*stripe(nil), r.stripes...)
	r.mu.Unlock()

	few := map[Key][]time.Duration{} // the stripes' few values, by series

	for _, st := range stripes {
		if st == nil {
			continue
		}
		st.mu.Lock()
		old := st.cur
		st.cur, st.spare = st.spare, nil
		st.mu.Unlock()

		r.collect(&snap, old, few)
		old.reset()

		st.mu.Lock()
		st.spare = old
		st.mu.Unlock()
	}
	r.addFew(&snap, few)
	for sc, n := range dropped {
		c := snap.Counters[sc]
		c.DroppedIterations += n
		c.DroppedLate += late[sc]
		snap.Counters[sc] = c
	}
	return snap
}

// Recycle gives back the histograms of a snapshot that nothing reads any
// more (every consumer of an interval copies or merges what it keeps):
// the next Rotate fills them instead of allocating ~190 KB of counts per
// series and interval, garbage that kept a long run's heap cycling through
// the GC and, after a stall had fragmented it, growing its resident pages.
// Only the last snapshot's are kept, so a run whose series thin out
// retains no more than its last interval's.
func (r *Recorder) Recycle(snap IntervalSnapshot) {
	r.rotateMu.Lock()
	defer r.rotateMu.Unlock()
	clear(r.free)
	r.free = r.free[:0]
	for _, h := range snap.Histograms {
		if h != nil && h.h != nil {
			r.free = append(r.free, h)
		}
	}
}

// copyOf is a copy of h, in a recycled histogram when there is one.
// rotateMu held.
func (r *Recorder) copyOf(h *Histogram) *Histogram {
	n := len(r.free)
	if n == 0 {
		return h.Clone()
	}
	c := r.free[n-1]
	r.free[n-1] = nil
	r.free = r.free[:n-1]
	c.Reset()
	c.Merge(h)
	return c
}

// addFew adds the series' few values to the snapshot: into the series'
// histogram when a stripe had one, else into a packed histogram of their
// own (a few hundred bytes: a snapshot of thousands of names seen once each
// holds no full histogram for them). rotateMu held.
func (r *Recorder) addFew(snap *IntervalSnapshot, few map[Key][]time.Duration) {
	for k, vals := range few {
		if h, ok := snap.Histograms[k]; ok {
			for _, v := range vals {
				h.Record(v)
			}
			continue
		}
		snap.Histograms[k] = HistogramOf(vals)
	}
}

// collect merges one stripe's interval into the snapshot. rotateMu held.
func (r *Recorder) collect(snap *IntervalSnapshot, iv *interval, few map[Key][]time.Duration) {
	for k, h := range iv.hists {
		if h.Count() == 0 && h.clamped == 0 {
			continue
		}
		if have, ok := snap.Histograms[k]; ok {
			have.Merge(h)
		} else {
			snap.Histograms[k] = r.copyOf(h)
		}
	}
	for _, sr := range iv.series {
		for slot, v := range sr.few {
			if len(v) > 0 {
				k := sr.key
				k.Metric = metrics[slot]
				few[k] = append(few[k], v...)
			}
		}
	}
	for sc, t := range iv.tallys {
		c := snap.Counters[sc]
		c.Add(t.counters())
		snap.Counters[sc] = c
	}
}

// Shard records for one goroutine. Its methods may be called concurrently
// with Recorder.Rotate but not with each other.
type Shard struct {
	st  *stripe
	cap *SeriesCap
	// The series this shard recorded into last, and the interval it belongs
	// to: a VU records the same request name over and over, so this spares
	// the map lookups. Guarded by st.mu.
	lastIv  *interval
	lastKey Key
	last    *series
}

// Record records one sample: its Latency and Service always, SendLag and
// Interval when > 0, and its counters under the sample's scenario. A
// failed request (Status 0) without an ErrClass counts as "other".
func (s *Shard) Record(smp Sample) {
	st := s.st
	st.mu.Lock()
	defer st.mu.Unlock()
	iv := st.cur
	k := smp.Key
	sr := s.last
	if iv != s.lastIv || k.Scenario != s.lastKey.Scenario || k.Name != s.lastKey.Name {
		s.lastKey = Key{Scenario: k.Scenario, Name: k.Name}
		var ok bool
		if sr, ok = iv.series[s.lastKey]; !ok {
			// A name new to this interval: within the cap, or folded.
			k.Name = s.cap.Name(s.lastKey)
			sr = iv.seriesOf(k)
		}
		s.lastIv, s.last = iv, sr
	}
	var clamped int64
	count := func(c bool) {
		if c {
			clamped++
		}
	}
	count(iv.record(sr, slotLatency, smp.Latency))
	count(iv.record(sr, slotService, smp.Service))
	if smp.SendLag > 0 {
		count(iv.record(sr, slotSendLag, smp.SendLag))
	}
	if smp.Interval > 0 {
		count(iv.record(sr, slotInterval, smp.Interval))
	}
	t := sr.tally
	t.clamped += clamped
	t.requests++
	t.bytesIn += smp.BytesIn
	t.bytesOut += smp.BytesOut
	class := smp.ErrClass
	if c := smp.Status / 100; smp.Status >= 100 && c <= 5 {
		t.status[c-1]++
	} else if smp.Status != 0 && class == "" {
		class = ProtocolClass // 099, 600, 999: no HTTP status, so no success
	}
	failed := class != "" || smp.Status == 0
	if failed {
		t.classes[errClassIndex(class)]++
	}
	if (failed && class != GeneratorClass) || smp.Status >= 500 {
		t.errors++ // the target's: a request knee could not send is not one
	}
	switch {
	case smp.Expected > 0: // a script's response callback accepted it
	case smp.Expected < 0, failed || smp.Status >= 400:
		t.failed++
	}
}
