package rundir

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"maps"
	"os"
	"path/filepath"
	"slices"
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

// NewInterval is snap with extra's per-scenario figures (offered rate, VUs)
// as Open reads it back: one counters line per scenario of either. The
// histograms are snap's own, not copies.
func NewInterval(snap record.IntervalSnapshot, extra map[string]IntervalCounters) Interval {
	iv := Interval{Start: snap.Start, End: snap.End, Histograms: snap.Histograms, Counters: map[string]IntervalCounters{}}
	for _, scs := range []iter.Seq[string]{maps.Keys(snap.Counters), maps.Keys(extra)} {
		for s := range scs {
			line := extra[s]
			line.Scenario = s
			line.Start, line.End = snap.Start.Seconds(), snap.End.Seconds()
			line.Counters = snap.Counters[s]
			iv.Counters[s] = line
		}
	}
	return iv
}

// Dir is a run directory read into memory.
type Dir struct {
	Dir       string
	Meta      Meta
	Intervals []Interval // in time order
	// Torn says which files ended in a line cut short (a full disk, a
	// killed writer): the line was dropped, the rest read.
	Torn []string
}

// Writer writes a run directory as the run goes: every interval is appended
// and flushed, and run.json is rewritten, so a killed run keeps what it measured.
// Not safe for concurrent use.
type Writer struct {
	dir      string
	hlogFile *os.File
	hlogBuf  *LineFile
	hlog     *record.LogWriter // nil until Begin writes the header
	started  time.Time         // the header's start when Begin was never called
	comment  string            // the header's comment
	cntFile  *os.File
	cntBuf   *LineFile
	closed   bool
}

// Create makes dir (and parents) and writes a first run.json marked unfinished.
// It truncates latency.hlog and counters.jsonl if they exist.
func Create(dir string, meta Meta) (*Writer, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create run directory: %w", err)
	}
	w := &Writer{dir: dir}
	meta.Finished = false
	if err := w.WriteMeta(meta); err != nil {
		return nil, err
	}
	var err error
	if w.hlogFile, err = os.Create(filepath.Join(dir, LatencyFile)); err != nil {
		return nil, fmt.Errorf("create %s: %w", LatencyFile, err)
	}
	if w.cntFile, err = os.Create(filepath.Join(dir, CountersFile)); err != nil {
		w.hlogFile.Close()
		return nil, fmt.Errorf("create %s: %w", CountersFile, err)
	}
	// Each interval lands whole or not at all (see LineFile).
	if w.hlogBuf, err = NewLineFile(w.hlogFile); err == nil {
		w.cntBuf, err = NewLineFile(w.cntFile)
	}
	if err != nil {
		w.closeFiles()
		return nil, fmt.Errorf("create run directory: %w", err)
	}
	w.started = meta.Started
	w.comment = fmt.Sprintf("[Logged with knee %s, run %s; values in microseconds, tags metric|scenario|name]", meta.KneeVersion, meta.ID)
	return w, nil
}

// Begin writes latency.hlog's header with t0, the instant its intervals'
// start times count from, as StartTime and BaseTime, so that HdrHistogram's
// own tools place each interval where it was. A later call does nothing;
// without one, the first interval or Close writes it with the run's
// Started, for runs (imports) that have no other t0.
func (w *Writer) Begin(t0 time.Time) error {
	if w.hlog != nil || w.closed {
		return nil
	}
	// The LogWriter would flush after every line; give it the buffer as a
	// plain io.Writer so that WriteInterval writes each interval at once.
	hlog, err := record.NewLogWriter(struct{ io.Writer }{w.hlogBuf}, t0, w.comment)
	if err != nil {
		return fmt.Errorf("%s: %w", LatencyFile, err)
	}
	w.hlog = hlog
	if err := w.hlogBuf.Flush(); err != nil {
		return fmt.Errorf("write %s: %w", LatencyFile, err)
	}
	return nil
}

// WriteInterval appends one interval to latency.hlog and counters.jsonl and flushes both.
// extra carries per-scenario TargetRate/BusyVUs/VUs for counters.jsonl (may be nil).
// Histograms are written in tag order, scenarios in name order.
func (w *Writer) WriteInterval(snap record.IntervalSnapshot, extra map[string]IntervalCounters) error {
	if w.closed {
		return errors.New("run writer: WriteInterval after Close")
	}
	if err := w.Begin(w.started); err != nil {
		return err
	}
	keys := slices.SortedFunc(maps.Keys(snap.Histograms), func(a, b record.Key) int {
		return cmp.Compare(a.Tag(), b.Tag())
	})
	for _, k := range keys {
		if err := w.hlog.WriteInterval(k.Tag(), snap.Start, snap.End-snap.Start, snap.Histograms[k]); err != nil {
			return fmt.Errorf("%s: %w", LatencyFile, err)
		}
	}
	lines := NewInterval(snap, extra).Counters
	enc := json.NewEncoder(w.cntBuf)
	for _, s := range slices.Sorted(maps.Keys(lines)) {
		if err := enc.Encode(lines[s]); err != nil {
			return fmt.Errorf("%s: %w", CountersFile, err)
		}
	}
	if err := w.hlogBuf.Flush(); err != nil {
		return fmt.Errorf("write %s: %w", LatencyFile, err)
	}
	if err := w.cntBuf.Flush(); err != nil {
		return fmt.Errorf("write %s: %w", CountersFile, err)
	}
	return nil
}

// WriteMeta rewrites run.json atomically (write temp, rename). It stamps
// FormatVersion.
func (w *Writer) WriteMeta(meta Meta) error {
	meta.FormatVersion = FormatVersion
	data, err := json.MarshalIndent(meta, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", MetaFile, err)
	}
	data = append(data, '\n')
	if err := WriteFileAtomic(filepath.Join(w.dir, MetaFile), data, 0o600); err != nil {
		return fmt.Errorf("write %s: %w", MetaFile, err)
	}
	return nil
}

// WriteFileAtomic writes data to path through a temporary file in the same
// directory, synced and renamed over path: a reader (or a full disk) sees the
// old file or the whole new one, never a part. A path that is not a regular
// file (/dev/stdout, a pipe) is written in place: it cannot be renamed over.
func WriteFileAtomic(path string, data []byte, perm os.FileMode) error {
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
		return os.WriteFile(path, data, perm)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(data)
	err = errors.Join(werr, tmp.Chmod(perm), tmp.Sync(), tmp.Close())
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

func (w *Writer) closeFiles() error {
	var errs []error
	if w.hlogFile != nil {
		errs = append(errs, w.hlogFile.Close())
	}
	if w.cntFile != nil {
		errs = append(errs, w.cntFile.Close())
	}
	return errors.Join(errs...)
}

// Close flushes and closes the files; it writes meta last. Closing twice
// only rewrites meta.
func (w *Writer) Close(meta Meta) error {
	if !w.closed {
		// A run that never started still leaves a valid, empty log.
		herr := w.Begin(w.started)
		w.closed = true
		ferr := errors.Join(herr, w.hlogBuf.Flush(), w.cntBuf.Flush(), w.hlogFile.Sync(), w.cntFile.Sync())
		if err := errors.Join(ferr, w.closeFiles()); err != nil {
			return fmt.Errorf("close run directory %s: %w", w.dir, err)
		}
	}
	return w.WriteMeta(meta)
}

// inRange reports whether an interval starting at start lies in [from, to);
// to <= 0 means no upper bound.
func inRange(start, from, to time.Duration) bool {
	return start >= from && (to <= 0 || start < to)
}

// Merged returns the merge of every histogram whose key passes keep, over the
// intervals that start in [from, to). to <= 0 means the end of the run.
// keep == nil keeps every key. The result is never nil; it is packed when
// record.Sum can keep it so (a short run's: no full copy to allocate).
func (r *Dir) Merged(keep func(record.Key) bool, from, to time.Duration) *record.Histogram {
	var hs []*record.Histogram
	for _, iv := range r.Intervals {
		if inRange(iv.Start, from, to) {
			hs = append(hs, record.Series(iv.Histograms).Of(keep)...)
		}
	}
	return record.Sum(hs)
}

// Counters sums the counters of every scenario over intervals starting in [from, to).
func (r *Dir) Counters(from, to time.Duration) record.Counters {
	var c record.Counters
	for _, iv := range r.Intervals {
		if !inRange(iv.Start, from, to) {
			continue
		}
		for _, ic := range iv.Counters {
			c.Add(ic.Counters)
		}
	}
	return c
}

// Duration is the end of the last interval.
func (r *Dir) Duration() time.Duration {
	var d time.Duration
	for _, iv := range r.Intervals {
		d = max(d, iv.End)
	}
	return d
}
