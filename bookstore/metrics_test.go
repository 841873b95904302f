package bookstore

import (
	"strings"
	"testing"
)

func TestMetricsExposeTheNamedSeries(t *testing.T) {
	forEachStore(t, Options{MaxPool: 7}, func(t *testing.T, s *Server) {
		if got := do(t, s, "GET", "/api/books/9780441172719", ""); got.code != 200 {
			t.Fatalf("GET book = %d", got.code)
		}
		do(t, s, "GET", "/api/books/123", "")
		got := do(t, s, "GET", "/metrics", "")
		if got.code != 200 || !strings.HasPrefix(got.header.Get("Content-Type"), "text/plain") {
			t.Fatalf("/metrics = %d %q", got.code, got.header.Get("Content-Type"))
		}
		dbName := s.store.d.name
		for _, want := range []string{
			"go_sched_latencies_seconds_bucket{",
			"go_gc_duration_seconds{",
			"go_goroutines ",
			"process_cpu_seconds_total ",
			`go_sql_max_open_connections{db_name="` + dbName + `"} 7`,
			`go_sql_open_connections{db_name="` + dbName + `"}`,
			`go_sql_in_use_connections{db_name="` + dbName + `"} 0`,
			`go_sql_idle_connections{db_name="` + dbName + `"}`,
			`go_sql_wait_count_total{db_name="` + dbName + `"} 0`,
			`go_sql_wait_duration_seconds_total{db_name="` + dbName + `"} 0`,
			MetricPoolTimeouts + " 0",
			MetricDBBusyErrors + " 0",
			MetricDBQueueWaiting + " 0",
			MetricInFlight + " 1", // this scrape itself
			MetricCacheHits + " 0",
			MetricCacheMisses + " 2",
			MetricCacheEntries + " 1",
			MetricRequestDuration + `_count{route="GET /api/books/{isbn}",status="200"} 1`,
			MetricRequestDuration + `_count{route="GET /api/books/{isbn}",status="400"} 1`,
			MetricRequestDuration + `_bucket{route="GET /api/books/{isbn}",status="200",le="15"} 1`,
		} {
			if !strings.Contains(got.body, want) {
				t.Errorf("/metrics lacks %q", want)
			}
		}
	})
}

func TestUnroutedRequestsAreTimedOnce(t *testing.T) {
	s := newTestServer(t, Options{})
	do(t, s, "GET", "/nowhere", "")
	do(t, s, "GET", "/healthz", "")
	if n := metricValue(t, s, MetricRequestDuration, "route", "unmatched", "status", "404"); n != 1 {
		t.Errorf("unmatched 404 count = %v, want 1", n)
	}
	if n := metricValue(t, s, MetricRequestDuration, "route", "GET /healthz", "status", "200"); n != 1 {
		t.Errorf("GET /healthz count = %v, want 1", n)
	}
	mfs, err := s.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != MetricRequestDuration {
			continue
		}
		if n := len(mf.GetMetric()); n != 2 {
			t.Errorf("%d duration series, want 2 (no request counted twice)", n)
		}
	}
}
