package probe

import (
	"context"
	"fmt"
	"github.com/knee-dev/knee/use"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// bookstoreMetrics is a /metrics page in the Bookstore's names. Scrape 2
// advances every counter and histogram from scrape 1.
func bookstoreMetrics(scrape int) string {
	type v struct{ a, b float64 }
	pick := func(x v) float64 {
		if scrape == 1 {
			return x.a
		}
		return x.b
	}
	var sb strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&sb, format+"\n", args...) }
	w("# TYPE go_goroutines gauge")
	w("go_goroutines %g", pick(v{40, 250}))
	w("# TYPE go_sched_latencies_seconds histogram")
	for _, b := range []struct {
		le   string
		a, b float64
	}{{"1e-06", 100, 150}, {"1e-05", 200, 350}, {"0.0001", 300, 480}, {"0.001", 300, 500}, {"+Inf", 300, 500}} {
		w(`go_sched_latencies_seconds_bucket{le="%s"} %g`, b.le, pick(v{b.a, b.b}))
	}
	w("go_sched_latencies_seconds_sum 0.01")
	w("go_sched_latencies_seconds_count %g", pick(v{300, 500}))
	w("# TYPE go_sql_in_use_connections gauge")
	w(`go_sql_in_use_connections{db_name="sqlite"} %g`, pick(v{8, 10}))
	w("# TYPE go_sql_max_open_connections gauge")
	w(`go_sql_max_open_connections{db_name="sqlite"} 10`)
	w("# TYPE go_sql_wait_count_total counter")
	w(`go_sql_wait_count_total{db_name="sqlite"} %g`, pick(v{10, 40}))
	w("# TYPE go_sql_wait_duration_seconds_total counter")
	w(`go_sql_wait_duration_seconds_total{db_name="sqlite"} %g`, pick(v{1, 2}))
	w("# TYPE bookstore_db_pool_timeouts_total counter")
	w("bookstore_db_pool_timeouts_total %g", pick(v{0, 4}))
	w("# TYPE bookstore_http_in_flight_requests gauge")
	w("bookstore_http_in_flight_requests %g", pick(v{3, 12}))
	w("# TYPE bookstore_http_request_duration_seconds histogram")
	for _, s := range []struct {
		status string
		a, b   float64
	}{{"200", 100, 300}, {"503", 2, 6}} {
		w(`bookstore_http_request_duration_seconds_bucket{route="GET /api/books/{isbn}",status="%s",le="0.01"} %g`, s.status, pick(v{s.a, s.b}))
		w(`bookstore_http_request_duration_seconds_bucket{route="GET /api/books/{isbn}",status="%s",le="+Inf"} %g`, s.status, pick(v{s.a, s.b}))
		w(`bookstore_http_request_duration_seconds_sum{route="GET /api/books/{isbn}",status="%s"} 0.5`, s.status)
		w(`bookstore_http_request_duration_seconds_count{route="GET /api/books/{isbn}",status="%s"} %g`, s.status, pick(v{s.a, s.b}))
	}
	w("# TYPE process_cpu_seconds_total counter")
	w("process_cpu_seconds_total %g", pick(v{10, 10.5}))
	return sb.String()
}

func TestPromProbeBookstore(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, bookstoreMetrics(int(n.Add(1))))
	}))
	defer srv.Close()
	p := &Prom{URL: srv.URL}
	t0 := time.Unix(1000, 0)
	first, err := p.Sample(context.Background(), t0)
	if err != nil {
		t.Fatal(err)
	}
	checkReadings(t, first, map[string]want{
		use.MetricGoroutines:     {value: 40},
		use.MetricPoolUtil:       {value: 0.8}, // 8 of 10
		use.MetricPoolInUse:      {value: 8},
		use.MetricInFlight:       {value: 3},
		use.MetricPoolWaits:      {why: whyFirstSample},
		use.MetricSchedP99:       {why: whyFirstSample},
		use.MetricCacheHits:      {why: "bookstore_cache_hits_total not exported"},
		use.MetricDBQueueWaiting: {why: "not exported"},
	})
	second, err := p.Sample(context.Background(), t0.Add(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	checkReadings(t, second, map[string]want{
		use.MetricGoroutines:   {value: 250},
		use.MetricPoolUtil:     {value: 1},
		use.MetricPoolWaits:    {value: 15},  // (40-10)/2 s
		use.MetricPoolWaitTime: {value: 0.5}, // (2-1)/2 s
		use.MetricPoolTimeouts: {value: 2},   // 4/2 s
		use.MetricRequestRate:  {value: 102}, // (306-102)/2 s, both statuses
		use.MetricErrors5xx:    {value: 2},   // (6-2)/2 s, status 503 only
		use.MetricProcessCores: {value: 0.25},
		// Bucket deltas 50, 150, 180, 200 (+Inf 200): rank 0.99*200 = 198
		// falls in (1e-4, 1e-3] holding 20, 18 of them below it:
		// 1e-4 + 9e-4*18/20 = 9.1e-4.
		use.MetricSchedP99: {value: 9.1e-4},
		// All 204 new requests are in the first bucket (0, 0.01]:
		// 0.01 * 201.96/204 = 0.0099.
		use.MetricHandlerP99: {value: 0.0099},
	})
}

func TestPromProbeUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens there now
	tests := []struct {
		name, url, why string
	}{
		{"closed port", url, "metrics endpoint unreachable: "},
		{"bad URL", "::nope", "metrics endpoint unreachable: "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := &Prom{URL: tc.url}
			got, err := p.Sample(context.Background(), time.Unix(1, 0))
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(use.DefaultMappings()) {
				t.Fatalf("%d readings, want one per mapping (%d)", len(got), len(use.DefaultMappings()))
			}
			for _, r := range got {
				if r.Measured() || !strings.HasPrefix(r.NotMeasured, tc.why) {
					t.Errorf("%s: %v %q", r.Metric, r.Value, r.NotMeasured)
				}
			}
		})
	}
	notFound := httptest.NewServer(http.NotFoundHandler())
	defer notFound.Close()
	got, _ := (&Prom{URL: notFound.URL}).Sample(context.Background(), time.Unix(1, 0))
	if !strings.Contains(got[0].NotMeasured, "404") {
		t.Errorf("404: %q", got[0].NotMeasured)
	}
}

func TestQuantileDeltaEdges(t *testing.T) {
	hist := func(counts ...float64) string {
		les := []string{"1", "2", "+Inf"}
		var sb strings.Builder
		sb.WriteString("# TYPE h histogram\n")
		for i, le := range les {
			fmt.Fprintf(&sb, "h_bucket{le=%q} %g\n", le, counts[i])
		}
		fmt.Fprintf(&sb, "h_count %g\nh_sum 0\n", counts[2])
		return sb.String()
	}
	tests := []struct {
		name        string
		before, now string
		want        float64
		why         string
	}{
		// 10 new, all in (1,2]: rank 9.9 → 1 + 1*9.9/10.
		{"inside a bucket", hist(0, 0, 0), hist(0, 10, 10), 1.99, ""},
		// 10 new in (0,1]: rank 9.9 → 0.99.
		{"first bucket from zero", hist(0, 0, 0), hist(10, 10, 10), 0.99, ""},
		// 100 new, 2 beyond the last finite bound: rank 99 is in +Inf → 2.
		{"in +Inf", hist(0, 0, 0), hist(0, 98, 100), 2, ""},
		{"nothing new", hist(5, 5, 5), hist(5, 5, 5), 0, "no observations"},
		{"restarted", hist(5, 5, 5), hist(1, 1, 1), 0, "went backwards"},
	}
	m := use.Mapping{Resource: use.Scheduler, Metric: "h_p99", Kind: use.Info, Source: "h", Op: use.OpQuantile}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before, err1 := ParseMetrics(strings.NewReader(tc.before))
			now, err2 := ParseMetrics(strings.NewReader(tc.now))
			if err1 != nil || err2 != nil {
				t.Fatal(err1, err2)
			}
			r := evaluate(m, nil, now, before, 1)
			checkReadings(t, []use.Reading{r}, map[string]want{"h_p99": {value: tc.want, why: tc.why}})
		})
	}
}

func TestLoadMappings(t *testing.T) {
	good := `
mappings:
  - resource: conn_pool
    metric: hikari_pending
    kind: saturation
    source: hikaricp_connections_pending
    op: gauge
    saturated_above: 0
  - {resource: http_server, metric: slow, kind: info, source: h, op: quantile, q: 0.5, labels: {route: "GET .*"}}
`
	ms, err := use.LoadMappings(strings.NewReader(good))
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 2 || ms[0].Source != "hikaricp_connections_pending" || ms[1].Quantile() != 0.5 || ms[1].Labels["route"] != "GET .*" {
		t.Errorf("mappings = %+v", ms)
	}
	th := use.DefaultThresholds().WithMappings(ms)
	if lvl, ok := th["hikari_pending"]; !ok || lvl != 0 {
		t.Errorf("threshold of hikari_pending = %v, %v; want 0, true", lvl, ok)
	}
	bad := `{"mappings": [{"resource": "x", "metric": "m", "kind": "hot", "source": "s", "op": "ratio"},
	{"resource": "x", "metric": "n", "kind": "info", "source": "s", "op": "gauge", "labels": {"a": "("}}]}`
	_, err = use.LoadMappings(strings.NewReader(bad))
	for _, part := range []string{`mapping 1 (m): kind "hot"`, "mapping 1 (m): op ratio needs per", "mapping 2 (n): label a"} {
		if err == nil || !strings.Contains(err.Error(), part) {
			t.Errorf("error %v, want it to contain %q", err, part)
		}
	}
	if _, err := use.LoadMappings(strings.NewReader("mappings: [{resource: x, colour: red}]")); err == nil {
		t.Error("unknown field accepted")
	}
}

// FuzzPromEvaluate feeds two arbitrary scrapes through every default
// mapping: no panic, and every value finite or not measured.
func FuzzPromEvaluate(f *testing.F) {
	f.Add(bookstoreMetrics(1), bookstoreMetrics(2))
	f.Add("# TYPE h histogram\nh_bucket{le=\"1\"} 3\nh_bucket{le=\"+Inf\"} 2\nh_count 2\n", "x 1\n")
	f.Fuzz(func(t *testing.T, a, b string) {
		before, err := ParseMetrics(strings.NewReader(a))
		if err != nil {
			return
		}
		now, err := ParseMetrics(strings.NewReader(b))
		if err != nil {
			return
		}
		ms := use.DefaultMappings()
		matchers, err := compileMatchers(ms)
		if err != nil {
			t.Fatal(err)
		}
		for i, m := range ms {
			r := evaluate(m, matchers[i], now, before, 1).Finite()
			if r.Measured() && (math.IsNaN(r.Value) || math.IsInf(r.Value, 0)) {
				t.Fatalf("%s: %v measured", m.Metric, r.Value)
			}
		}
	})
}
