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

// FlagScenario is the name of the one scenario FromFlags builds (k6's too).
const FlagScenario = "default"

// Flags are the command-line flag values of a single-scenario run. A zero
// field means the flag was not given: register every flag with a zero
// default, or defaults here cannot tell "not given" from "given". The flag
// names in the comments are the ones errors mention.
type Flags struct {
	Executor        string        // --executor; default inferred: --stages → ramping-*, --vus without --rate → constant-vus, else constant-arrival-rate
	Rate            float64       // --rate, iterations per --time-unit
	StartRate       float64       // --start-rate (ramping-arrival-rate)
	TimeUnit        time.Duration // --time-unit, default 1s
	Duration        time.Duration // --duration
	VUs             int           // --vus (constant-vus; start VUs of ramping-vus)
	Think           time.Duration // --think (closed model)
	PreAllocatedVUs int           // --pre-allocated-vus
	MaxVUs          int           // --max-vus
	Stages          string        // --stages, "30s:100,1m:300" (duration:target,...)
	URL             string        // --url
	Method          string        // --method, default GET
	Headers         []string      // --header, each "Key: Value"
	Body            string        // --body
	Vars            []string      // --var, each "name=v1,v2,v3"
	Name            string        // --name, the request's name tag; default the URL
	Timeout         time.Duration // --timeout per request, default 60s
	MaxConns        int           // --max-conns per host, 0 = no limit
	HTTP2           bool          // --http2
	Insecure        bool          // --insecure
	Seed            uint64        // --seed
	GracefulStop    time.Duration // --graceful-stop, default 30s
	Thresholds      []string      // --threshold
	RedactQuery     []string      // --redact-query, query parameter names whose values are secret

	Client request.Client // --client: auto or net/http
}

// flagKeys maps the key paths Validate reports to the flags that set them.
var flagKeys = map[string]string{
	"executor": "--executor", "rate": "--rate", "startRate": "--start-rate", "timeUnit": "--time-unit",
	"duration": "--duration", "vus": "--vus", "startVUs": "--vus", "think": "--think",
	"preAllocatedVUs": "--pre-allocated-vus", "maxVUs": "--max-vus", "stages": "--stages",
	"gracefulStop": "--graceful-stop", "requests": "--url",
	"requests[0].url": "--url", "requests[0].method": "--method", "requests[0].headers": "--header",
	"requests[0].body": "--body", "requests[0].timeout": "--timeout", "requests[0].name": "--name",
}

// FromFlags builds the Config of a single-scenario run from flag values,
// then validates it. The error joins every problem, each an *Error naming
// its flag.
func FromFlags(f Flags) (*Config, error) {
	cfg := &Config{Seed: f.Seed, Thresholds: f.Thresholds, RedactQuery: f.RedactQuery, origins: map[string]origin{
		"vars": {flag: "--var"}, "http.maxConnsPerHost": {flag: "--max-conns"}, "thresholds": {flag: "--threshold"},
	}}
	key := join("scenarios", FlagScenario)
	for k, flag := range flagKeys {
		cfg.origins[join(key, k)] = origin{flag: flag}
	}
	cfg.HTTP = request.TransportOptions{MaxConnsPerHost: f.MaxConns, HTTP2: f.HTTP2, Insecure: f.Insecure, Client: f.Client}
	var errs []error
	bad := func(flag string, err error) { errs = append(errs, &Error{Key: flag, Msg: err.Error(), Err: err}) }

	vars, err := parseVars(f.Vars)
	if err != nil {
		bad("--var", err)
	}
	cfg.Vars = vars
	spec := request.Spec{Name: f.Name, Method: f.Method, URL: f.URL, Body: f.Body, Timeout: f.Timeout}
	for i, h := range f.Headers {
		k, v, ok := strings.Cut(h, ":")
		if k = strings.TrimSpace(k); !ok || k == "" {
			// Never echo it: without its colon, a credential ("Authorization
			// Bearer X") cannot be told from its header's name.
			bad("--header", fmt.Errorf("header %d (%d characters) has no colon, so it is not a header: write \"Name: value\"", i+1, len(h)))
			continue
		}
		spec.Headers = append(spec.Headers, request.Header{Key: k, Value: strings.TrimSpace(v)})
	}
	stages, err := ParseStages(f.Stages)
	if err != nil {
		bad("--stages", err)
	}
	kind := inferExecutor(f)
	sc := Scenario{Name: FlagScenario, Executor: executorFromFlags(kind, f, stages), GracefulStop: f.GracefulStop, Requests: []request.Spec{spec}}
	if sc.GracefulStop == 0 {
		sc.GracefulStop = DefaultGracefulStop
	}
	if sc.Executor == nil {
		bad("--executor", fmt.Errorf("unknown executor %q; use one of %s", kind, strings.Join(Executors, ", ")))
	}
	errs = append(errs, flagsForExecutor(kind, f)...)
	if f.URL == "" {
		bad("--url", errors.New("no target; give --url http://host:port/path (or a scenario file)"))
	}
	cfg.Scenarios = []Scenario{sc}
	said := map[string]bool{}
	for _, err := range errs {
		said[err.(*Error).Key] = true
	}
	for _, err := range cfg.Validate() {
		if e, ok := err.(*Error); ok && said[e.Key] {
			continue // a parse problem of the same flag, already said
		}
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return cfg, nil
}

func inferExecutor(f Flags) string {
	switch {
	case f.Executor != "":
		return f.Executor
	case f.Stages != "" && f.VUs > 0 && f.Rate == 0 && f.StartRate == 0:
		return RampingVUs
	case f.Stages != "":
		return RampingArrivalRate
	case f.VUs > 0 && f.Rate == 0:
		return ConstantVUs
	}
	return ConstantArrivalRate
}

// flagsForExecutor reports flags given that the executor would ignore:
// silently dropping --think from an open-model run would mislead.
func flagsForExecutor(executor string, f Flags) []error {
	given := map[string]bool{
		"--rate": f.Rate != 0, "--start-rate": f.StartRate != 0, "--time-unit": f.TimeUnit != 0,
		"--duration": f.Duration != 0, "--vus": f.VUs != 0, "--think": f.Think != 0,
		"--pre-allocated-vus": f.PreAllocatedVUs != 0, "--max-vus": f.MaxVUs != 0, "--stages": f.Stages != "",
	}
	allowed := map[string][]string{
		ConstantArrivalRate: {"--rate", "--time-unit", "--duration", "--pre-allocated-vus", "--max-vus"},
		RampingArrivalRate:  {"--start-rate", "--time-unit", "--stages", "--pre-allocated-vus", "--max-vus"},
		ConstantVUs:         {"--vus", "--duration", "--think"},
		RampingVUs:          {"--vus", "--stages", "--think"},
	}[executor]
	if allowed == nil {
		return nil // Validate reports the unknown executor
	}
	var errs []error
	for _, flag := range []string{"--rate", "--start-rate", "--time-unit", "--duration", "--vus", "--think", "--pre-allocated-vus", "--max-vus", "--stages"} {
		if given[flag] && !contains(allowed, flag) {
			errs = append(errs, &Error{Key: flag, Msg: fmt.Sprintf("does not apply to %s, which takes %s", executor, strings.Join(allowed, ", "))})
		}
	}
	return errs
}

// executorFromFlags builds the settings of executor kind; nil when unknown.
func executorFromFlags(kind string, f Flags, stages []load.Stage) load.Executor {
	// Defaults (timeUnit, preAllocatedVUs, maxVUs) are load's, applied as
	// for a scenario file.
	switch kind {
	case ConstantArrivalRate:
		return load.ConstantArrivalRate{Rate: f.Rate, TimeUnit: f.TimeUnit, Duration: f.Duration,
			PreAllocatedVUs: f.PreAllocatedVUs, MaxVUs: f.MaxVUs}.WithDefaults()
	case RampingArrivalRate:
		return load.RampingArrivalRate{StartRate: f.StartRate, TimeUnit: f.TimeUnit, Stages: stages,
			PreAllocatedVUs: f.PreAllocatedVUs, MaxVUs: f.MaxVUs}.WithDefaults()
	case ConstantVUs:
		return load.ConstantVUs{VUs: f.VUs, Duration: f.Duration, Think: f.Think}
	case RampingVUs:
		return load.RampingVUs{StartVUs: f.VUs, Stages: stages, Think: f.Think}
	}
	return nil
}

// ParseStages parses "30s:100,1m:300": each stage ramps to target over duration.
func ParseStages(s string) ([]load.Stage, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []load.Stage
	for i, item := range strings.Split(s, ",") {
		d, t, ok := strings.Cut(strings.TrimSpace(item), ":")
		if !ok {
			return nil, fmt.Errorf("stage %d %q is not duration:target; write e.g. 30s:100", i+1, item)
		}
		dur, err := time.ParseDuration(strings.TrimSpace(d))
		if err != nil {
			return nil, fmt.Errorf("stage %d %q: %q is not a duration; write e.g. 30s:100", i+1, item, d)
		}
		target, err := strconv.ParseFloat(strings.TrimSpace(t), 64)
		if err != nil {
			return nil, fmt.Errorf("stage %d %q: %q is not a number; write e.g. 30s:100", i+1, item, t)
		}
		out = append(out, load.Stage{Duration: dur, Target: target})
	}
	return out, nil
}

// parseVars parses "name=v1,v2" items; a name given twice gets both lists.
func parseVars(items []string) (map[string][]string, error) {
	if len(items) == 0 {
		return nil, nil
	}
	vars := map[string][]string{}
	var errs []error
	for _, item := range items {
		name, list, ok := strings.Cut(item, "=")
		if name = strings.TrimSpace(name); !ok || name == "" {
			errs = append(errs, fmt.Errorf("%q is not name=v1,v2; write e.g. isbn=9780441172719,9780261102217", item))
			continue
		}
		for _, v := range strings.Split(list, ",") {
			if v = strings.TrimSpace(v); v != "" {
				vars[name] = append(vars[name], v)
			}
		}
		if len(vars[name]) == 0 {
			errs = append(errs, fmt.Errorf("%s has no values; write e.g. %s=a,b,c", name, name))
		}
	}
	return vars, errors.Join(errs...)
}
