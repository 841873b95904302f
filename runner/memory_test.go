package runner

import (
	"runtime/metrics"
	"testing"
	"time"

	"github.com/knee-dev/knee/record"
)

// forcedGCs is the process's count of forced GC cycles (debug.FreeOSMemory
// forces one).
func forcedGCs() uint64 {
	s := []metrics.Sample{{Name: "/gc/cycles/forced:gc-cycles"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// returnMemory gives the heap back at the first stall's end, not again
// within returnGap, and again after it.
func TestReturnMemoryAtMostOncePerGap(t *testing.T) {
	e := &engine{}
	before := forcedGCs()
	e.returnMemory()
	e.returnMemory() // within the gap: nothing
	if got := forcedGCs() - before; got != 1 {
		t.Fatalf("two calls in a row forced %d GCs, want 1", got)
	}
	e.returned.Store(time.Now().Add(-returnGap - time.Second).UnixNano())
	e.returnMemory()
	if got := forcedGCs() - before; got != 2 {
		t.Errorf("a call after the gap: %d forced GCs in all, want 2", got)
	}
}

// summarize merges every latency series for the interval's p99
// and the send-lag series apart, from one scratch histogram reused from
// interval to interval: the second interval holds nothing of the first.
func TestSummarizeIntervalReusesScratch(t *testing.T) {
	hist := func(us ...int64) *record.Histogram {
		h := record.NewHistogram()
		for _, v := range us {
			h.Record(time.Duration(v) * time.Microsecond)
		}
		return h
	}
	e := &engine{}
	first := record.IntervalSnapshot{
		Start: 0, End: 2 * time.Second,
		Histograms: map[record.Key]*record.Histogram{
			// 100 values in all: 1..98 ms in one series, 500 and 900 ms in
			// another. p99 is the 99th smallest: 500 ms (bucket 499.968–500.223 ms).
			{Metric: record.Latency, Scenario: "s", Name: "a"}: hist(seq(1000, 98000, 1000)...),
			{Metric: record.Latency, Scenario: "s", Name: "b"}: hist(500000, 900000),
			{Metric: record.SendLag, Scenario: "s", Name: "a"}: hist(50, 60, 70),
		},
		Counters: map[string]record.Counters{"s": {Requests: 100, Errors: 3}},
	}
	got := e.summarize(first)
	if got.secs != 2 || got.requests != 100 || got.errs != 3 {
		t.Errorf("secs %v, requests %d, errors %d; want 2, 100, 3", got.secs, got.requests, got.errs)
	}
	if lo, hi := 499968*time.Microsecond, 500224*time.Microsecond; got.p99 < lo || got.p99 > hi {
		t.Errorf("p99 %v, want 500 ms (within its bucket [%v, %v])", got.p99, lo, hi)
	}
	if !got.sendLagRecorded || got.sendLagP99 != 70*time.Microsecond {
		t.Errorf("send lag p99 %v (recorded %v), want 70µs", got.sendLagP99, got.sendLagRecorded)
	}
	second := record.IntervalSnapshot{
		Start: 2 * time.Second, End: 3 * time.Second,
		Histograms: map[record.Key]*record.Histogram{
			{Metric: record.Latency, Scenario: "s", Name: "a"}: hist(300, 400),
		},
		Counters: map[string]record.Counters{"s": {Requests: 2}},
	}
	got = e.summarize(second)
	if got.p99 != 400*time.Microsecond || got.sendLagRecorded || got.requests != 2 {
		t.Errorf("second interval: p99 %v, send lag recorded %v, requests %d; want 400µs, false, 2 (nothing of the first)",
			got.p99, got.sendLagRecorded, got.requests)
	}
}

// seq is from, from+step, ..., up to to.
func seq(from, to, step int64) []int64 {
	var s []int64
	for v := from; v <= to; v += step {
		s = append(s, v)
	}
	return s
}
