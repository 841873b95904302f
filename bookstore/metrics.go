package bookstore

import (
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metric names under /metrics that are the bookstore's own; the package doc
// lists them with the runtime, process and pool ones.
const (
	MetricInFlight        = "bookstore_http_in_flight_requests"
	MetricRequestDuration = "bookstore_http_request_duration_seconds"
	MetricPoolTimeouts    = "bookstore_db_pool_timeouts_total"
	MetricDBBusyErrors    = "bookstore_db_busy_errors_total"
	MetricDBQueueWaiting  = "bookstore_db_queue_waiting"
	MetricCacheHits       = "bookstore_cache_hits_total"
	MetricCacheMisses     = "bookstore_cache_misses_total"
	MetricCacheEntries    = "bookstore_cache_entries"
)

// durationBuckets reach past the 15 s pool timeout: the article's collapse
// shows up as requests of exactly that length.
func durationBuckets() []float64 {
	return []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 15, 20, 30, 60}
}

// metrics is the server's own Prometheus registry; nothing is registered
// globally, so two servers in one process do not collide.
type metrics struct {
	reg      *prometheus.Registry
	inFlight prometheus.Gauge
	duration *prometheus.HistogramVec
}

func newMetrics(st *store, cache *outputCache) (*metrics, error) {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: MetricInFlight,
			Help: "HTTP requests being served now.",
		}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    MetricRequestDuration,
			Help:    "Time from the handler's start to its end, by route pattern and status; queueing before the handler is not in it.",
			Buckets: durationBuckets(),
		}, []string{"route", "status"}),
	}
	counter := func(name, help string, f func() uint64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help},
			func() float64 { return float64(f()) })
	}
	gauge := func(name, help string, f func() float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, f)
	}
	cs := []prometheus.Collector{
		collectors.NewGoCollector(collectors.WithGoCollectorRuntimeMetrics(
			collectors.GoRuntimeMetricsRule{Matcher: regexp.MustCompile(`^/sched/(latencies|pauses/total/gc):seconds$`)},
			collectors.GoRuntimeMetricsRule{Matcher: regexp.MustCompile(`^/gc/pauses:seconds$`)},
		)),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		collectors.NewDBStatsCollector(st.db, st.d.name),
		m.inFlight,
		m.duration,
		counter(MetricPoolTimeouts, "Requests answered 503 because no pooled connection came free within the pool timeout.", st.poolTimeouts.Load),
		counter(MetricDBBusyErrors, "SQLite SQLITE_BUSY/SQLITE_LOCKED errors (always 0 on PostgreSQL).", st.busyErrors.Load),
		gauge(MetricDBQueueWaiting, "Requests holding a connection while queued for the serialised database (SerializeQueries).",
			func() float64 { return float64(st.gateWaiting.Load()) }),
		counter(MetricCacheHits, "GET requests served from the output cache.", cache.hits.Load),
		counter(MetricCacheMisses, "GET requests the output cache did not hold.", cache.misses.Load),
		gauge(MetricCacheEntries, "Responses in the output cache, expired ones included until the next sweep.",
			func() float64 { return float64(cache.len()) }),
	}
	for _, c := range cs {
		if err := m.reg.Register(c); err != nil {
			return nil, fmt.Errorf("bookstore: register metrics: %w", err)
		}
	}
	return m, nil
}

// handler serves the registry in the Prometheus text format.
func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// instrument times next under the route label and counts it in flight.
func (m *metrics) instrument(route string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m.inFlight.Inc()
		defer m.inFlight.Dec()
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r)
		m.duration.WithLabelValues(route, strconv.Itoa(sw.status())).Observe(time.Since(start).Seconds())
	})
}

// statusWriter remembers the status code a handler wrote.
type statusWriter struct {
	http.ResponseWriter
	code int
}

func (s *statusWriter) WriteHeader(code int) {
	if s.code == 0 {
		s.code = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(p []byte) (int, error) {
	if s.code == 0 {
		s.code = http.StatusOK
	}
	return s.ResponseWriter.Write(p)
}

func (s *statusWriter) status() int {
	if s.code == 0 {
		return http.StatusOK
	}
	return s.code
}
