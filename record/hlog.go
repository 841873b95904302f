package record

import (
	"bufio"
	"errors"
	"fmt"
	"github.com/knee-dev/knee/internal/limits"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
)

// LogFormatVersion is the HdrHistogram interval log format LogWriter writes.
const LogFormatVersion = "1.3"

// LogInterval is one interval histogram of an HdrHistogram interval log.
type LogInterval struct {
	Tag string // raw tag ("" when untagged)
	// Start is the interval's start since the log's start time (Java
	// HistogramLogReader's offset timestamp): the absolute start is
	// Header().StartTime + Start whether the log's timestamps are relative
	// or absolute.
	Start     time.Duration
	Length    time.Duration
	Histogram *Histogram
}

// LogHeader is what a log's header lines say.
type LogHeader struct {
	Version   string    // "1.3" etc.
	StartTime time.Time // zero when absent
	BaseTime  time.Time // zero when absent
	Comments  []string
	// MaxValueUnitRatio is the divisor of the max column (1e6 for ms when values are ns).
	MaxValueUnitRatio float64
}

// LogWriter writes an HdrHistogram interval log (format 1.3, V2 compressed
// histograms, values in microseconds, max column in milliseconds). Every
// WriteInterval is flushed to the underlying writer.
// Not safe for concurrent use.
type LogWriter struct {
	w       io.Writer
	buf     []byte
	payload []byte
	enc     v2Encoder
}

// flusher is what bufio.Writer and friends offer.
type flusher interface{ Flush() error }

func secs(t time.Time) string {
	return strconv.FormatFloat(float64(t.UnixMilli())/1000, 'f', 3, 64)
}

// NewLogWriter writes the header (version, comment, StartTime, BaseTime, legend).
// Timestamps of intervals are relative: BaseTime equals start.
func NewLogWriter(w io.Writer, start time.Time, comment string) (*LogWriter, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "#[Histogram log format version %s]\n", LogFormatVersion)
	for _, line := range strings.Split(comment, "\n") {
		if line = strings.TrimRight(line, "\r"); line != "" {
			fmt.Fprintf(&b, "#%s\n", line)
		}
	}
	fmt.Fprintf(&b, "#[StartTime: %s (seconds since epoch), %s]\n", secs(start), start.UTC().Format(time.RFC3339Nano))
	fmt.Fprintf(&b, "#[BaseTime: %s (seconds since epoch)]\n", secs(start))
	b.WriteString(`"StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"` + "\n")
	lw := &LogWriter{w: w}
	if err := lw.write([]byte(b.String())); err != nil {
		return nil, fmt.Errorf("write hlog header: %w", err)
	}
	return lw, nil
}

func (lw *LogWriter) write(p []byte) error {
	if _, err := lw.w.Write(p); err != nil {
		return err
	}
	if f, ok := lw.w.(flusher); ok {
		return f.Flush()
	}
	return nil
}

// WriteInterval writes one tagged interval histogram. The tag must not hold
// characters hlog readers split on (use Key.Tag).
func (lw *LogWriter) WriteInterval(tag string, start, length time.Duration, h *Histogram) error {
	if strings.ContainsAny(tag, ", \r\n\t") {
		return fmt.Errorf("hlog tag %q holds a comma, space or line break (fix: use Key.Tag, which escapes them)", tag)
	}
	b := lw.buf[:0]
	if tag != "" {
		b = append(b, "Tag="...)
		b = append(b, tag...)
		b = append(b, ',')
	}
	b = strconv.AppendFloat(b, start.Seconds(), 'f', 3, 64)
	b = append(b, ',')
	b = strconv.AppendFloat(b, length.Seconds(), 'f', 3, 64)
	b = append(b, ',')
	payload, maxUS, err := lw.enc.appendHistogram(lw.payload[:0], h)
	if err != nil {
		return fmt.Errorf("encode interval histogram: %w", err)
	}
	lw.payload = payload
	var maxMS float64
	if h.Count() > 0 {
		maxMS = float64(maxUS) / 1000
	}
	b = strconv.AppendFloat(b, maxMS, 'f', 3, 64)
	b = append(b, ',')
	b = append(b, payload...)
	b = append(b, '\n')
	lw.buf = b
	if err := lw.write(b); err != nil {
		return fmt.Errorf("write hlog interval: %w", err)
	}
	return nil
}

// LineError is a problem at one line of a file knee reads.
type LineError struct {
	File string
	Line int
	Msg  string // what is wrong
	Fix  string // what to do about it; may be empty
	Err  error  // the cause; may be nil
}

// Error renders "file:line: msg: cause (fix: ...)".
func (e *LineError) Error() string {
	s := fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	if e.Fix != "" {
		s += " (fix: " + e.Fix + ")"
	}
	return s
}

// Unwrap returns the cause.
func (e *LineError) Unwrap() error { return e.Err }

// LogReader reads HdrHistogram interval logs from the Java, C and Go
// implementations (formats 1.0 .. 1.3, V0/V1/V2 encodings, tags, comments,
// StartTime/BaseTime, relative or absolute timestamps). Errors name the line.
type LogReader struct {
	r        *bufio.Reader
	name     string
	perMicro float64 // raw value × perMicro = µs
	line     int
	hdr      LogHeader

	startSec, baseSec           float64
	observedStart, observedBase bool
	err                         error // sticky: after an error or EOF, Next repeats it
	// unterminated: the line read last ended at the end of input, without a
	// newline; torn: that line did not parse and was dropped.
	unterminated, torn bool
	inflate            inflater // every line's payload, one after another
}

// NewLogReader reads the header lazily. unitNanos is the size of one raw
// value in nanoseconds (1000 for µs logs like knee's, 1 for jHiccup's ns).
// A unitNanos <= 0 is taken as 1000.
func NewLogReader(r io.Reader, name string, unitNanos float64) *LogReader {
	if !(unitNanos > 0) || math.IsInf(unitNanos, 0) {
		unitNanos = 1000
	}
	return &LogReader{
		r:        bufio.NewReaderSize(r, 64<<10),
		name:     name,
		perMicro: unitNanos / 1000,
		hdr:      LogHeader{MaxValueUnitRatio: 1e6 / unitNanos},
	}
}

// Header is valid after the first Next call.
func (lr *LogReader) Header() LogHeader { return lr.hdr }

// Torn reports whether the log's last line was cut short (no newline, and
// not a whole interval: a writer killed or out of disk mid-line) and was
// dropped rather than failing the read. Valid once Next returned io.EOF.
func (lr *LogReader) Torn() bool { return lr.torn }

// Line is the line number of the interval Next returned last.
func (lr *LogReader) Line() int { return lr.line }

func (lr *LogReader) fail(msg, fix string, err error) error {
	lr.err = &LineError{File: lr.name, Line: lr.line, Msg: msg, Fix: fix, Err: err}
	return lr.err
}

// maxLine bounds one log line; a V2 payload of a wide histogram is a few KB.
const maxLine = limits.HlogLine

// Next returns the next interval, or io.EOF.
func (lr *LogReader) Next() (LogInterval, error) {
	if lr.err != nil {
		return LogInterval{}, lr.err
	}
	for {
		line, err := lr.readLine()
		if err != nil {
			if errors.Is(err, io.EOF) {
				lr.err = io.EOF
				return LogInterval{}, io.EOF
			}
			return LogInterval{}, err
		}
		switch {
		case line == "":
			continue
		case line[0] == '#':
			if err := lr.headerLine(line); err != nil {
				return LogInterval{}, err
			}
			continue
		case strings.HasPrefix(line, `"StartTimestamp"`):
			continue // legend
		}
		iv, err := lr.intervalLine(line)
		if err != nil && lr.unterminated {
			lr.torn, lr.err = true, io.EOF
			return LogInterval{}, io.EOF
		}
		return iv, err
	}
}

func (lr *LogReader) readLine() (string, error) {
	var sb []byte
	for {
		chunk, err := lr.r.ReadSlice('\n')
		sb = append(sb, chunk...)
		if len(sb) > maxLine {
			lr.line++
			return "", lr.fail("line longer than "+limits.MiB(maxLine), "is this an hlog file?", nil)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return "", fmt.Errorf("read %s: %w", lr.name, err)
		}
		if len(sb) == 0 && err != nil {
			return "", io.EOF
		}
		lr.line++
		lr.unterminated = err != nil && sb[len(sb)-1] != '\n'
		return strings.TrimRight(string(sb), "\r\n"), nil
	}
}

// firstFloat parses the number that starts s (up to a space, comma or ']').
func firstFloat(s string) (float64, error) {
	s = strings.TrimLeft(s, " ")
	end := strings.IndexAny(s, " ,]")
	if end >= 0 {
		s = s[:end]
	}
	f, err := strconv.ParseFloat(s, 64)
	if err == nil && (math.IsNaN(f) || math.IsInf(f, 0)) {
		err = fmt.Errorf("%q is not a finite number", s)
	}
	return f, err
}

func epoch(sec float64) time.Time {
	whole, frac := math.Modf(sec)
	return time.Unix(int64(whole), int64(math.Round(frac*1e3))*int64(time.Millisecond)).UTC()
}

func (lr *LogReader) headerLine(line string) error {
	switch {
	case strings.HasPrefix(line, "#[StartTime:"):
		f, err := firstFloat(line[len("#[StartTime:"):])
		if err != nil {
			return lr.fail("bad StartTime", "it must be seconds since the epoch, e.g. #[StartTime: 1441812279.474 ...]", err)
		}
		lr.startSec, lr.observedStart = f, true
		lr.hdr.StartTime = epoch(f)
	case strings.HasPrefix(line, "#[BaseTime:"):
		f, err := firstFloat(line[len("#[BaseTime:"):])
		if err != nil {
			return lr.fail("bad BaseTime", "it must be seconds since the epoch, e.g. #[BaseTime: 1441812279.474 ...]", err)
		}
		lr.baseSec, lr.observedBase = f, true
		lr.hdr.BaseTime = epoch(f)
	case strings.HasPrefix(line, "#[Histogram log format version "):
		v := strings.TrimSuffix(strings.TrimPrefix(line, "#[Histogram log format version "), "]")
		lr.hdr.Version = strings.TrimSpace(v)
	default:
		lr.hdr.Comments = append(lr.hdr.Comments, strings.TrimPrefix(line, "#"))
	}
	return nil
}

func seconds(f float64) (time.Duration, bool) {
	d := f * float64(time.Second)
	if math.IsNaN(d) || math.Abs(d) >= math.MaxInt64 {
		return 0, false
	}
	return time.Duration(math.Round(d)), true
}

func (lr *LogReader) intervalLine(line string) (LogInterval, error) {
	var iv LogInterval
	if rest, ok := strings.CutPrefix(line, "Tag="); ok {
		tag, after, found := strings.Cut(rest, ",")
		if !found {
			return iv, lr.fail("tag without fields", "an interval line is [Tag=<tag>,]<start>,<length>,<max>,<payload>", nil)
		}
		iv.Tag, line = tag, after
	}
	fields := strings.SplitN(line, ",", 4)
	if len(fields) != 4 {
		return iv, lr.fail(fmt.Sprintf("interval line has %d fields, want 4", len(fields)),
			"an interval line is [Tag=<tag>,]<start>,<length>,<max>,<payload>; is the line truncated?", nil)
	}
	ts, err1 := strconv.ParseFloat(fields[0], 64)
	length, err2 := strconv.ParseFloat(fields[1], 64)
	if err := errors.Join(err1, err2); err != nil {
		return iv, lr.fail("bad start timestamp or interval length", "both are seconds, e.g. 0.127,1.007", err)
	}
	if !lr.observedStart {
		lr.startSec, lr.observedStart = ts, true
	}
	if !lr.observedBase {
		// As Java's HistogramLogReader: timestamps more than a year before
		// the start time are relative to it, otherwise absolute.
		if ts < lr.startSec-365*24*3600 {
			lr.baseSec = lr.startSec
		}
		lr.observedBase = true
	}
	start, ok1 := seconds(ts + lr.baseSec - lr.startSec)
	iv.Length, _ = seconds(length)
	if !ok1 || length < 0 || math.IsNaN(length) {
		return iv, lr.fail("start timestamp or interval length out of range", "", nil)
	}
	iv.Start = start
	if lr.perMicro == 1 {
		if p, ok := decodeOwnPacked(fields[3], &lr.inflate); ok {
			iv.Histogram = &Histogram{packed: p}
			return iv, nil
		}
	}
	h, err := decodePayload(fields[3])
	if err != nil {
		return iv, lr.fail("bad base64 payload", "the last field must be an HdrHistogram V0, V1 or V2 compressed histogram; is the line truncated?", err)
	}
	// A long log holds thousands of intervals: keep each packed. knee's own
	// logs need no conversion on the way.
	if lr.perMicro == 1 && ownGeometry(h) {
		iv.Histogram = &Histogram{packed: packHdr(h)}
		return iv, nil
	}
	iv.Histogram = NewHistogram()
	iv.Histogram.mergeForeign(h, lr.perMicro)
	iv.Histogram.pack()
	return iv, nil
}
