package k6script

import (
	"bufio"
	"encoding/csv"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/knee-dev/knee/load"
)

// CSVOutput writes k6's --out csv format (the columns k6 writes, times in
// k6's unix_micro timeFormat) for every request of the test, so a team's
// k6 tooling keeps working; knee's importer reads it back. The durations
// are k6's: http_req_duration is the service time (send to reply), not
// knee's latency from the intended start.
type CSVOutput struct {
	mu  sync.Mutex
	w   *bufio.Writer
	c   *csv.Writer
	dst io.WriteCloser
	err error
}

var csvHeader = []string{"metric_name", "timestamp", "metric_value", "check", "error", "error_code", "expected_response",
	"group", "method", "name", "proto", "scenario", "service", "status", "subproto", "tls_version", "url", "extra_tags", "metadata"}

// NewCSVOutput writes the header to dst; Close flushes and closes it.
func NewCSVOutput(dst io.WriteCloser) *CSVOutput {
	w := bufio.NewWriterSize(dst, 64<<10)
	o := &CSVOutput{w: w, c: csv.NewWriter(w), dst: dst}
	o.err = o.c.Write(csvHeader)
	return o
}

// SetOutput makes every request of the test (not setup's or teardown's)
// also go to o.
func (s *Script) SetOutput(o *CSVOutput) { s.out = o }

// request writes one request's rows: http_reqs, http_req_duration,
// http_req_failed, data_sent, data_received.
func (o *CSVOutput) request(smp *load.Sample, method, url, group, proto string, code int) {
	ts := strconv.FormatInt(smp.Done.UnixMicro(), 10)
	status := strconv.Itoa(smp.Status)
	failed, expected := "0", "true"
	if smp.Status == 0 || smp.Status >= 400 {
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
		if o.err = o.c.Write(r); o.err != nil {
			return
		}
	}
}

// iteration writes one iteration_duration row.
func (o *CSVOutput) iteration(scenario string, end time.Time, d time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.err != nil {
		return
	}
	o.err = o.c.Write([]string{"iteration_duration", strconv.FormatInt(end.UnixMicro(), 10), msString(d), "", "", "", "", "", "", "", "", scenario, "", "", "", "", "", "", ""})
}

func msString(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 6, 64)
}

// Close flushes and closes the file; the first error of any write.
func (o *CSVOutput) Close() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.c.Flush()
	if o.err == nil {
		o.err = o.c.Error()
	}
	if err := o.w.Flush(); o.err == nil {
		o.err = err
	}
	if err := o.dst.Close(); o.err == nil {
		o.err = err
	}
	return o.err
}
