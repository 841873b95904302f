package record

// RecordCheck counts one check() evaluation of a k6 script in scenario's
// counters of the current interval. A check is not a request: it touches
// no other counter.
func (s *Shard) RecordCheck(scenario string, pass bool) {
	st := s.st
	st.mu.Lock()
	defer st.mu.Unlock()
	t, ok := st.cur.tallys[scenario]
	if !ok {
		t = &tally{}
		st.cur.tallys[scenario] = t
	}
	if pass {
		t.checksPassed++
	} else {
		t.checksFailed++
	}
}
