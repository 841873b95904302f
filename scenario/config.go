// Package scenario reads what a run should do — scenarios with k6's executor
// vocabulary, their request templates, variables, faults and thresholds —
// from a YAML file (Parse) or from command-line flag values (FromFlags), into
// plain structs that hold load's executor settings and request.Specs.
//
// Every problem is reported at once, each as an *Error that names the file,
// line and key (or the flag) and says how to fix it. Validate checks a Config
// built any way and changes nothing.
package scenario

import (
	"fmt"
	"strings"
	"time"

	"github.com/knee-dev/knee/load"
	"github.com/knee-dev/knee/request"
)

// Executor names, as k6 spells them.
const (
	ConstantArrivalRate = load.KindConstantArrivalRate
	RampingArrivalRate  = load.KindRampingArrivalRate
	ConstantVUs         = load.KindConstantVUs
	RampingVUs          = load.KindRampingVUs
)

// Executors lists the executor names knee knows, open model first.
var Executors = []string{ConstantArrivalRate, RampingArrivalRate, ConstantVUs, RampingVUs}

// DefaultGracefulStop is how long iterations may finish after a scenario's
// end when gracefulStop is not given (k6's default). Parse and FromFlags fill
// it in; a Config built in code keeps its zero.
const DefaultGracefulStop = 30 * time.Second

// Config is a whole run: its scenarios and what they share.
type Config struct {
	Source     string                   // file name, or "" when built from flags or code
	Scenarios  []Scenario               // in file order
	Vars       map[string][]string      // value lists for {name} placeholders
	Seed       uint64                   // picks are a function of (Seed, vu, iter); 0 is a seed like any other
	HTTP       request.TransportOptions // shared by every scenario's requests
	Faults     []Fault
	Thresholds []string // kept as written, e.g. "p(95)<200ms"; evaluated elsewhere
	// RedactQuery names the query parameters whose values are secrets
	// (redactQuery: in a file, --redact-query); see Redactor.
	RedactQuery []string
	// Secrets are literal secrets known only from outside the requests (a
	// k6 script's -e values whose names look secret, --secret-env): every
	// output scrubs them (see Redactor).
	Secrets []string

	origins map[string]origin // key path → where it was written; nil when built in code
}

// Scenario is one scenario: an executor's settings (a load.ConstantArrivalRate,
// load.RampingArrivalRate, load.ConstantVUs or load.RampingVUs value) and
// the requests each iteration chooses from.
type Scenario struct {
	Name         string
	Executor     load.Executor
	StartTime    time.Duration // offset from the run's start
	GracefulStop time.Duration // how long in-flight iterations may finish after the end
	Tags         map[string]string
	Requests     []request.Spec
}

// Model is "open" for arrival-rate executors, "closed" for VU executors and
// "unknown" without an executor.
func (s Scenario) Model() string {
	if s.Executor == nil {
		return "unknown"
	}
	return s.Executor.Model()
}

// Load is the scenario as package load runs it, with it as the iteration
// (typically a *request.Sender built from Requests).
func (s Scenario) Load(it load.Iteration) load.Scenario {
	return load.Scenario{Name: s.Name, StartTime: s.StartTime, Executor: s.Executor, Iteration: it}
}

// Fault is one fault to apply during the run.
type Fault struct {
	At     time.Duration // since the run's start
	Kind   string        // FaultFreeze or FaultCPU
	For    time.Duration // how long the fault lasts
	CPU    float64       // FaultCPU: the CPU limit in cores, e.g. 0.5
	Target string        // "pid:1234" or "cgroup:/sys/fs/cgroup/..."
}

// Fault kinds.
const (
	FaultFreeze = "freeze"
	FaultCPU    = "cpu"
)

// Error is one problem of a configuration: where, what and how to fix it.
type Error struct {
	Source string // file name; "" for flags and code
	Line   int    // 1-based; 0 when unknown
	Column int
	Key    string // key path such as scenarios.open.rate, or a flag such as --rate
	Msg    string // what is wrong and how to fix it
	Err    error  // the underlying cause, if any
}

func (e *Error) Error() string {
	where := ""
	switch {
	case e.Source != "" && e.Line > 0:
		where = fmt.Sprintf("%s:%d:%d: ", e.Source, e.Line, e.Column)
	case e.Source != "":
		where = e.Source + ": "
	}
	if e.Key != "" {
		where += e.Key + ": "
	}
	return where + e.Msg
}

// Unwrap returns the underlying cause.
func (e *Error) Unwrap() error { return e.Err }

// origin is where a key was written: a file position, or a flag.
type origin struct {
	line, col int
	flag      string
}

// errAt builds the Error for key path key, located by c's origins. A path
// with no origin of its own takes its nearest parent's.
func (c *Config) errAt(key string, cause error, format string, args ...any) error {
	e := &Error{Source: c.Source, Key: key, Msg: fmt.Sprintf(format, args...), Err: cause}
	for k := key; k != ""; k = parentKey(k) {
		if o, ok := c.origins[k]; ok {
			e.Line, e.Column = o.line, o.col
			if o.flag != "" {
				e.Key = o.flag
			}
			break
		}
	}
	return e
}

// example shows how to set key to v: as the flag that set it, or as a YAML key.
func (c *Config) example(key, v string) string {
	if o, ok := c.origins[key]; ok && o.flag != "" {
		return o.flag + " " + v
	}
	return key[max(strings.LastIndexAny(key, ".]")+1, 0):] + ": " + v
}

// parentKey drops the last element of a key path: a.b[2].c → a.b[2] → a.b → a.
func parentKey(k string) string {
	for i := len(k) - 1; i >= 0; i-- {
		if k[i] == '.' || k[i] == '[' {
			return k[:i]
		}
	}
	return ""
}
