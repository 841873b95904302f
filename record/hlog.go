package record

import (
	"io"
	"time"
)

// LogInterval is one interval histogram of an HdrHistogram interval log.
type LogInterval struct {
	Tag       string        // raw tag ("" when untagged)
	Start     time.Duration // since the log's base time
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
type LogWriter struct{}

// NewLogWriter writes the header (version, comment, StartTime, BaseTime, legend).
func NewLogWriter(w io.Writer, start time.Time, comment string) (*LogWriter, error) { panic("TODO") }

// WriteInterval writes one tagged interval histogram.
func (lw *LogWriter) WriteInterval(tag string, start, length time.Duration, h *Histogram) error {
	panic("TODO")
}

// Unit converts a log's raw values into knee's microseconds: values are
// multiplied by Scale (e.g. 1e-3 for a log that holds nanoseconds).
type Unit struct{ PerMicro float64 }

// LogReader reads HdrHistogram interval logs from the Java, C and Go
// implementations (formats 1.0 .. 1.3, V0/V1/V2 encodings, tags, comments,
// StartTime/BaseTime, relative or absolute timestamps). Errors name the line.
type LogReader struct{}

// NewLogReader reads the header lazily. unitNanos is the size of one raw
// value in nanoseconds (1000 for µs logs like knee's, 1 for jHiccup's ns).
func NewLogReader(r io.Reader, name string, unitNanos float64) *LogReader { panic("TODO") }

// Next returns the next interval, or io.EOF.
func (lr *LogReader) Next() (LogInterval, error) { panic("TODO") }

// Header is valid after the first Next call.
func (lr *LogReader) Header() LogHeader { panic("TODO") }
