package record

import "time"

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
