package use

import "time"

// Metric names the CPU, machine and generator probes write.
const (
	MetricCPUCores         = "cpu_cores"           // CPU used by the target, in cores
	MetricCPULimit         = "cpu_limit_cores"     // the target cgroup's CFS quota, in cores
	MetricCPUUtilization   = "cpu_utilization"     // used / limit (or / machine CPUs without a limit)
	MetricThrottledPeriods = "throttled_periods"   // fraction of CFS periods throttled
	MetricThrottledTime    = "throttled_time"      // seconds throttled per second
	MetricRunnableThreads  = "runnable_threads"    // the target's threads in state R
	MetricRunQueueWait     = "run_queue_wait"      // seconds per second the target's threads waited for a CPU (schedstat)
	MetricMachineCPUs      = "cpus"                // CPUs of the machine
	MetricMachineBusy      = "busy_cores"          // CPU busy on the machine, in cores
	MetricMachineUtil      = "machine_utilization" // busy / CPUs, context: the target and knee included
	MetricOtherCores       = "other_cores"         // busy minus the target and knee (and their descendants)
	MetricLoad1            = "load1"               // 1-minute load average
	MetricLoadPerCPU       = "load_per_cpu"        // load1 / CPUs
	MetricRunQueuePerCPU   = "runq_per_cpu"        // runnable tasks / CPUs, now, the target and knee included
	MetricGeneratorCores   = "generator_cores"     // knee's own CPU, in cores
	MetricGeneratorUtil    = "generator_utilization"
	MetricSendLagP99       = "send_lag_p99" // seconds; the caller's last interval
)

// Metrics of the rest of the machine: what neither the target nor knee uses.
const (
	MetricOtherUtil           = "other_utilization"  // other_cores / CPUs
	MetricOtherRunQueuePerCPU = "other_runq_per_cpu" // runnable threads of other processes / CPUs
	// MetricOtherProcessPrefix prefixes the metric of one other command's
	// CPU, in cores: "other_cpu:stress".
	MetricOtherProcessPrefix = "other_cpu:"
)

// Metric names the PostgreSQL probe writes. Wait events are sampled, like
// SQL Server's wait statistics but as counts of backends per sample:
// "pg_wait:Lock:transactionid" is how many active backends waited on that
// event when the sample was taken.
const (
	MetricPGConnections     = "pg_connections"
	MetricPGMaxConnections  = "pg_max_connections"
	MetricPGConnUtilization = "pg_connection_utilization"
	MetricPGActive          = "pg_active"
	MetricPGWaiting         = "pg_waiting"
	MetricPGWaitingFraction = "pg_waiting_fraction"
	MetricPGWaitPrefix      = "pg_wait:"      // + wait_event_type + ":" + wait_event
	MetricPGWaitTypePrefix  = "pg_wait_type:" // + wait_event_type, or "CPU" for running
)

// Metric names the default mappings write.
const (
	MetricProcessCores   = "process_cpu_cores"
	MetricSchedP99       = "sched_latency_p99"
	MetricGoroutines     = "goroutines"
	MetricGCPauseP99     = "gc_pause_p99"
	MetricInFlight       = "in_flight"
	MetricRequestRate    = "requests"
	MetricErrors5xx      = "errors_5xx"
	MetricHandlerP99     = "handler_p99"
	MetricCacheHits      = "cache_hits"
	MetricCacheMisses    = "cache_misses"
	MetricPoolInUse      = "pool_in_use"
	MetricPoolMaxOpen    = "pool_max_open"
	MetricPoolUtil       = "pool_utilization"
	MetricPoolWaits      = "pool_waits"
	MetricPoolWaitTime   = "pool_wait_time"
	MetricPoolTimeouts   = "pool_timeouts"
	MetricDBBusyErrors   = "db_busy_errors"
	MetricDBQueueWaiting = "db_queue_waiting"
)

// DefaultInterval is how often a probe sampler samples when its Interval is zero.
const DefaultInterval = time.Second

// MinNamedCores is the CPU, in cores over a sample, at which the machine
// probe names another command (MetricOtherProcessPrefix); a verdict mentions
// one whose mean is at least half of it.
const MinNamedCores = 0.05
