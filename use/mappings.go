package use

import (
	"errors"
	"fmt"
	"io"
	"regexp"

	"go.yaml.in/yaml/v3"
)

// Op says how a Mapping turns a Prometheus family into a value.
type Op string

// The ops a Mapping can apply. Series that pass the mapping's labels are
// summed first.
const (
	OpGauge    Op = "gauge"    // the value now
	OpRate     Op = "rate"     // a counter's increase per second between scrapes
	OpRatio    Op = "ratio"    // the value now divided by Per's value now
	OpQuantile Op = "quantile" // quantile Q of a histogram's observations between scrapes
)

// Mapping turns one Prometheus metric family of the target into a reading
// of one resource. It is plain data: DefaultMappings holds the Bookstore's
// and the common Go and database/sql ones, LoadMappings reads more from
// YAML or JSON.
type Mapping struct {
	Resource Resource          `yaml:"resource" json:"resource"`
	Metric   string            `yaml:"metric" json:"metric"` // the reading's name
	Kind     Kind              `yaml:"kind" json:"kind"`
	Source   string            `yaml:"source" json:"source"` // the Prometheus family
	Op       Op                `yaml:"op" json:"op"`
	Per      string            `yaml:"per,omitempty" json:"per,omitempty"` // OpRatio's denominator family
	Q        float64           `yaml:"q,omitempty" json:"q,omitempty"`     // OpQuantile's quantile in (0,1); 0 means 0.99
	Labels   map[string]string `yaml:"labels,omitempty" json:"labels,omitempty"`
	Unit     string            `yaml:"unit,omitempty" json:"unit,omitempty"`
	// SaturatedAbove, when set, is the level above which the verdict calls
	// the resource saturated (see Thresholds).
	SaturatedAbove *float64 `yaml:"saturated_above,omitempty" json:"saturated_above,omitempty"`
}

// Quantile is Q, or 0.99 when Q is not set.
func (m Mapping) Quantile() float64 {
	if m.Q == 0 {
		return 0.99
	}
	return m.Q
}

// Validate reports every problem of the mapping and changes nothing.
func (m Mapping) Validate() []error {
	var errs []error
	if m.Resource == "" {
		errs = append(errs, errors.New("resource is empty"))
	}
	if m.Metric == "" {
		errs = append(errs, errors.New("metric is empty"))
	}
	switch m.Kind {
	case Utilization, Saturation, Errors, Info:
	default:
		errs = append(errs, fmt.Errorf("kind %q: want utilization, saturation, errors or info", m.Kind))
	}
	if m.Source == "" {
		errs = append(errs, errors.New("source (the Prometheus metric) is empty"))
	}
	switch m.Op {
	case OpGauge, OpRate:
	case OpRatio:
		if m.Per == "" {
			errs = append(errs, errors.New("op ratio needs per"))
		}
	case OpQuantile:
		if m.Q < 0 || m.Q >= 1 {
			errs = append(errs, fmt.Errorf("q %g: want a quantile in (0,1), e.g. 0.99", m.Q))
		}
	default:
		errs = append(errs, fmt.Errorf("op %q: want gauge, rate, ratio or quantile", m.Op))
	}
	for name, re := range m.Labels {
		if _, err := regexp.Compile(re); err != nil {
			errs = append(errs, fmt.Errorf("label %s: %w", name, err))
		}
	}
	return errs
}

// mappingFile is the YAML/JSON file LoadMappings reads.
type mappingFile struct {
	Mappings []Mapping `yaml:"mappings" json:"mappings"`
}

// LoadMappings reads mappings from YAML (or JSON, which YAML includes):
//
//	mappings:
//	  - {resource: conn_pool, metric: hikari_pending, kind: saturation,
//	     source: hikaricp_connections_pending, op: gauge, saturated_above: 0}
//
// Every invalid mapping is reported, by its position in the list.
func LoadMappings(r io.Reader) ([]Mapping, error) {
	dec := yaml.NewDecoder(r)
	dec.KnownFields(true)
	var f mappingFile
	if err := dec.Decode(&f); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("mappings: %w", err)
	}
	var errs []error
	for i, m := range f.Mappings {
		for _, err := range m.Validate() {
			errs = append(errs, fmt.Errorf("mapping %d (%s): %w", i+1, m.Metric, err))
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("mappings: %w", errors.Join(errs...))
	}
	return f.Mappings, nil
}

// DefaultMappings reads the Bookstore's /metrics and the names any Go
// service exports: the runtime (go_goroutines, go_sched_latencies_seconds),
// the process collector (process_cpu_seconds_total) and database/sql's pool
// statistics (go_sql_*, from collectors.NewDBStatsCollector).
func DefaultMappings() []Mapping {
	m := func(res Resource, metric string, kind Kind, source string, op Op, unit string) Mapping {
		return Mapping{Resource: res, Metric: metric, Kind: kind, Source: source, Op: op, Unit: unit}
	}
	fiveXX := m(HTTPServer, MetricErrors5xx, Errors, "bookstore_http_request_duration_seconds", OpRate, UnitPerSec)
	fiveXX.Labels = map[string]string{"status": "5.."}
	poolUtil := m(ConnPool, MetricPoolUtil, Utilization, "go_sql_in_use_connections", OpRatio, UnitFraction)
	poolUtil.Per = "go_sql_max_open_connections"
	return []Mapping{
		m(TargetCPU, MetricProcessCores, Info, "process_cpu_seconds_total", OpRate, UnitCores),
		m(Scheduler, MetricSchedP99, Saturation, "go_sched_latencies_seconds", OpQuantile, UnitSeconds),
		m(Scheduler, MetricGCPauseP99, Info, "go_sched_pauses_total_gc_seconds", OpQuantile, UnitSeconds),
		m(Scheduler, MetricGoroutines, Info, "go_goroutines", OpGauge, UnitCount),
		m(HTTPServer, MetricInFlight, Saturation, "bookstore_http_in_flight_requests", OpGauge, UnitCount),
		m(HTTPServer, MetricRequestRate, Info, "bookstore_http_request_duration_seconds", OpRate, UnitPerSec),
		fiveXX,
		m(HTTPServer, MetricHandlerP99, Info, "bookstore_http_request_duration_seconds", OpQuantile, UnitSeconds),
		m(HTTPServer, MetricCacheHits, Info, "bookstore_cache_hits_total", OpRate, UnitPerSec),
		m(HTTPServer, MetricCacheMisses, Info, "bookstore_cache_misses_total", OpRate, UnitPerSec),
		poolUtil,
		m(ConnPool, MetricPoolInUse, Info, "go_sql_in_use_connections", OpGauge, UnitCount),
		m(ConnPool, MetricPoolMaxOpen, Info, "go_sql_max_open_connections", OpGauge, UnitCount),
		m(ConnPool, MetricPoolWaitTime, Saturation, "go_sql_wait_duration_seconds_total", OpRate, UnitSecondsPerSec),
		m(ConnPool, MetricPoolWaits, Saturation, "go_sql_wait_count_total", OpRate, UnitPerSec),
		m(ConnPool, MetricPoolTimeouts, Errors, "bookstore_db_pool_timeouts_total", OpRate, UnitPerSec),
		m(Database, MetricDBQueueWaiting, Saturation, "bookstore_db_queue_waiting", OpGauge, UnitCount),
		m(Database, MetricDBBusyErrors, Errors, "bookstore_db_busy_errors_total", OpRate, UnitPerSec),
	}
}
