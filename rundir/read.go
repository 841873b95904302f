package rundir

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/knee-dev/knee/internal/limits"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/knee-dev/knee/k6metric"
	"github.com/knee-dev/knee/record"
)

// ErrFormatVersion is returned (wrapped) for a run.json of another format version.
var ErrFormatVersion = errors.New("unsupported run directory format version")

// Open reads a run directory. A missing directory, a run.json of another
// format version or a corrupt file is an error naming the file (and line).
// counters.jsonl may be absent; latency.hlog may not. Interval starts are
// kept to the millisecond, the precision of the hlog's timestamps.
func Open(dir string) (*Dir, error) {
	r := &Dir{Dir: dir}
	var err error
	if r.Meta, err = readMeta(dir); err != nil {
		return nil, err
	}
	byStart := map[int64]*Interval{}
	hf, err := os.Open(filepath.Join(dir, LatencyFile))
	if err != nil {
		return nil, fmt.Errorf("open run directory %s: %w", dir, err)
	}
	defer hf.Close()
	torn, err := readLatency(filepath.Join(dir, LatencyFile), hf, byStart)
	if err != nil {
		return nil, err
	}
	r.noteTorn(LatencyFile, torn)
	cf, err := os.Open(filepath.Join(dir, CountersFile))
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("open run directory %s: %w", dir, err)
	default:
		defer cf.Close()
		torn, err := readCounters(filepath.Join(dir, CountersFile), cf, byStart)
		if err != nil {
			return nil, err
		}
		r.noteTorn(CountersFile, torn)
	}
	for _, iv := range byStart {
		r.Intervals = append(r.Intervals, *iv)
	}
	slices.SortFunc(r.Intervals, func(a, b Interval) int { return cmp.Compare(a.Start, b.Start) })
	return r, nil
}

// readMeta reads dir's run.json.
func readMeta(dir string) (Meta, error) {
	if st, err := os.Stat(dir); err != nil {
		return Meta{}, fmt.Errorf("open run directory: %w", err)
	} else if !st.IsDir() {
		return Meta{}, fmt.Errorf("open run directory: %s is not a directory", dir)
	}
	data, err := limits.ReadFile(filepath.Join(dir, MetaFile), limits.RunMeta, "run.json", "knee writes a few KB here: restore run.json or re-run")
	if err != nil {
		if errors.Is(err, limits.ErrTooLarge) {
			return Meta{}, fmt.Errorf("open run directory %s: %w", dir, err)
		}
		return Meta{}, fmt.Errorf("open run directory %s: %w (fix: is this a knee run directory?)", dir, err)
	}
	return parseMeta(filepath.Join(dir, MetaFile), data)
}

// parseMeta decodes run.json and checks its format version.
func parseMeta(name string, data []byte) (Meta, error) {
	var m Meta
	if err := json.Unmarshal(data, &m); err != nil {
		return m, fmt.Errorf("%s:%d: bad JSON: %w (fix: restore run.json or re-run)", name, jsonErrLine(data, err), err)
	}
	if m.FormatVersion != FormatVersion {
		return m, fmt.Errorf("%s: format_version %d: %w (this knee reads %d; fix: use the knee version that wrote it)",
			name, m.FormatVersion, ErrFormatVersion, FormatVersion)
	}
	return m, nil
}

// jsonErrLine is the 1-based line of a JSON decoding error, or 1.
func jsonErrLine(data []byte, err error) int {
	var off int64
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
	}
	off = min(max(off, 0), int64(len(data)))
	return bytes.Count(data[:off], []byte("\n")) + 1
}

// msKey keys an interval by its start to the millisecond, the hlog's precision.
func msKey(d time.Duration) int64 {
	return int64(math.Round(float64(d) / float64(time.Millisecond)))
}

func intervalAt(byStart map[int64]*Interval, start time.Duration) *Interval {
	k := msKey(start)
	iv, ok := byStart[k]
	if !ok {
		iv = &Interval{
			Start:      time.Duration(k) * time.Millisecond,
			Histograms: map[record.Key]*record.Histogram{},
			Counters:   map[string]IntervalCounters{},
		}
		byStart[k] = iv
	}
	return iv
}

// noteTorn records that file's last line was cut short and dropped.
func (r *Dir) noteTorn(file string, torn bool) {
	if torn {
		r.Torn = append(r.Torn, TornNote(file))
	}
}

// TornNote is what a reader says of a file whose last line was cut short.
func TornNote(file string) string {
	return fmt.Sprintf("%s: its last line was cut short (a full disk or a killed writer?) and was ignored; the rest was read", file)
}

// readLatency adds every interval histogram of an hlog to byStart; torn
// reports a last line cut short, dropped.
func readLatency(name string, r io.Reader, byStart map[int64]*Interval) (torn bool, err error) {
	lr := record.NewLogReader(r, filepath.Base(name), 1000)
	for {
		li, err := lr.Next()
		if errors.Is(err, io.EOF) {
			return lr.Torn(), nil
		}
		if err != nil {
			return false, err
		}
		addLatency(intervalAt(byStart, li.Start), li)
	}
}

// addLatency adds one hlog interval histogram to iv.
func addLatency(iv *Interval, li record.LogInterval) {
	iv.End = max(iv.End, iv.Start+li.Length)
	k := record.ParseTag(li.Tag)
	if have, ok := iv.Histograms[k]; ok {
		have.Merge(li.Histogram)
	} else {
		iv.Histograms[k] = li.Histogram
	}
}

func secondsDuration(s float64) (time.Duration, bool) {
	d := s * float64(time.Second)
	if math.IsNaN(d) || math.Abs(d) >= math.MaxInt64 {
		return 0, false
	}
	return time.Duration(math.Round(d)), true
}

// readCounters adds every counters.jsonl line to byStart. Lines of the same
// scenario and interval add up. A last line cut short is dropped (torn).
func readCounters(name string, r io.Reader, byStart map[int64]*Interval) (torn bool, err error) {
	sc, unterminated := NewLineScanner(r)
	base := filepath.Base(name)
	for n := 1; sc.Scan(); n++ {
		ic, start, end, ok, err := parseCounters(base, n, sc.Bytes())
		if err != nil && *unterminated && !json.Valid(sc.Bytes()) {
			return true, nil // cut short: not even JSON
		}
		if err != nil {
			return false, err
		}
		if ok {
			addCounters(intervalAt(byStart, start), ic, end)
		}
	}
	if err := sc.Err(); err != nil {
		return false, fmt.Errorf("read %s: %w (fix: a line of this file is longer than %d MiB; is it a knee file?)", base, err, MaxLine>>20)
	}
	return false, nil
}

// MaxLine bounds one line of a JSON-lines file knee reads (counters,
// resources): knee writes lines of a few hundred bytes.
const MaxLine = 1 << 20

// NewLineScanner scans lines of at most MaxLine bytes; *unterminated is
// true while the line scanned last ended at the end of input without a
// newline (a torn last line, when it does not parse).
func NewLineScanner(r io.Reader) (sc *bufio.Scanner, unterminated *bool) {
	sc = bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxLine)
	u := new(bool)
	sc.Split(func(data []byte, atEOF bool) (int, []byte, error) {
		adv, tok, err := bufio.ScanLines(data, atEOF)
		*u = tok != nil && atEOF && adv == len(data) && (len(data) == 0 || data[len(data)-1] != '\n')
		return adv, tok, err
	})
	return sc, u
}

// parseCounters decodes line n of counters.jsonl; ok is false for a blank line.
func parseCounters(base string, n int, line []byte) (ic IntervalCounters, start, end time.Duration, ok bool, err error) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return ic, 0, 0, false, nil
	}
	if err := json.Unmarshal(line, &ic); err != nil {
		return ic, 0, 0, false, fmt.Errorf("%s:%d: bad counters line: %w (fix: delete the line or re-run)", base, n, err)
	}
	start, ok1 := secondsDuration(ic.Start)
	end, ok2 := secondsDuration(ic.End)
	if !ok1 || !ok2 || end < start {
		return ic, 0, 0, false, fmt.Errorf("%s:%d: interval [%v, %v] s is out of range (fix: delete the line or re-run)", base, n, ic.Start, ic.End)
	}
	if name, v, bad := negativeCount(ic.Counters); bad {
		return ic, 0, 0, false, fmt.Errorf("%s:%d: %s is %d; a count is never negative (fix: delete the line or re-run)", base, n, name, v)
	}
	return ic, start, end, true, nil
}

// addCounters adds one counters.jsonl line ending at end to iv. Lines of
// the same scenario add up.
func addCounters(iv *Interval, ic IntervalCounters, end time.Duration) {
	iv.End = max(iv.End, end, iv.Start) // the ms-rounded start may pass a sub-ms end
	if have, ok := iv.Counters[ic.Scenario]; ok {
		have.Counters.Add(ic.Counters)
		have.End = max(have.End, ic.End)
		ic = have
	}
	iv.Counters[ic.Scenario] = ic
}

// negativeCount finds a negative count in c, which no writer makes.
func negativeCount(c record.Counters) (name string, v int64, bad bool) {
	for _, f := range []struct {
		name string
		v    int64
	}{{"requests", c.Requests}, {"errors", c.Errors}, {"failed", c.Failed}, {k6metric.DroppedIterations, c.DroppedIterations}, {"dropped_late", c.DroppedLate},
		{"bytes_in", c.BytesIn}, {"bytes_out", c.BytesOut}, {"clamped", c.Clamped}} {
		if f.v < 0 {
			return f.name, f.v, true
		}
	}
	for _, m := range []map[string]int64{c.ByStatus, c.ErrorsByClass} {
		for k, v := range m {
			if v < 0 {
				return k, v, true
			}
		}
	}
	return "", 0, false
}
