// Package k6metric is the one list of k6's built-in metric names that knee
// reads, writes, sums or borrows: the k6 script runner, the k6 CSV/JSON
// importer, the thresholds and knee's own counters named after k6's all
// take the names from here, so none is spelled twice (k6metric's test
// fails on a string literal of one elsewhere). It is k6 v1's core, HTTP,
// gRPC (k6/net/grpc) and WebSocket (k6/ws) metrics; knee has no browser
// module, so its metrics are not listed. It imports no knee package.
package k6metric

// Types of k6 metrics, as k6's JSON output names them.
const (
	Counter = "counter" // a sum of values
	Gauge   = "gauge"   // the last value, with min and max
	Rate    = "rate"    // the share of values that are not zero
	Trend   = "trend"   // every value: min, max, avg, median, percentiles
)

// What a metric's values are, k6's "contains" of its JSON output.
const (
	Plain = "default" // counts, or 0/1 for a Rate
	Time  = "time"    // durations, in milliseconds
	Data  = "data"    // bytes
)

// k6's built-in metrics, in k6's summary order (by name).
const (
	// Checks is a Rate: the share of check() conditions that passed.
	Checks = "checks"
	// DataReceived is a Counter of bytes received.
	DataReceived = "data_received"
	// DataSent is a Counter of bytes sent.
	DataSent = "data_sent"
	// DroppedIterations is a Counter of iterations never started: no VU
	// was free (arrival-rate executors) or the time was up.
	DroppedIterations = "dropped_iterations"
	// GroupDuration is a Trend of a group()'s run time, in ms.
	GroupDuration = "group_duration"
	// GRPCReqDuration is a Trend of a gRPC call's time, from its begin to
	// its end as grpc-go's stats see them (a stream's whole life), in ms.
	GRPCReqDuration = "grpc_req_duration"
	// GRPCStreams is a Counter of gRPC streams opened.
	GRPCStreams = "grpc_streams"
	// GRPCStreamsMsgsReceived is a Counter of messages received on gRPC streams.
	GRPCStreamsMsgsReceived = "grpc_streams_msgs_received"
	// GRPCStreamsMsgsSent is a Counter of messages sent on gRPC streams.
	GRPCStreamsMsgsSent = "grpc_streams_msgs_sent"
	// HTTPReqBlocked is a Trend of a request's wait for a connection slot, in ms.
	HTTPReqBlocked = "http_req_blocked"
	// HTTPReqConnecting is a Trend of a request's TCP connect time, in ms.
	HTTPReqConnecting = "http_req_connecting"
	// HTTPReqDuration is a Trend of a request's sending + waiting + receiving, in ms.
	HTTPReqDuration = "http_req_duration"
	// HTTPReqFailed is a Rate: the share of requests failed by the response
	// callback (by default: a transport error or a status >= 400).
	HTTPReqFailed = "http_req_failed"
	// HTTPReqReceiving is a Trend of a response's receive time after its first byte, in ms.
	HTTPReqReceiving = "http_req_receiving"
	// HTTPReqSending is a Trend of a request's send time, in ms.
	HTTPReqSending = "http_req_sending"
	// HTTPReqTLSHandshaking is a Trend of a request's TLS handshake time, in ms.
	HTTPReqTLSHandshaking = "http_req_tls_handshaking"
	// HTTPReqWaiting is a Trend of the wait for a response's first byte, in ms.
	HTTPReqWaiting = "http_req_waiting"
	// HTTPReqs is a Counter of HTTP requests, every redirect hop one.
	HTTPReqs = "http_reqs"
	// IterationDuration is a Trend of an iteration's run time, in ms.
	IterationDuration = "iteration_duration"
	// Iterations is a Counter of iterations finished.
	Iterations = "iterations"
	// VUs is a Gauge of the VUs active.
	VUs = "vus"
	// VUsMax is a Gauge of the VUs allocated.
	VUsMax = "vus_max"
	// WSConnecting is a Trend of a WebSocket's handshake time
	// (the dial and upgrade of ws.connect or new WebSocket), in ms.
	WSConnecting = "ws_connecting"
	// WSMsgsReceived is a Counter of WebSocket messages received.
	WSMsgsReceived = "ws_msgs_received"
	// WSMsgsSent is a Counter of WebSocket messages sent.
	WSMsgsSent = "ws_msgs_sent"
	// WSPing is a Trend of the time from a ping to its pong, in ms.
	WSPing = "ws_ping"
	// WSSessionDuration is a Trend of a WebSocket session's time, from the
	// dial to the socket's close, in ms (none for a failed handshake of a
	// new WebSocket, as in k6).
	WSSessionDuration = "ws_session_duration"
	// WSSessions is a Counter of WebSocket sessions started (every
	// ws.connect and new WebSocket, a refused one too).
	WSSessions = "ws_sessions"
)

// Metric is one built-in metric: its name, Type and what its values are
// (Plain, Time or Data).
type Metric struct {
	Name, Type, Contains string
}

// Builtins is every built-in metric above, in k6's summary order (by name).
func Builtins() []Metric {
	return []Metric{
		{Checks, Rate, Plain},
		{DataReceived, Counter, Data},
		{DataSent, Counter, Data},
		{DroppedIterations, Counter, Plain},
		{GroupDuration, Trend, Time},
		{GRPCReqDuration, Trend, Time},
		{GRPCStreams, Counter, Plain},
		{GRPCStreamsMsgsReceived, Counter, Plain},
		{GRPCStreamsMsgsSent, Counter, Plain},
		{HTTPReqBlocked, Trend, Time},
		{HTTPReqConnecting, Trend, Time},
		{HTTPReqDuration, Trend, Time},
		{HTTPReqFailed, Rate, Plain},
		{HTTPReqReceiving, Trend, Time},
		{HTTPReqSending, Trend, Time},
		{HTTPReqTLSHandshaking, Trend, Time},
		{HTTPReqWaiting, Trend, Time},
		{HTTPReqs, Counter, Plain},
		{IterationDuration, Trend, Time},
		{Iterations, Counter, Plain},
		{VUs, Gauge, Plain},
		{VUsMax, Gauge, Plain},
		{WSConnecting, Trend, Time},
		{WSMsgsReceived, Counter, Plain},
		{WSMsgsSent, Counter, Plain},
		{WSPing, Trend, Time},
		{WSSessionDuration, Trend, Time},
		{WSSessions, Counter, Plain},
	}
}

// Lookup is the built-in metric named name, if it is one.
func Lookup(name string) (Metric, bool) {
	for _, m := range Builtins() {
		if m.Name == name {
			return m, true
		}
	}
	return Metric{}, false
}
