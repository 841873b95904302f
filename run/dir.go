package run

import (
	"time"

	"github.com/knee-dev/knee/record"
)

// Interval is one interval of a run: every series' histogram and every
// scenario's counters for [Start, End) since the run's start.
type Interval struct {
	Start, End time.Duration
	Histograms map[record.Key]*record.Histogram
	Counters   map[string]IntervalCounters // by scenario
}

// Run is a run directory read into memory.
type Run struct {
	Dir       string
	Meta      Meta
	Intervals []Interval // in time order
}

// Writer writes a run directory as the run goes: every interval is appended
// and flushed, and run.json is rewritten, so a killed run keeps what it measured.
// Not safe for concurrent use.
type Writer struct{}

// Create makes dir (and parents) and writes a first run.json marked unfinished.
func Create(dir string, meta Meta) (*Writer, error) { panic("TODO") }

// WriteInterval appends one interval to latency.hlog and counters.jsonl and flushes both.
// extra carries per-scenario TargetRate/BusyVUs/VUs for counters.jsonl (may be nil).
func (w *Writer) WriteInterval(snap record.IntervalSnapshot, extra map[string]IntervalCounters) error {
	panic("TODO")
}

// WriteMeta rewrites run.json atomically (write temp, rename).
func (w *Writer) WriteMeta(meta Meta) error { panic("TODO") }

// Close flushes and closes the files; it writes meta last.
func (w *Writer) Close(meta Meta) error { panic("TODO") }

// Open reads a run directory. A missing directory, a run.json of another
// format version or a corrupt file is an error naming the file (and line).
func Open(dir string) (*Run, error) { panic("TODO") }

// Merged returns the merge of every histogram whose key passes keep, over the
// intervals that start in [from, to). to <= 0 means the end of the run.
func (r *Run) Merged(keep func(record.Key) bool, from, to time.Duration) *record.Histogram {
	panic("TODO")
}

// Counters sums the counters of every scenario over intervals starting in [from, to).
func (r *Run) Counters(from, to time.Duration) record.Counters { panic("TODO") }

// Duration is the end of the last interval.
func (r *Run) Duration() time.Duration { panic("TODO") }
