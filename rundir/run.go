// Package rundir is the run directory, the contract between everything that
// measures and everything that analyses:
//
//	run.json        Meta: what was asked, environment note, counters, summary
//	latency.hlog    HdrHistogram interval log (record.Key tags), flushed every interval
//	counters.jsonl  one IntervalCounters line per interval per scenario, flushed with it
//	resources.jsonl USE samples (package use), when measured
//
// A live run, an import and a merge all produce one, so every analysis works on all.
package rundir

import (
	"encoding/json"
	"time"

	"github.com/knee-dev/knee/record"
)

// FormatVersion is the run directory format this knee writes and reads.
const FormatVersion = 1

// File names inside a run directory.
const (
	MetaFile      = "run.json"
	LatencyFile   = "latency.hlog"
	CountersFile  = "counters.jsonl"
	ResourcesFile = "resources.jsonl"
)

// Meta is run.json.
type Meta struct {
	FormatVersion int             `json:"format_version"`
	KneeVersion   string          `json:"knee_version"`
	ID            string          `json:"id"`
	Source        string          `json:"source"` // "knee", "k6-csv", "k6-json", "hlog", "list", "merge"
	SourceFile    string          `json:"source_file,omitempty"`
	Started       time.Time       `json:"started"`
	Ended         time.Time       `json:"ended"`
	Model         string          `json:"model"` // "open", "closed", "mixed" or "unknown"
	Scenarios     []Scenario      `json:"scenarios"`
	Env           Environment     `json:"environment"`
	Counters      record.Counters `json:"counters"`
	Summary       Summary         `json:"summary"`
	Interrupted   bool            `json:"interrupted"`
	// StoppedAt is when an interrupted run was told to stop, from t0 (0:
	// not interrupted, or not known): no iteration started after it, so its
	// rate is over the time up to it, not over the planned duration.
	StoppedAt    time.Duration `json:"stopped_at_ns,omitempty"`
	Finished     bool          `json:"finished"`
	Faults       []Fault       `json:"faults,omitempty"`
	Notes        []string      `json:"notes,omitempty"`
	FirstError   string        `json:"first_error,omitempty"`   // the first failed request's error, or its status
	NoTimestamps bool          `json:"no_timestamps,omitempty"` // imported latencies without times: no rate, no duration
	Part         *Part         `json:"part,omitempty"`          // a runner's part of a split test
	Parts        []MergedPart  `json:"parts,omitempty"`         // Source "merge": the parts merged
	// StepPlan is the plan a stepped run (knee steps, knee lab curve) was
	// made and measured by, warmup included, so that knee curve measures
	// the run again as it was measured; nil for any other run.
	StepPlan *StepPlan `json:"step_plan,omitempty"`
}

// StepPlan is a stepped run's plan: step i offers Start + i·Step req/s,
// reached in Jump, then held for StepDuration; Warmup is dropped from the
// start of every step before it is measured. JSON names are analyze's.
type StepPlan struct {
	Scenario     string        `json:"scenario,omitempty"` // "": the run's every scenario
	Start        float64       `json:"start"`
	Step         float64       `json:"step"`
	Steps        int           `json:"steps"`
	StepDuration time.Duration `json:"step_duration_ns"`
	Jump         time.Duration `json:"jump_ns"`
	Warmup       time.Duration `json:"warmup_ns"`
}

// Scenario is what was asked of one scenario.
type Scenario struct {
	Name       string            `json:"name"`
	Executor   string            `json:"executor"`
	Model      string            `json:"model"` // "open" or "closed"
	StartTime  time.Duration     `json:"start_time_ns"`
	Span       time.Duration     `json:"span_ns,omitempty"`  // how long it starts iterations (graceful stop excluded)
	Config     json.RawMessage   `json:"config,omitempty"`   // the executor's settings as given
	Requests   []string          `json:"requests,omitempty"` // request name tags
	Think      time.Duration     `json:"think_ns,omitempty"`
	VUs        int               `json:"vus,omitempty"`
	TargetRate float64           `json:"target_rate,omitempty"` // req/s, constant arrival rate
	Tags       map[string]string `json:"tags,omitempty"`
	// WakeFloor is the machine's floor measured beside this scenario, at
	// its own gap between starts (hostinfo.FloorBeside), for an open
	// scenario whose starts were far apart; nil when it was not measured.
	WakeFloor *WakeFloor `json:"wake_floor,omitempty"`
}

// Fault is one fault that was applied during the run.
type Fault struct {
	Kind   string        `json:"kind"` // "freeze", "cpu"
	At     time.Duration `json:"at_ns"`
	For    time.Duration `json:"for_ns,omitempty"`
	Target string        `json:"target"` // "pid:123" or a cgroup path
	Method string        `json:"method"` // "cgroup-v1-freezer", "cgroup-v2-freeze", "sigstop", ...
	Error  string        `json:"error,omitempty"`
}

// Environment is the environment note kept with every result.
type Environment struct {
	KneeVersion  string            `json:"knee_version"`
	TargetCommit string            `json:"target_commit,omitempty"`
	Host         string            `json:"host"`
	CPUModel     string            `json:"cpu_model"`
	CPUs         int               `json:"cpus"`
	Kernel       string            `json:"kernel"`
	GoVersion    string            `json:"go_version"`
	LoadBefore   [3]float64        `json:"load_avg_before"`
	LoadAfter    [3]float64        `json:"load_avg_after"`
	TopBefore    []Process         `json:"top_before,omitempty"`
	TopAfter     []Process         `json:"top_after,omitempty"`
	TargetLimits map[string]string `json:"target_limits,omitempty"` // e.g. "cpu.max": "50000 100000"
	Generator    Generator         `json:"generator"`
	WakeFloor    *WakeFloor        `json:"wake_floor,omitempty"` // measured before the run; nil when not
}

// WakeFloor is how late the machine woke a bare thread from a timed wait:
// the floor under send lag. Measured before the run (hostinfo.WakeFloor,
// in Environment) or beside one scenario of it, at the scenario's own gap
// between starts (hostinfo.FloorBeside, in Scenario): on some machines a
// thread wakes later from a longer wait.
type WakeFloor struct {
	Waits int `json:"waits"` // 0 beside a run too short for one whole wait: no figures
	// Period is the length of each wait; beside a scenario whose gaps
	// varied (a ramp), the shortest, and PeriodMax the longest.
	Period    time.Duration `json:"period_ns"`
	PeriodMax time.Duration `json:"period_max_ns,omitempty"`
	Beside    bool          `json:"beside_run,omitempty"` // measured beside the run, not before it
	P50MS     float64       `json:"p50_ms"`
	P99MS     float64       `json:"p99_ms"`
}

// Process is one other CPU consumer on the machine.
type Process struct {
	PID  int     `json:"pid"`
	Comm string  `json:"comm"`
	CPU  float64 `json:"cpu"` // cores used over the sample
}

// Generator is what knee itself used.
type Generator struct {
	CPUSeconds float64 `json:"cpu_seconds"`
	PeakRSSMB  float64 `json:"peak_rss_mb"`
}

// Summary is the end-of-run summary; --summary-export writes it as JSON.
type Summary struct {
	Model             string            `json:"model"`
	Executor          string            `json:"executor"`
	Requests          int64             `json:"requests"`
	Rate              float64           `json:"rate"`
	TargetRate        float64           `json:"target_rate,omitempty"`
	DroppedIterations int64             `json:"dropped_iterations"`
	DroppedLate       int64             `json:"dropped_late,omitempty"` // of DroppedIterations: the generator, behind its schedule, never started them
	Errors            int64             `json:"errors"`
	ErrorsByClass     map[string]int64  `json:"errors_by_class,omitempty"`
	LatencyMS         record.Latencies  `json:"latency_ms"`
	ServiceMS         *record.Latencies `json:"service_ms,omitempty"`
	SendLagMS         *record.Latencies `json:"send_lag_ms,omitempty"`
	WakeFloor         *WakeFloor        `json:"wake_floor,omitempty"` // the machine's floor under send lag
	SlowerThan1s      int64             `json:"slower_than_1s"`
	DurationS         float64           `json:"duration_s"`
	GeneratorCPUS     float64           `json:"generator_cpu_s,omitempty"`
	Interrupted       bool              `json:"interrupted"`
	Failed            int64             `json:"failed,omitempty"`        // k6's http_req_failed: transport errors, statuses >= 400
	NoResponse        int64             `json:"no_response,omitempty"`   // requests that got no response at all (transport errors)
	FirstError        string            `json:"first_error,omitempty"`   // the first failed request's error, or its status
	NoTimestamps      bool              `json:"no_timestamps,omitempty"` // no rate and no duration: the latencies came without times
	Scenarios         []ScenarioSummary `json:"scenarios,omitempty"`     // one per scenario, when there are several
	Scenario          string            `json:"scenario,omitempty"`      // the scenario this block summarises
	Warnings          []string          `json:"warnings,omitempty"`
}

// ScenarioSummary is one scenario's block of a run's summary (a distinct
// type, so the JSON Schema of a summary can refer to it).
type ScenarioSummary struct {
	Summary
}

// IntervalCounters is one line of counters.jsonl.
type IntervalCounters struct {
	Scenario   string          `json:"scenario"`
	Start      float64         `json:"start_s"` // since the run's start
	End        float64         `json:"end_s"`
	Counters   record.Counters `json:"counters"`
	TargetRate float64         `json:"target_rate,omitempty"` // req/s offered in this interval
	BusyVUs    int             `json:"busy_vus,omitempty"`
	VUs        int             `json:"vus,omitempty"` // allocated
}
