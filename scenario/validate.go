package scenario

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/knee-dev/knee/load"
	"github.com/knee-dev/knee/request"
)

// Validate reports every problem of c, each an *Error; it changes nothing.
// Defaults must already be filled in (Parse and FromFlags do).
func (c *Config) Validate() []error {
	var errs []error
	if len(c.Scenarios) == 0 {
		errs = append(errs, c.errAt("scenarios", nil, "no scenarios; define at least one"))
	}
	vars, err := request.NewVars(c.Vars)
	if err != nil {
		for _, e := range unjoin(err) {
			errs = append(errs, c.errAt("vars", e, "%v", e))
		}
	}
	seen := map[string]bool{}
	for _, sc := range c.Scenarios {
		key := join("scenarios", sc.Name)
		if seen[sc.Name] {
			errs = append(errs, c.errAt(key, nil, "scenario name given twice; rename one"))
		}
		seen[sc.Name] = true
		errs = append(errs, c.validateScenario(sc, key, vars, err == nil)...)
	}
	if c.HTTP.MaxConnsPerHost < 0 {
		errs = append(errs, c.errAt("http.maxConnsPerHost", nil, "%d is negative; use 0 for no limit", c.HTTP.MaxConnsPerHost))
	}
	for i, f := range c.Faults {
		errs = append(errs, c.validateFault(f, fmt.Sprintf("faults[%d]", i))...)
	}
	for i, t := range c.Thresholds {
		if strings.TrimSpace(t) == "" {
			errs = append(errs, c.errAt(fmt.Sprintf("thresholds[%d]", i), nil, "empty threshold; write e.g. \"p(95)<200ms\" or \"errors<1%%\""))
		}
	}
	return errs
}

func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// check collects problems at keys below one prefix.
type check struct {
	c    *Config
	key  string
	errs []error
}

func (k *check) fail(sub string, format string, args ...any) {
	k.errs = append(k.errs, k.c.errAt(join(k.key, sub), nil, format, args...))
}

func (k *check) positive(sub string, v float64, example string) {
	if !(v > 0) {
		k.fail(sub, "must be greater than 0, got %v; e.g. %s", v, k.c.example(join(k.key, sub), example))
	}
}

func (k *check) notNegative(sub string, v float64) {
	if v < 0 {
		k.fail(sub, "must not be negative, got %v", v)
	}
}

func (k *check) positiveDuration(sub string, d time.Duration, example string) {
	if d <= 0 {
		k.fail(sub, "must be longer than 0, got %v; e.g. %s", d, k.c.example(join(k.key, sub), example))
	}
}

func (c *Config) validateScenario(sc Scenario, key string, vars *request.Vars, varsOK bool) []error {
	k := &check{c: c, key: key}
	if sc.Name == "" {
		k.fail("", "scenario has no name; give it one, e.g. open")
	}
	k.notNegative("startTime", float64(sc.StartTime))
	k.notNegative("gracefulStop", float64(sc.GracefulStop))
	k.executor(sc.Executor)
	if len(sc.Requests) == 0 {
		k.fail("requests", "no requests; add at least one, e.g. requests: [{url: http://127.0.0.1:5080/}]")
	}
	if !varsOK {
		return k.errs // every placeholder would look unknown
	}
	for _, err := range request.CheckSpecs(sc.Requests, vars) {
		var fe *request.FieldError
		if !errors.As(err, &fe) {
			k.errs = append(k.errs, c.errAt(join(key, "requests"), err, "%v", err))
			continue
		}
		sub := fmt.Sprintf("requests[%d].%s", fe.Index, fe.Field)
		if fe.Header != "" {
			sub += "." + fe.Header
		}
		k.errs = append(k.errs, c.errAt(join(key, sub), fe.Err, "%v", fe.Err))
	}
	return k.errs
}

// executor reports the executor's problems by load's rules (one set of
// rules for every way a configuration is built), each at its key, so that a
// problem in a file carries its line and one set by a flag names the flag.
func (k *check) executor(ex load.Executor) {
	if ex == nil {
		k.fail("executor", "no executor; set executor: to one of %s", strings.Join(Executors, ", "))
		return
	}
	for _, err := range ex.Validate() {
		var fe *load.FieldError
		if errors.As(err, &fe) {
			k.errs = append(k.errs, k.c.errAt(join(k.key, fe.Field), err, "%s", fe.Msg))
			continue
		}
		k.errs = append(k.errs, k.c.errAt(k.key, err, "%v", err))
	}
}

func (c *Config) validateFault(f Fault, key string) []error {
	k := &check{c: c, key: key}
	k.notNegative("at", float64(f.At))
	switch f.Kind {
	case FaultFreeze:
		k.positiveDuration("freeze", f.For, "5s")
		if f.CPU != 0 {
			k.fail("cpu", "a fault is either a freeze or a cpu limit; split it in two")
		}
	case FaultCPU:
		k.positive("cpu", f.CPU, "0.5")
		k.positiveDuration("for", f.For, "10s")
	default:
		k.fail("", "say what the fault does: freeze: 5s, or cpu: 0.5 with for: 10s")
	}
	switch target, ok := strings.CutPrefix(f.Target, "pid:"); {
	case ok:
		if pid, err := strconv.Atoi(target); err != nil || pid <= 0 {
			k.fail("target", "%q is not a process id; write e.g. pid:1234", f.Target)
		}
	case strings.HasPrefix(f.Target, "cgroup:/"):
	default:
		k.fail("target", "%q names no target; write pid:1234 or cgroup:/sys/fs/cgroup/...", f.Target)
	}
	return k.errs
}
