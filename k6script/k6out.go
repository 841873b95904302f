package k6script

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/knee-dev/knee/load"
)

// Output writes k6's --out csv format (the columns k6 writes, times in
// k6's unix_micro timeFormat) or its --out json format (JSON lines of
// Metric declarations and Points) for every request of the test, so a
// team's k6 tooling keeps working; knee's importer reads both back. The
// durations are k6's: http_req_duration is the service time (send to
// reply), not knee's latency from the intended start.
type Output struct {
	mu   sync.Mutex
	json bool
	w    *bufio.Writer
	c    *csv.Writer
	dst  io.WriteCloser
	err  error
	// stamp writes a CSV row's timestamp; nil is unix_micro.
	stamp func(time.Time) string
}

func (o *Output) timestamp(t time.Time) string {
	if o.stamp != nil {
		return o.stamp(t)
	}
	return strconv.FormatInt(t.UnixMicro(), 10)
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
	o := &Output{json: true, w: bufio.NewWriterSize(dst, 64<<10), dst: dst}
	for _, m := range []struct{ name, typ, contains string }{
		{"http_reqs", "counter", "default"}, {"http_req_duration", "trend", "time"}, {"http_req_failed", "rate", "default"},
		{"data_sent", "counter", "data"}, {"data_received", "counter", "data"}, {"iteration_duration", "trend", "time"},
	} {
		line, _ := json.Marshal(map[string]any{"type": "Metric", "metric": m.name,
			"data": map[string]any{"name": m.name, "type": m.typ, "contains": m.contains, "thresholds": []string{}, "submetrics": nil}})
		if _, o.err = o.w.Write(append(line, '\n')); o.err != nil {
			break
		}
	}
	return o
}

// write writes one sample: a CSV row of csvHeader's columns, or a JSON Point.
func (o *Output) write(row []string, at time.Time) {
	if o.err != nil {
		return
	}
	if !o.json {
		o.err = o.c.Write(row)
		return
	}
	value, _ := strconv.ParseFloat(row[2], 64)
	tags := map[string]string{}
	for i, col := range csvHeader {
		if i > 2 && row[i] != "" && col != "extra_tags" && col != "metadata" {
			tags[col] = row[i]
		}
	}
	line, err := json.Marshal(map[string]any{"type": "Point", "metric": row[0],
		"data": map[string]any{"time": at.UTC().Format(time.RFC3339Nano), "value": value, "tags": tags}})
	if err != nil {
		o.err = err
		return
	}
	_, o.err = o.w.Write(append(line, '\n'))
}

// SetOutput makes every request of the test (not setup's or teardown's)
// also go to o.
func (s *Script) SetOutput(o *Output) { s.out = o }

// request writes one request's rows: http_reqs, http_req_duration,
// http_req_failed, data_sent, data_received.
func (o *Output) request(smp *load.Sample, method, url, group, proto string, code int) {
	ts := o.timestamp(smp.Done)
	status := strconv.Itoa(smp.Status)
	failed, expected := "0", "true"
	if smp.Expected < 0 || smp.Expected == 0 && (smp.Status == 0 || smp.Status >= 400) {
		failed, expected = "1", "false"
	}
	errText, errCode := "", ""
	if smp.Err != nil {
		errText = smp.Err.Error()
	}
	if code != 0 {
		errCode = strconv.Itoa(code)
	}
	row := func(metric, value string) []string {
		return []string{metric, ts, value, "", errText, errCode, expected, group, method, smp.Name, proto, smp.Scenario, "", status, "", "", url, "", ""}
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.err != nil {
		return
	}
	for _, r := range [][]string{
		row("http_reqs", "1"),
		row("http_req_duration", msString(smp.Service)),
		row("http_req_failed", failed),
		row("data_sent", strconv.FormatInt(smp.BytesOut, 10)),
		row("data_received", strconv.FormatInt(smp.BytesIn, 10)),
	} {
		o.write(r, smp.Done)
	}
}

// iteration writes one iteration_duration row.
func (o *Output) iteration(scenario string, end time.Time, d time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.write([]string{"iteration_duration", o.timestamp(end), msString(d), "", "", "", "", "", "", "", "", scenario, "", "", "", "", "", "", ""}, end)
}

func msString(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 6, 64)
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
