package promrw

import (
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
	st := p.Close()
	if st.Requests != 2 || st.Failed != 1 || st.Dropped != 0 || st.Bytes <= 0 {
		t.Errorf("stats %+v; want 2 taken, 1 failed, 0 dropped", st)
	}
	if st.LastError == nil || !strings.Contains(st.LastError.Error(), "out of order sample") {
		t.Errorf("last error %v; want the server's reason", st.LastError)
	}
}
