package record

import (
	"encoding/json"
	"math"
	"reflect"
	"sync"
	"testing"
	"time"
)

func TestTagRoundTrip(t *testing.T) {
	tests := []struct {
		key Key
		tag string
	}{
		{Key{Latency, "s", "get"}, "latency|s|get"},
		{Key{Service, "a b", "x,y|z%"}, "service|a%20b|x%2Cy%7Cz%25"},
		{Key{SendLag, "", "k=v\n"}, "sendlag||k%3Dv%0A"},
	}
	for _, tt := range tests {
		if got := tt.key.Tag(); got != tt.tag {
			t.Errorf("%+v.Tag() = %q, want %q", tt.key, got, tt.tag)
		}
		if got := ParseTag(tt.tag); got != tt.key {
			t.Errorf("ParseTag(%q) = %+v, want %+v", tt.tag, got, tt.key)
		}
	}
	foreign := []string{"", "A", "a1.134a", "bogus|s|n", "latency|s", "latency|%zz|n"}
	for _, tag := range foreign {
		if got, want := ParseTag(tag), (Key{Metric: Latency, Name: tag}); got != want {
			t.Errorf("ParseTag(%q) = %+v, want %+v", tag, got, want)
		}
	}
}

func TestRecorderCounts(t *testing.T) {
	t0 := time.Unix(1000, 0)
	r := NewRecorder(t0)
	s1, s2 := r.Shard(), r.Shard()
	get := Key{Scenario: "open", Name: "get"}
	s1.Record(Sample{Key: get, Latency: 3 * time.Millisecond, Service: 2 * time.Millisecond, SendLag: time.Millisecond, Status: 200, BytesIn: 100, BytesOut: 10})
	s2.Record(Sample{Key: get, Latency: 5 * time.Millisecond, Service: 5 * time.Millisecond, Status: 503, BytesIn: 50})
	s2.Record(Sample{Key: get, Latency: 2 * time.Hour, Service: time.Second, Status: 0, ErrClass: "timeout"})
	s2.Record(Sample{Key: get, Latency: 5 * time.Millisecond, Service: time.Millisecond, Status: 404})
	s1.Record(Sample{Key: Key{Scenario: "closed", Name: "get"}, Latency: time.Millisecond, Service: time.Millisecond, Interval: 11 * time.Millisecond, Status: 0})
	// knee could not send it (no descriptor): failed, but not the target's error.
	s1.Record(Sample{Key: Key{Scenario: "closed", Name: "get"}, Latency: time.Millisecond, Service: time.Microsecond, Interval: 11 * time.Millisecond, ErrClass: GeneratorClass})
	r.Dropped("open", 7)
	r.DroppedLate("open", 5) // the generator behind its schedule: dropped too
	snap := r.Rotate(t0.Add(time.Second))
	if snap.Start != 0 || snap.End != time.Second {
		t.Errorf("interval [%v,%v), want [0,1s)", snap.Start, snap.End)
	}
	wantOpen := Counters{
		Requests: 4, Errors: 2, Failed: 3, BytesIn: 150, BytesOut: 10, DroppedIterations: 12, DroppedLate: 5, Clamped: 1,
		ByStatus:      map[string]int64{"2xx": 1, "4xx": 1, "5xx": 1},
		ErrorsByClass: map[string]int64{"timeout": 1},
	}
	if got := snap.Counters["open"]; !reflect.DeepEqual(got, wantOpen) {
		t.Errorf("open counters = %+v\nwant %+v", got, wantOpen)
	}
	wantClosed := Counters{Requests: 2, Errors: 1, Failed: 2, ErrorsByClass: map[string]int64{"other": 1, "generator": 1}}
	if got := snap.Counters["closed"]; !reflect.DeepEqual(got, wantClosed) {
		t.Errorf("closed counters = %+v\nwant %+v", got, wantClosed)
	}
	counts := map[Key]int64{
		{Latency, "open", "get"}:    4,
		{Service, "open", "get"}:    4,
		{SendLag, "open", "get"}:    1,
		{Latency, "closed", "get"}:  2,
		{Service, "closed", "get"}:  2,
		{Interval, "closed", "get"}: 2,
	}
	if len(snap.Histograms) != len(counts) {
		t.Errorf("%d histograms, want %d", len(snap.Histograms), len(counts))
	}
	for k, n := range counts {
		if h := snap.Histograms[k]; h == nil || h.Count() != n {
			t.Errorf("%+v: histogram %v, want count %d", k, h, n)
		}
	}
	if got := snap.Histograms[Key{Latency, "open", "get"}].Percentile(50); got != 5003*time.Microsecond { // 5000 µs sits in [5000,5003]
		t.Errorf("open latency p50 = %v, want 5.003ms", got)
	}

	// The next interval starts empty and where the last one ended.
	s1.Record(Sample{Key: get, Latency: time.Millisecond, Service: time.Millisecond, Status: 204})
	snap = r.Rotate(t0.Add(2 * time.Second))
	if snap.Start != time.Second || len(snap.Histograms) != 2 || snap.Counters["open"].Requests != 1 || snap.Counters["open"].DroppedIterations != 0 {
		t.Errorf("second interval wrong: %+v", snap)
	}
}

// Recording from many goroutines while rotating loses nothing (run with -race).
func TestRecorderConcurrent(t *testing.T) {
	t0 := time.Unix(0, 0)
	r := NewRecorder(t0)
	const workers, each = 8, 2000
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := r.Shard()
			for i := range each {
				s.Record(Sample{Key: Key{Scenario: "s", Name: "n"}, Latency: time.Duration(i+1) * time.Microsecond, Service: time.Microsecond, Status: 200})
			}
		}()
	}
	var total, reqs int64
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	for i := 1; ; i++ {
		select {
		case <-done:
		default:
			snap := r.Rotate(t0.Add(time.Duration(i) * time.Millisecond))
			total += snap.Histograms[Key{Latency, "s", "n"}].countOrZero()
			reqs += snap.Counters["s"].Requests
			continue
		}
		snap := r.Rotate(t0.Add(time.Duration(i) * time.Millisecond))
		total += snap.Histograms[Key{Latency, "s", "n"}].countOrZero()
		reqs += snap.Counters["s"].Requests
		break
	}
	if total != workers*each || reqs != workers*each {
		t.Errorf("recorded %d values, %d requests; want %d", total, reqs, workers*each)
	}
}

func (h *Histogram) countOrZero() int64 {
	if h == nil {
		return 0
	}
	return h.Count()
}

func BenchmarkShardRecord(b *testing.B) {
	r := NewRecorder(time.Now())
	s := r.Shard()
	smp := Sample{Key: Key{Scenario: "s", Name: "get"}, Latency: 1500 * time.Microsecond, Service: time.Millisecond, SendLag: 20 * time.Microsecond, Status: 200, BytesIn: 512}
	s.Record(smp)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		smp.Latency = time.Duration(i%100000) * time.Microsecond
		s.Record(smp)
	}
}

func TestShardRecordAllocs(t *testing.T) {
	r := NewRecorder(time.Now())
	s := r.Shard()
	smp := Sample{Key: Key{Scenario: "s", Name: "get"}, Latency: time.Millisecond, Service: time.Millisecond, SendLag: time.Microsecond, Status: 200}
	s.Record(smp)
	if n := testing.AllocsPerRun(1000, func() { s.Record(smp) }); n != 0 {
		t.Errorf("Shard.Record allocates %v times per call, want 0", n)
	}
}

// Begin moves the origin: the first interval starts at the load's t0 and
// keeps what was recorded, so a sample recorded right at t0 is never lost.
func TestRecorderBegin(t *testing.T) {
	created := time.Unix(1000, 0)
	r := NewRecorder(created)
	sh := r.Shard() // a pre-allocated VU takes its shard before t0
	t0 := created.Add(250 * time.Millisecond)
	r.Begin(t0)
	sh.Record(Sample{Key: Key{Scenario: "s", Name: "n"}, Latency: time.Millisecond, Service: time.Millisecond, Status: 200})
	snap := r.Rotate(t0.Add(time.Second))
	if snap.Start != 0 || snap.End != time.Second || snap.Counters["s"].Requests != 1 {
		t.Errorf("first interval [%v,%v) with %d requests; want [0,1s) with 1", snap.Start, snap.End, snap.Counters["s"].Requests)
	}
}

// Counters written before knee counted k6's failed requests (no "failed"
// key) read back with errors plus the 4xx responses; a written count is
// kept as it is, zero included.
func TestCountersFailedReadBack(t *testing.T) {
	tests := []struct {
		json string
		want int64
	}{
		{`{"requests":10,"errors":3,"by_status":{"2xx":4,"4xx":2,"5xx":1}}`, 5},
		{`{"requests":10,"errors":0,"by_status":{"2xx":10}}`, 0},
		{`{"requests":10,"errors":3,"failed":6,"by_status":{"4xx":2,"5xx":1}}`, 6},
		{`{"requests":10,"errors":0,"failed":0,"by_status":{"4xx":2}}`, 0},
	}
	for _, tt := range tests {
		var c Counters
		if err := json.Unmarshal([]byte(tt.json), &c); err != nil {
			t.Fatalf("%s: %v", tt.json, err)
		}
		if c.Failed != tt.want || c.Requests != 10 {
			t.Errorf("%s: failed %d requests %d, want %d and 10", tt.json, c.Failed, c.Requests, tt.want)
		}
	}
	var c Counters
	if err := json.Unmarshal([]byte(`{"requests":"ten"}`), &c); err == nil {
		t.Error("a string count was accepted")
	}
}

// A recycled snapshot's histograms are filled by the next Rotate, emptied
// first: the next interval holds exactly its own values (hand-computed
// bucket bounds), none of the interval before.
func TestRecycleReusesHistograms(t *testing.T) {
	t0 := time.Unix(1000, 0)
	r := NewRecorder(t0)
	get := Key{Scenario: "open", Name: "get"}
	s := r.Shard()
	// 20 of each: past fewValues, so each interval's series has histograms.
	for range 20 {
		for _, ms := range []int{7, 9, 11, 2000} {
			s.Record(Sample{Key: get, Latency: time.Duration(ms) * time.Millisecond, Service: time.Millisecond, Status: 200})
		}
	}
	first := r.Rotate(t0.Add(time.Second))
	old := first.Histograms[Key{Latency, "open", "get"}]
	r.Recycle(first)

	for range 30 {
		for _, us := range []int{100, 200, 300} {
			s.Record(Sample{Key: get, Latency: time.Duration(us) * time.Microsecond, Service: time.Duration(us) * time.Microsecond, Status: 200})
		}
	}
	second := r.Rotate(t0.Add(2 * time.Second))
	lat := second.Histograms[Key{Latency, "open", "get"}]
	reused := false
	for _, h := range second.Histograms {
		reused = reused || h == old
	}
	if !reused {
		t.Error("no histogram of the recycled snapshot was reused")
	}
	if lat.Count() != 90 || lat.Max() != 300*time.Microsecond || lat.Min() != 100*time.Microsecond {
		t.Errorf("second interval's latency: count %d, min %v, max %v; want 90, 100µs, 300µs (nothing of the first)",
			lat.Count(), lat.Min(), lat.Max())
	}
	if got := lat.Percentile(50); got != 200*time.Microsecond {
		t.Errorf("p50 = %v, want 200µs", got)
	}
	if svc := second.Histograms[Key{Service, "open", "get"}]; svc.Count() != 90 || svc.Percentile(100) != 300*time.Microsecond {
		t.Errorf("service: count %d, max %v; want 90 and 300µs", svc.Count(), svc.Percentile(100))
	}
	if len(second.Histograms) != 2 {
		t.Errorf("%d histograms, want 2 (latency and service)", len(second.Histograms))
	}
}

// HTTP statuses are 100..599: a reply with 099, 600 or 999 is a protocol
// error (failed, an error of the target's, class protocol, no status
// bucket), never a success or an error without a class; 100 and 599 are
// statuses.
func TestRecorderStatusOutsideHTTP(t *testing.T) {
	for _, tc := range []struct {
		status int
		want   Counters
	}{
		{99, Counters{Requests: 1, Errors: 1, Failed: 1, ErrorsByClass: map[string]int64{"protocol": 1}}},
		{600, Counters{Requests: 1, Errors: 1, Failed: 1, ErrorsByClass: map[string]int64{"protocol": 1}}},
		{999, Counters{Requests: 1, Errors: 1, Failed: 1, ErrorsByClass: map[string]int64{"protocol": 1}}},
		{100, Counters{Requests: 1, ByStatus: map[string]int64{"1xx": 1}}},
		{599, Counters{Requests: 1, Errors: 1, Failed: 1, ByStatus: map[string]int64{"5xx": 1}}},
	} {
		t0 := time.Unix(1000, 0)
		r := NewRecorder(t0)
		r.Shard().Record(Sample{Key: Key{Scenario: "s", Name: "get"}, Latency: time.Millisecond, Service: time.Millisecond, Status: tc.status})
		if got := r.Rotate(t0.Add(time.Second)).Counters["s"]; !reflect.DeepEqual(got, tc.want) {
			t.Errorf("status %d: %+v, want %+v", tc.status, got, tc.want)
		}
	}
}

// Counts add up to the int64 limit and stay there, in every field and
// map, instead of wrapping to -9.2e18.
func TestCountersAddSaturates(t *testing.T) {
	const big = math.MaxInt64 - 5
	c := Counters{Requests: big, BytesIn: big, ByStatus: map[string]int64{"2xx": big}, ErrorsByClass: map[string]int64{"timeout": big}}
	c.Add(Counters{Requests: 10, BytesIn: 6, ByStatus: map[string]int64{"2xx": 100}, ErrorsByClass: map[string]int64{"timeout": 7}, Errors: 3})
	want := Counters{Requests: math.MaxInt64, BytesIn: math.MaxInt64, Errors: 3,
		ByStatus: map[string]int64{"2xx": math.MaxInt64}, ErrorsByClass: map[string]int64{"timeout": math.MaxInt64}}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("sum %+v, want %+v", c, want)
	}
	c = Counters{Requests: big}
	c.Add(Counters{Requests: 5}) // exactly the limit
	if c.Requests != math.MaxInt64 {
		t.Errorf("MaxInt64-5 + 5 = %d, want %d", c.Requests, int64(math.MaxInt64))
	}
}
