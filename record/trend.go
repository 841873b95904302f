package record

import (
	"time"

	"github.com/knee-dev/knee/k6metric"
)

// Trend is a script's own measurement (k6's Trend metric). Its series' Name
// is the trend's name; values are recorded as if they were milliseconds
// (time trends are; other trends keep their own unit at the same scale),
// so they merge, log and clamp exactly as latencies do.
const Trend Metric = "trend"

// RecordTrend records d into the Trend series of name in scenario. A trend
// value is not a request: it touches no counter.
func (s *Shard) RecordTrend(scenario, name string, d time.Duration) {
	st := s.st
	st.mu.Lock()
	defer st.mu.Unlock()
	k := Key{Metric: Trend, Scenario: scenario, Name: name}
	h := st.cur.hists[k]
	if h == nil {
		k.Name = s.cap.Name(k) // a name new to this interval: within the cap, or folded
		h = st.cur.hists[k]
	}
	if h == nil {
		h = NewHistogram()
		st.cur.hists[k] = h
	}
	h.Record(d)
}

// IterationDuration is the Trend series of a k6 script's finished
// iterations, one per scenario: k6's iteration_duration, whose count in an
// interval is k6's iterations in it.
const IterationDuration = k6metric.IterationDuration

// RecordIteration records the duration of one finished iteration of
// scenario into its IterationDuration series. The name is k6's, one per
// scenario, so it bypasses the cap of names (SeriesCap): a script whose
// groups or custom Trends filled the cap still gets its iterations drawn.
func (s *Shard) RecordIteration(scenario string, d time.Duration) {
	st := s.st
	st.mu.Lock()
	defer st.mu.Unlock()
	k := Key{Metric: Trend, Scenario: scenario, Name: IterationDuration}
	h := st.cur.hists[k]
	if h == nil {
		h = NewHistogram()
		st.cur.hists[k] = h
	}
	h.Record(d)
}

// Phases are the phases of one HTTP request as k6 times them (k6's
// http_req_blocked, _connecting, _tls_handshaking, _sending, _waiting and
// _receiving), in that order.
type Phases [6]time.Duration

// PhaseNames are the Trend series of Phases, k6's metric names in Phases' order.
func PhaseNames() [6]string {
	return [6]string{k6metric.HTTPReqBlocked, k6metric.HTTPReqConnecting, k6metric.HTTPReqTLSHandshaking,
		k6metric.HTTPReqSending, k6metric.HTTPReqWaiting, k6metric.HTTPReqReceiving}
}

// RecordPhases records one request's phases into scenario's series of
// PhaseNames, under one lock. As RecordIteration, k6's own names bypass the
// cap of names. A phase that took no time (a reused connection's connect)
// reads as 1 µs, the histograms' lowest value.
func (s *Shard) RecordPhases(scenario string, p Phases) {
	st := s.st
	st.mu.Lock()
	defer st.mu.Unlock()
	hs := st.cur.phases[scenario]
	if hs == nil {
		hs = new([len(Phases{})]*Histogram)
		for i, name := range PhaseNames() {
			k := Key{Metric: Trend, Scenario: scenario, Name: name}
			if hs[i] = st.cur.hists[k]; hs[i] == nil {
				hs[i] = NewHistogram()
				st.cur.hists[k] = hs[i]
			}
		}
		st.cur.phases[scenario] = hs
	}
	for i, h := range hs {
		h.Record(p[i])
	}
}
