package promrw

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/knee-dev/knee/record"
)

// Every push is accounted for: taken by the server, failed (with the
// reason kept), or dropped from a full queue. The server refuses the first
// of three pushes.
func TestPusherStatsCountFailures(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			http.Error(w, "out of order sample", http.StatusBadRequest)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	p, err := New(srv.URL, "t1", "r1")
	if err != nil {
		t.Fatal(err)
	}
	h := record.NewHistogram()
	h.Record(time.Millisecond)
	snap := record.IntervalSnapshot{Histograms: map[record.Key]*record.Histogram{{Metric: record.Latency, Scenario: "s", Name: "GET /"}: h},
		Counters: map[string]record.Counters{"s": {Requests: 1}}}
	for i := range 3 {
		p.Interval(time.Unix(1000+int64(i), 0), snap)
	}
	st := p.Close(context.Background(), time.Minute)
	if st.Requests != 2 || st.Failed != 1 || st.Dropped != 0 || st.Bytes <= 0 {
		t.Errorf("stats %+v; want 2 taken, 1 failed, 0 dropped", st)
	}
	if st.LastError == nil || !strings.Contains(st.LastError.Error(), "out of order sample") {
		t.Errorf("last error %v; want the server's reason", st.LastError)
	}
}

// A receiver that never answers holds knee no longer than Close's
// deadline, or than its context (the second Ctrl-C): the push in flight
// and the queued ones are given up and counted as not pushed (5
// intervals: 1 in flight, 4 queued).
func TestPusherCloseDeadline(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	h := record.NewHistogram()
	h.Record(time.Millisecond)
	snap := record.IntervalSnapshot{Histograms: map[record.Key]*record.Histogram{{Metric: record.Latency, Scenario: "s", Name: "GET /"}: h},
		Counters: map[string]record.Counters{"s": {Requests: 1}}}
	aborted, abort := context.WithCancel(context.Background())
	abort()
	for _, tc := range []struct {
		name    string
		ctx     context.Context
		timeout time.Duration
	}{
		{"deadline", context.Background(), 200 * time.Millisecond},
		{"context ended", aborted, time.Hour},
	} {
		p, err := New(srv.URL, "t1", "r1")
		if err != nil {
			t.Fatal(err)
		}
		for i := range 5 {
			p.Interval(time.Unix(1000+int64(i), 0), snap)
		}
		done := make(chan Stats, 1)
		go func() { done <- p.Close(tc.ctx, tc.timeout) }()
		select {
		case st := <-done:
			if st.Unsent != 5 || st.Requests != 0 || st.Failed != 0 {
				t.Errorf("%s: stats %+v; want 5 not pushed, none taken or failed", tc.name, st)
			}
		case <-time.After(time.Minute): // without a deadline: 10 s (the client's timeout) a push, 50 s for five
			t.Fatalf("%s: Close still waiting a minute later", tc.name)
		}
	}
}
