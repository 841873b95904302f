// Package importer turns results other tools wrote — k6 CSV (`--out csv`),
// k6 JSON lines (`--out json`), HdrHistogram interval logs (.hlog) and plain
// lists of latencies — into a knee run directory, so every analysis works on
// them as on a live run.
//
// Every importer streams: rows are grouped into intervals as they come, a
// small window of intervals stays open for rows that arrive slightly out of
// order, and older intervals are flushed to the rundir.Writer. Memory stays flat
// whatever the file size. Histograms and counters are built only through
// package record; this package computes no percentile.
//
// Bad input is an error that names the file and line and says how to fix
// it; Options.Lenient skips bad rows instead and reports how many there were
// and the first one.
package importer

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/knee-dev/knee/record"
	"github.com/knee-dev/knee/rundir"
)

// Format names an input format.
type Format string

// The formats Import reads. FormatAuto detects the format from the content,
// then from the file name.
const (
	FormatAuto   Format = "auto"
	FormatK6CSV  Format = "k6-csv"
	FormatK6JSON Format = "k6-json"
	FormatHlog   Format = "hlog"
	FormatList   Format = "list"
)

// Formats lists the formats Import accepts, for flag help.
func Formats() []Format {
	return []Format{FormatAuto, FormatK6CSV, FormatK6JSON, FormatHlog, FormatList}
}

// Unit is the time unit of raw values in hlog files and lists.
type Unit string

// The units Options.Unit accepts ("" means the format's default).
const (
	UnitNanos  Unit = "ns"
	UnitMicros Unit = "us"
	UnitMillis Unit = "ms"
	UnitSecs   Unit = "s"
)

// Nanos is the size of one raw value of unit u in nanoseconds.
func (u Unit) Nanos() (int64, error) {
	switch u {
	case UnitNanos:
		return 1, nil
	case UnitMicros, "µs":
		return 1e3, nil
	case UnitMillis:
		return 1e6, nil
	case UnitSecs:
		return 1e9, nil
	}
	return 0, fmt.Errorf("%w: unit %q (use ns, us, ms or s)", ErrOption, string(u))
}

// Options configure Import. The zero value imports with every default.
type Options struct {
	Format   Format        // "" or FormatAuto: detect
	Unit     Unit          // hlog and list values; default ms for lists, ns for foreign hlogs, µs for knee's own
	Lenient  bool          // skip bad rows (counted, first one reported) instead of failing
	Interval time.Duration // interval length for k6 and lists; default 1 s
	// Window is how many intervals stay open for late rows; default 10.
	// A row older than the window is recorded into the oldest open interval and counted as late.
	Window int
	// Duration is the run length given to a list without timestamps. Without
	// it such a list has no rate and no duration (run.json's no_timestamps);
	// its one interval is Interval long only to hold the histogram.
	Duration time.Duration
	// untimedDuration: Duration was not given, withDefaults set it.
	untimedDuration bool
	Scenario        string // overrides every row's scenario
	Name            string // overrides every row's request name
	Model           string // "open" or "closed" when the user knows; default "unknown"
	Executor        string // the executor that generated the load, when known
	// TargetRate is the rate (req/s) the test offered, when known (open model).
	TargetRate float64
	// MaxSeries caps distinct scenario+name series (k6 names untagged
	// requests by URL); the rest are folded into the name "(other)". Default 200.
	MaxSeries int
	// RedactQuery names query parameters whose values are masked in request
	// names (k6 names untagged requests by URL); URL userinfo always is.
	RedactQuery []string
}

// Errors Import wraps; test them with errors.Is.
var (
	ErrOption        = errors.New("bad import option")
	ErrUnknownFormat = errors.New("unknown input format")
	ErrEmpty         = errors.New("empty input")
	ErrNoData        = errors.New("no latency in input")
	ErrBadRow        = errors.New("bad row")
	ErrOutDir        = errors.New("output directory not empty")
	// ErrWrite: writing the run directory failed (a full disk): the work
	// failed, the input was not at fault.
	ErrWrite = errors.New("writing the run directory failed")
)

// Result is what Import did.
type Result struct {
	Dir      string
	Meta     rundir.Meta // as written to run.json
	Format   Format      // the format read
	Rows     int64       // rows mapped into the run (not headers, comments, skipped rows or k6 metrics knee ignores)
	Skipped  int64       // bad rows skipped (Lenient)
	FirstBad error       // the first skipped row's error, nil when none
	Late     int64       // rows older than the open window, recorded into its oldest interval
	Clamped  int64       // latencies negative or above 1 h, clamped by record
}

// Import reads the file at path and writes it as a run directory at outDir,
// which must not exist or be empty. On error nothing is left at outDir that
// Import created.
func Import(ctx context.Context, path, outDir string, opt Options) (*Result, error) {
	opt, err := opt.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := checkOutDir(outDir); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("import: %w", err)
	}
	defer f.Close()
	var modTime time.Time
	if fi, err := f.Stat(); err == nil {
		modTime = fi.ModTime().UTC()
	}
	sink := newDirSink(outDir)
	res, err := importFrom(ctx, f, path, modTime, opt, sink)
	if err != nil {
		sink.abandon()
		return nil, err
	}
	res.Dir = outDir
	if res.Meta.ID == "" {
		res.Meta.ID = filepath.Base(outDir) // as dirSink wrote it
	}
	return res, nil
}

// importFrom reads r (named name in messages and run.json) into sink.
func importFrom(ctx context.Context, r io.Reader, name string, modTime time.Time, opt Options, s sink) (*Result, error) {
	in, format, err := openInput(r, name, opt.Format)
	if err != nil {
		return nil, err
	}
	src := source{ctx: ctx, name: name, r: in, opt: opt, sink: s, modTime: modTime}
	var res Result
	switch format {
	case FormatK6CSV:
		res, err = importK6CSV(src)
	case FormatK6JSON:
		res, err = importK6JSON(src)
	case FormatHlog:
		res, err = importHlog(src)
	case FormatList:
		res, err = importList(src)
	}
	if err != nil {
		return nil, err
	}
	res.Format = format
	return &res, nil
}

// source is what every format's importer gets.
type source struct {
	ctx  context.Context
	name string // file name, for errors
	r    *bufio.Reader
	opt  Options
	sink sink
	// modTime stands in for the start of files that do not say when they
	// were recorded (untimed lists, hlogs without StartTime).
	modTime time.Time
}

func (o Options) withDefaults() (Options, error) {
	if o.Format == "" {
		o.Format = FormatAuto
	}
	known := false
	for _, f := range Formats() {
		known = known || f == o.Format
	}
	if !known {
		return o, fmt.Errorf("%w: format %q (use auto, k6-csv, k6-json, hlog or list)", ErrOption, string(o.Format))
	}
	if o.Unit != "" {
		if _, err := o.Unit.Nanos(); err != nil {
			return o, err
		}
	}
	if o.Interval == 0 {
		o.Interval = time.Second
	}
	if o.Interval < time.Millisecond {
		return o, fmt.Errorf("%w: interval %v is below 1ms", ErrOption, o.Interval)
	}
	if o.Window == 0 {
		o.Window = 10
	}
	if o.Window < 1 {
		return o, fmt.Errorf("%w: window %d must be at least 1", ErrOption, o.Window)
	}
	if o.MaxSeries == 0 {
		o.MaxSeries = record.DefaultMaxSeries
	}
	if o.Duration <= 0 {
		o.Duration, o.untimedDuration = o.Interval, true
	}
	switch o.Model {
	case "":
		o.Model = "unknown"
	case "open", "closed", "unknown":
	default:
		return o, fmt.Errorf("%w: model %q (use open or closed)", ErrOption, o.Model)
	}
	return o, nil
}

func checkOutDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("import: %w", err)
	}
	if len(entries) > 0 {
		return fmt.Errorf("import: %s: %w (choose a new directory)", dir, ErrOutDir)
	}
	return nil
}

// openInput wraps f in a buffered reader (gunzipping when the content is
// gzip) and settles the format.
func openInput(f io.Reader, path string, want Format) (*bufio.Reader, Format, error) {
	br := bufio.NewReaderSize(f, 1<<20)
	head, _ := br.Peek(2)                                     // a short or failing peek shows up on the first read
	if len(head) == 2 && head[0] == 0x1f && head[1] == 0x8b { // gzip's magic number
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, "", fmt.Errorf("import: %s: corrupt gzip header: %w", path, err)
		}
		br = bufio.NewReaderSize(zr, 1<<20)
	}
	if want != FormatAuto {
		return br, want, nil
	}
	head, err := br.Peek(64 << 10)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return nil, "", fmt.Errorf("import: %s: %w", path, err)
	}
	if len(bytes.TrimSpace(head)) == 0 {
		return nil, "", fmt.Errorf("import: %s: %w: the file holds no data", path, ErrEmpty)
	}
	if f := detect(head); f != "" {
		return br, f, nil
	}
	if f := byExtension(path); f != "" {
		return br, f, nil
	}
	return nil, "", fmt.Errorf("import: %s: %w: not a k6 CSV or JSON, hlog or latency list (give --format)",
		path, ErrUnknownFormat)
}

// detect recognises a format from the first bytes of a file; "" if unsure.
func detect(head []byte) Format {
	for len(head) > 0 {
		line := head
		if i := bytes.IndexByte(head, '\n'); i >= 0 {
			line, head = head[:i], head[i+1:]
		} else {
			head = nil
		}
		line = bytes.TrimSpace(line)
		switch {
		case len(line) == 0:
			continue
		case bytes.HasPrefix(line, []byte("#[")), bytes.HasPrefix(line, []byte(`"StartTimestamp"`)),
			bytes.HasPrefix(line, []byte("Tag=")):
			return FormatHlog
		case line[0] == '#':
			continue // a list's comment (hlog comments start "#[")
		case line[0] == '{':
			return FormatK6JSON
		case bytes.Contains(line, []byte("metric_name")) && bytes.Contains(line, []byte("metric_value")):
			return FormatK6CSV
		case bytes.Contains(line, []byte(",HIST")):
			return FormatHlog
		case line[0] >= '0' && line[0] <= '9' || line[0] == '.':
			return FormatList
		}
		return ""
	}
	return ""
}

func byExtension(path string) Format {
	name := strings.TrimSuffix(strings.ToLower(filepath.Base(path)), ".gz")
	switch filepath.Ext(name) {
	case ".csv":
		return FormatK6CSV
	case ".json", ".jsonl", ".ndjson":
		return FormatK6JSON
	case ".hlog", ".histogram":
		return FormatHlog
	case ".txt", ".list", ".lst", ".dat":
		return FormatList
	}
	return ""
}
