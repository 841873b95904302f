package k6script

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/knee-dev/knee/k6metric"
	"github.com/knee-dev/knee/request"
)

// Output writes k6's --out csv format (the columns k6 writes, times in
// k6's default timeFormat, unix seconds) or its --out json format (JSON lines of
// Metric declarations and Points) for every request, one row set per
// redirect hop as k6 writes them, so a team's k6 tooling keeps working;
// knee's importer reads both back. The durations are k6's:
// http_req_duration is sending + waiting + receiving, not knee's latency
// from the intended start.
type Output struct {
	mu   sync.Mutex
	json bool
	w    *bufio.Writer
	c    *csv.Writer
	dst  io.WriteCloser
	err  error
	// stamp writes a CSV row's timestamp; nil is unix, k6's default.
	stamp func(time.Time) string
	// declared are the metrics declared in the JSON output so far: the
	// HTTP ones at the start, others (ws_*) at their first Point, as k6
	// declares every metric.
	declared map[string]bool
}

func (o *Output) timestamp(t time.Time) string {
	if o.stamp != nil {
		return o.stamp(t)
	}
	return strconv.FormatInt(t.Unix(), 10) // k6's default timeFormat, unix
}

// CSVOutput is the csv Output (its old name).
type CSVOutput = Output

var csvHeader = []string{"metric_name", "timestamp", "metric_value", "check", "error", "error_code", "expected_response",
	"group", "method", "name", "proto", "scenario", "service", "status", "subproto", "tls_version", "url", "extra_tags", "metadata"}

// NewCSVOutput writes the header to dst; Close flushes and closes it.
func NewCSVOutput(dst io.WriteCloser) *Output {
	w := bufio.NewWriterSize(dst, 64<<10)
	o := &Output{w: w, c: csv.NewWriter(w), dst: dst}
	o.err = o.c.Write(csvHeader)
	return o
}

// NewJSONOutput writes k6's JSON lines to dst, starting with the Metric
// declarations; Close flushes and closes it.
func NewJSONOutput(dst io.WriteCloser) *Output {
	o := &Output{json: true, w: bufio.NewWriterSize(dst, 64<<10), dst: dst, declared: map[string]bool{}}
	for _, name := range []string{k6metric.HTTPReqs, k6metric.HTTPReqDuration, k6metric.HTTPReqBlocked, k6metric.HTTPReqConnecting,
		k6metric.HTTPReqTLSHandshaking, k6metric.HTTPReqSending, k6metric.HTTPReqWaiting, k6metric.HTTPReqReceiving,
		k6metric.HTTPReqFailed} {
		o.declare(name, "", "")
	}
	return o
}

// declare writes metric's Metric line once (JSON only); kind and contains
// are a custom metric's type and contents ("" for a built-in's).
func (o *Output) declare(name, kind, contains string) {
	if !o.json || o.declared[name] || o.err != nil {
		return
	}
	o.declared[name] = true
	m, ok := k6metric.Lookup(name)
	if !ok {
		m = k6metric.Metric{Name: name, Type: kind, Contains: contains}
	}
	line, _ := json.Marshal(map[string]any{"type": "Metric", "metric": m.Name,
		"data": map[string]any{"name": m.Name, "type": m.Type, "contains": m.Contains, "thresholds": []string{}, "submetrics": nil}})
	_, o.err = o.w.Write(append(line, '\n'))
}

// write writes one sample of value: a CSV row of csvHeader's columns
// (its value written with %f, as k6's csv.SampleToRow: 6 decimals), or a
// JSON Point with the value whole and the sample's tags, every one (k6's
// JSON output writes the TagSet whole: a top-level sample's group is "").
func (o *Output) write(row []string, at time.Time, value float64, tags map[string]string) {
	if o.err != nil {
		return
	}
	if !o.json {
		row[2] = strconv.FormatFloat(value, 'f', 6, 64)
		o.err = o.c.Write(row)
		return
	}
	if tags == nil {
		tags = map[string]string{} // {} as k6 writes an empty set, not null
	}
	line, err := json.Marshal(map[string]any{"type": "Point", "metric": row[0],
		"data": map[string]any{"time": at.UTC().Format(time.RFC3339Nano), "value": value, "tags": tags}})
	if err != nil {
		o.err = err
		return
	}
	_, o.err = o.w.Write(append(line, '\n'))
}

// SetOutput makes every sample k6 would write (every request and
// redirect hop, setup's and teardown's too, every iteration, check, group,
// custom metric, data_sent and data_received, ws_* and grpc_* value, as k6
// emits them) also go to o.
func (s *Script) SetOutput(o *Output) {
	s.out = o
	s.k6.mu.Lock()
	s.k6.out = o
	s.k6.mu.Unlock()
}

// hopRow is one request (one redirect hop) as k6 writes it.
type hopRow struct {
	done     time.Time
	tags     map[string]string // hopTags'
	expected bool
	judged   bool // a response callback judged it (none under a null one, as k6)
	t        request.Timings
}

// request writes one request's rows, as k6 writes a hop's: http_reqs,
// http_req_duration (k6's: sending + waiting + receiving), the six
// phases, http_req_failed, each with the hop's tags. data_sent and
// data_received come once per iteration, as k6 writes them
// (K6Metrics.add).
func (o *Output) request(h *hopRow) {
	cols := tagColumns(h.tags)
	ts := o.timestamp(h.done)
	failed := 0.0
	if !h.expected {
		failed = 1
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.err != nil {
		return
	}
	for _, p := range []k6Point{
		{k6metric.HTTPReqs, 1},
		{k6metric.HTTPReqDuration, ms(h.t.Duration)},
		{k6metric.HTTPReqBlocked, ms(h.t.Blocked)},
		{k6metric.HTTPReqConnecting, ms(h.t.Connecting)},
		{k6metric.HTTPReqTLSHandshaking, ms(h.t.TLSHandshaking)},
		{k6metric.HTTPReqSending, ms(h.t.Sending)},
		{k6metric.HTTPReqWaiting, ms(h.t.Waiting)},
		{k6metric.HTTPReqReceiving, ms(h.t.Receiving)},
		{k6metric.HTTPReqFailed, failed},
	} {
		if p.metric == k6metric.HTTPReqFailed && !h.judged {
			continue
		}
		r := slices.Clone(cols)
		r[0], r[1] = p.metric, ts
		o.write(r, h.done, p.value, h.tags)
	}
}

// sample writes one value of a metric other than a hop's (kind and
// contains: a custom metric's k6 type and contents) with its tags, as k6 writes any sample: the tags of csvHeader's
// columns in theirs, the others as extra_tags (k=v joined by &, sorted
// here; k6's order is its map's).
func (o *Output) sample(metric, kind, contains string, at time.Time, value float64, tags map[string]string) {
	row := tagColumns(tags)
	row[0], row[1] = metric, o.timestamp(at)
	o.mu.Lock()
	defer o.mu.Unlock()
	o.declare(metric, kind, contains)
	o.write(row, at, value, tags)
}

// tagColumns is a row of csvHeader's columns with tags in them: each tag
// of a column in its own, the others as extra_tags (k=v joined by &,
// sorted here; k6's order is its map's); the first three left empty.
func tagColumns(tags map[string]string) []string {
	row := make([]string, len(csvHeader))
	var extra []string
	for k, val := range tags {
		if i := slices.Index(csvHeader, k); i > 2 && i < len(csvHeader)-2 {
			row[i] = val
		} else if val != "" {
			extra = append(extra, k+"="+val)
		}
	}
	slices.Sort(extra)
	row[len(csvHeader)-2] = strings.Join(extra, "&")
	return row
}

// Close flushes and closes the file; the first error of any write.
func (o *Output) Close() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.c != nil {
		o.c.Flush()
		if o.err == nil {
			o.err = o.c.Error()
		}
	}
	if err := o.w.Flush(); o.err == nil {
		o.err = err
	}
	if err := o.dst.Close(); o.err == nil {
		o.err = err
	}
	return o.err
}
