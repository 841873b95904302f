package rundir

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/knee-dev/knee/record"
)

// ErrOutOfOrder is returned (wrapped) by Stream.Next for a file whose
// intervals are not in time order, which a Stream cannot read.
var ErrOutOfOrder = errors.New("intervals out of time order")

// Stream reads a run directory's intervals one at a time, in time order,
// holding only the interval it returns and the next line of each file, so a
// run of any length reads in bounded memory. It returns the same intervals
// as Open, provided each file is in time order as the Writer writes it.
type Stream struct {
	Dir  string
	Meta Meta

	hf, cf *os.File
	lr     *record.LogReader
	lat    *record.LogInterval // the next hlog interval; nil at the end
	latKey int64

	cs     *bufio.Scanner // nil without counters.jsonl
	csEnd  *bool          // its last line ended without a newline
	cn     int            // its line number
	cnt    *countersLine  // the next counters line; nil at the end
	primed bool
	torn   []string
}

// Torn is Dir.Torn: the files whose last line was cut short and dropped,
// known once Next has returned io.EOF.
func (s *Stream) Torn() []string { return s.torn }

type countersLine struct {
	ic         IntervalCounters
	start, end time.Duration
	key        int64
}

// OpenStream opens dir to read its intervals with Next; Close it after.
// Errors are those of Open.
func OpenStream(dir string) (*Stream, error) {
	meta, err := readMeta(dir)
	if err != nil {
		return nil, err
	}
	s := &Stream{Dir: dir, Meta: meta}
	if s.hf, err = os.Open(filepath.Join(dir, LatencyFile)); err != nil {
		return nil, fmt.Errorf("open run directory %s: %w", dir, err)
	}
	s.lr = record.NewLogReader(s.hf, LatencyFile, 1000)
	s.cf, err = os.Open(filepath.Join(dir, CountersFile))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		s.cf = nil
	case err != nil:
		s.hf.Close()
		return nil, fmt.Errorf("open run directory %s: %w", dir, err)
	default:
		s.cs, s.csEnd = NewLineScanner(s.cf)
	}
	return s, nil
}

// Close closes the files.
func (s *Stream) Close() error {
	var errs []error
	errs = append(errs, s.hf.Close())
	if s.cf != nil {
		errs = append(errs, s.cf.Close())
	}
	return errors.Join(errs...)
}

// Next returns the next interval in time order, or io.EOF after the last.
func (s *Stream) Next() (Interval, error) {
	if !s.primed {
		s.primed = true
		if err := s.nextLatency(); err != nil {
			return Interval{}, err
		}
		if err := s.nextCounters(); err != nil {
			return Interval{}, err
		}
	}
	var k int64
	switch {
	case s.lat == nil && s.cnt == nil:
		return Interval{}, io.EOF
	case s.lat == nil:
		k = s.cnt.key
	case s.cnt == nil:
		k = s.latKey
	default:
		k = min(s.latKey, s.cnt.key)
	}
	iv := &Interval{Start: time.Duration(k) * time.Millisecond,
		Histograms: map[record.Key]*record.Histogram{}, Counters: map[string]IntervalCounters{}}
	for s.lat != nil && s.latKey == k {
		addLatency(iv, *s.lat)
		if err := s.nextLatency(); err != nil {
			return Interval{}, err
		}
	}
	for s.cnt != nil && s.cnt.key == k {
		addCounters(iv, s.cnt.ic, s.cnt.end)
		if err := s.nextCounters(); err != nil {
			return Interval{}, err
		}
	}
	return *iv, nil
}

// nextLatency reads the next hlog interval into s.lat.
func (s *Stream) nextLatency() error {
	li, err := s.lr.Next()
	if errors.Is(err, io.EOF) {
		if s.lr.Torn() { // reached once: Next stops calling at the end
			s.torn = append(s.torn, TornNote(LatencyFile))
		}
		s.lat = nil
		return nil
	}
	if err != nil {
		return err
	}
	k := msKey(li.Start)
	if s.lat != nil && k < s.latKey {
		return fmt.Errorf("%s:%d: %w: an interval at %v follows one at %v (fix: knee writes intervals in time order; was the file edited or concatenated?)",
			filepath.Join(s.Dir, LatencyFile), s.lr.Line(), ErrOutOfOrder, li.Start, s.lat.Start)
	}
	s.lat, s.latKey = &li, k
	return nil
}

// nextCounters reads the next counters.jsonl line into s.cnt.
func (s *Stream) nextCounters() error {
	if s.cs == nil {
		return nil
	}
	for s.cs.Scan() {
		s.cn++
		ic, start, end, ok, err := parseCounters(CountersFile, s.cn, s.cs.Bytes())
		if err != nil && *s.csEnd && !json.Valid(s.cs.Bytes()) {
			s.torn = append(s.torn, TornNote(CountersFile))
			break
		}
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		k := msKey(start)
		if s.cnt != nil && k < s.cnt.key {
			return fmt.Errorf("%s:%d: %w: an interval at %v follows one at %v (fix: knee writes intervals in time order; was the file edited or concatenated?)",
				filepath.Join(s.Dir, CountersFile), s.cn, ErrOutOfOrder, start, s.cnt.start)
		}
		s.cnt = &countersLine{ic: ic, start: start, end: end, key: k}
		return nil
	}
	s.cnt = nil
	if err := s.cs.Err(); err != nil {
		return fmt.Errorf("read %s: %w (fix: a line of this file is longer than %d MiB; is it a knee file?)", filepath.Join(s.Dir, CountersFile), err, MaxLine>>20)
	}
	return nil
}
