package importer

import (
	"time"

	"github.com/knee-dev/knee/k6metric"
	"github.com/knee-dev/knee/record"
)

// k6Row is one metric sample of k6's CSV or JSON output, as raw bytes that
// point into the reader's buffer (valid until the next row).
type k6Row struct {
	metric, time, value         []byte
	errorCode, expected, status []byte
	name, url, scenario         []byte
}

// k6Mapper maps k6 metric samples onto a builder:
//
//	http_req_duration  -> Latency histogram of scenario + name tag (url when
//	                      untagged), requests, status class, errors (k6's
//	                      http_req_failed rule), transport errors by class
//	http_reqs          -> cross-check of the request count
//	dropped_iterations -> DroppedIterations
//	data_received/sent -> BytesIn / BytesOut
//	vus                -> VUs of the interval (highest value seen)
//	iteration_duration -> the scenario's iteration Trend (the charts'
//	                      iterations/s and duration), and its Interval
//	                      histogram in the closed model
//	http_req_blocked … _receiving -> the scenario's phase Trends (charts)
//	ws_connecting, ws_session_duration, ws_ping -> the scenario's Trends of
//	                      those names (as a live run of a WebSocket script)
//
// Other metrics (checks, custom metrics, the ws_* counters...) are skipped.
type k6Mapper struct {
	b     *builder
	bad   *badRows
	times timeParser
	scen  []byte // Options.Scenario, nil when not overridden
	name  []byte // Options.Name, nil when not overridden
	dflt  []byte // defaultScenario, for rows without a scenario tag
	rows  int64
}

func newK6Mapper(b *builder, bad *badRows, opt Options) *k6Mapper {
	m := &k6Mapper{b: b, bad: bad, dflt: []byte(defaultScenario)}
	if opt.Scenario != "" {
		m.scen = []byte(opt.Scenario)
	}
	if opt.Name != "" {
		m.name = []byte(opt.Name)
	}
	return m
}

// wants reports whether row would use a sample of metric: the CSV reader
// skips the others without splitting them.
func (m *k6Mapper) wants(metric []byte) bool {
	switch string(metric) {
	case k6metric.HTTPReqDuration, k6metric.HTTPReqs, k6metric.DroppedIterations, k6metric.DataReceived, k6metric.DataSent, k6metric.VUs, "":
		return true
	case k6metric.IterationDuration, k6metric.HTTPReqBlocked, k6metric.HTTPReqConnecting, k6metric.HTTPReqTLSHandshaking,
		k6metric.HTTPReqSending, k6metric.HTTPReqWaiting, k6metric.HTTPReqReceiving,
		k6metric.WSConnecting, k6metric.WSSessionDuration, k6metric.WSPing:
		return true
	}
	return false
}

// row maps one sample; the error is non-nil only when the import must stop.
func (m *k6Mapper) row(line int64, r *k6Row) error {
	switch string(r.metric) {
	case k6metric.HTTPReqDuration:
		return m.duration(line, r)
	case k6metric.HTTPReqs, k6metric.DroppedIterations, k6metric.DataReceived, k6metric.DataSent, k6metric.VUs:
		return m.count(line, r)
	case k6metric.IterationDuration:
		return m.iteration(line, r)
	case k6metric.HTTPReqBlocked, k6metric.HTTPReqConnecting, k6metric.HTTPReqTLSHandshaking,
		k6metric.HTTPReqSending, k6metric.HTTPReqWaiting, k6metric.HTTPReqReceiving,
		k6metric.WSConnecting, k6metric.WSSessionDuration, k6metric.WSPing:
		return m.trend(line, r, string(r.metric))
	case "":
		return m.bad.bad(line, fixLenient, "empty metric name")
	}
	return nil
}

// bucket finds the interval of the row's timestamp.
func (m *k6Mapper) bucket(line int64, r *k6Row) (*bucket, error) {
	t, ok := m.times.parse(r.time)
	if !ok {
		return nil, m.bad.bad(line, "k6 writes unix seconds, unix_milli/micro/nano or RFC 3339; "+fixLenient,
			"timestamp %q is not a time", clip(r.time))
	}
	bk, ok, err := m.b.at(t)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, m.bad.bad(line, fixLenient, "timestamp %q jumps more than %v past the rows before it", clip(r.time), maxJump)
	}
	return bk, nil
}

func (m *k6Mapper) duration(line int64, r *k6Row) error {
	ns, ok := parseScaled(r.value, int64(time.Millisecond))
	if !ok {
		return m.bad.bad(line, "http_req_duration values are milliseconds; "+fixLenient,
			"metric_value %q is not a duration", clip(r.value))
	}
	status := 0
	if len(r.status) > 0 {
		if status, ok = parseInt(r.status); !ok {
			return m.bad.bad(line, fixLenient, "status %q is not an HTTP status", clip(r.status))
		}
	}
	bk, err := m.bucket(line, r)
	if bk == nil {
		return err
	}
	scen, name := r.scenario, r.name
	if len(name) == 0 {
		name = r.url // k6 sets name to the URL unless the script tags it
	}
	if m.scen != nil {
		scen = m.scen
	} else if len(scen) == 0 {
		scen = m.dflt
	}
	if m.name != nil {
		name = m.name
	}
	var failed bool
	switch string(r.expected) {
	case "true":
	case "false":
		failed = true
	default: // no responseCallback: k6's default expects 200..399
		failed = status == 0 || status >= 400
	}
	var class string
	if status == 0 {
		class = k6ErrorClass(r.errorCode)
	}
	m.b.request(bk, m.b.series.latencyID(scen, name), time.Duration(ns), status, failed, class)
	m.rows++
	return nil
}

// count maps k6's counters and the vus gauge.
func (m *k6Mapper) count(line int64, r *k6Row) error {
	v, ok := parseCount(r.value)
	if !ok {
		return m.bad.bad(line, fixLenient, "metric_value %q is not a number", clip(r.value))
	}
	metric := string(r.metric)
	if metric == k6metric.HTTPReqs {
		m.b.httpReqs += int64(v) // totals only: requests are counted from http_req_duration
		m.rows++
		return nil
	}
	bk, err := m.bucket(line, r)
	if bk == nil {
		return err
	}
	m.rows++
	if metric == k6metric.VUs {
		bk.vus, bk.hasVUs = max(bk.vus, int(v)), true
		return nil
	}
	scen := r.scenario
	if m.scen != nil {
		scen = m.scen
	} else if len(scen) == 0 {
		scen = m.dflt
	}
	c := bk.counters(m.b.series.scenario(scen))
	switch metric {
	case k6metric.DroppedIterations:
		c.DroppedIterations += int64(v)
	case k6metric.DataReceived:
		c.BytesIn += int64(v)
	case k6metric.DataSent:
		c.BytesOut += int64(v)
	}
	return nil
}

// iteration records a closed-model VU's iteration period (request + think).
// iteration records a k6 iteration_duration sample: as the scenario's
// iteration Trend always (as a live knee run of the script records it), and
// as its Interval histogram in the closed model, where the iteration
// interval is what the coordinated-omission correction needs.
func (m *k6Mapper) iteration(line int64, r *k6Row) error {
	if err := m.trend(line, r, record.IterationDuration); err != nil || m.b.opt.Model != "closed" {
		return err
	}
	return m.sampleAs(line, r, func(scen string) record.Key {
		return record.Key{Metric: record.Interval, Scenario: scen}
	}, false)
}

// trend records a k6 time sample (ms) in the scenario's Trend series name,
// the series a live knee run of a script records for the charts.
func (m *k6Mapper) trend(line int64, r *k6Row, name string) error {
	return m.sampleAs(line, r, func(scen string) record.Key {
		return record.Key{Metric: record.Trend, Scenario: scen, Name: name}
	}, true)
}

// sampleAs records the row's value (ms) in the series key gives for its
// scenario; count says whether the row counts as imported (a row recorded
// twice counts once).
func (m *k6Mapper) sampleAs(line int64, r *k6Row, key func(scen string) record.Key, count bool) error {
	ns, ok := parseScaled(r.value, int64(time.Millisecond))
	if !ok {
		return m.bad.bad(line, fixLenient, "metric_value %q is not a duration", clip(r.value))
	}
	bk, err := m.bucket(line, r)
	if bk == nil {
		return err
	}
	scen := r.scenario
	if m.scen != nil {
		scen = m.scen
	} else if len(scen) == 0 {
		scen = m.dflt
	}
	id := m.b.series.id(key(m.b.series.scenario(scen)))
	m.b.sample(bk, id, time.Duration(ns))
	if count {
		m.rows++
	}
	return nil
}

// k6ErrorClass maps a k6 error_code (https://grafana.com/docs/k6/latest/javascript-api/error-codes/)
// to one of record.ErrorClasses.
func k6ErrorClass(code []byte) string {
	n, ok := parseInt(code)
	switch {
	case !ok:
		return "other"
	case n == 1050 || n == 1211: // request timeout, TCP dial timeout
		return "timeout"
	case n == 1212: // TCP dial: connection refused
		return "refused"
	case n == 1201 || n == 1220: // broken pipe, connection reset
		return "reset"
	case n >= 1100 && n < 1200:
		return "dns"
	case n >= 1300 && n < 1400:
		return "tls"
	}
	return "other"
}

// clip shortens a value quoted in an error message.
func clip(b []byte) string {
	const max = 40
	if len(b) > max {
		return string(b[:max]) + "…"
	}
	return string(b)
}
