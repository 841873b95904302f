package k6script

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/knee-dev/knee/load"
	"github.com/knee-dev/knee/request"
	"github.com/knee-dev/knee/scenario"
)

// Options are the parts of a k6 script's exported options knee reads.
// Of k6's other options, those that change what is sent or measured are
// refused with what to do instead (unsupportedOptions); those about k6's
// own summary, cloud and console are ignored, as are unknown keys (k6
// ignores them too).
type Options struct {
	VUs                   *int64                     `json:"vus"`
	Duration              *Duration                  `json:"duration"`
	Iterations            *int64                     `json:"iterations"`
	Stages                []StageOption              `json:"stages"`
	Scenarios             map[string]ScenarioOption  `json:"-"`
	ScenarioNames         []string                   `json:"-"` // sorted
	Thresholds            map[string]ThresholdOption `json:"thresholds"`
	DiscardResponseBodies bool                       `json:"discardResponseBodies"`
	NoCookiesReset        bool                       `json:"noCookiesReset"` // keep the VU's cookies between iterations
	MaxRedirects          *int                       `json:"maxRedirects"`
	InsecureSkipTLSVerify bool                       `json:"insecureSkipTLSVerify"`
	UserAgent             *string                    `json:"userAgent"`
	SetupTimeout          *Duration                  `json:"setupTimeout"`
	TeardownTimeout       *Duration                  `json:"teardownTimeout"`
	MinIterationDuration  *Duration                  `json:"minIterationDuration"`
	Throw                 bool                       `json:"throw"` // a failed request throws instead of returning its Response
	// Batch and BatchPerHost bound an http.batch's requests in flight, in
	// all and to one host; nil: k6's defaults (defaultBatch).
	Batch        *int64 `json:"batch"`
	BatchPerHost *int64 `json:"batchPerHost"`
	// NoSetup and NoTeardown leave setup() and teardown() unrun, as k6.
	NoSetup    bool              `json:"noSetup"`
	NoTeardown bool              `json:"noTeardown"`
	Tags       map[string]string `json:"tags"` // added to every sample's tags, as k6's options.tags
	// SummaryTrendStats, SummaryTimeUnit and HandleSummaryTimeout are
	// handleSummary's: the Trend values of its data, data.options'
	// summaryTimeUnit, and how long it may run.
	SummaryTrendStats    []string  `json:"summaryTrendStats"`
	SummaryTimeUnit      *string   `json:"summaryTimeUnit"`
	HandleSummaryTimeout *Duration `json:"handleSummaryTimeout"`
}

// unsupportedOptions are k6 options that change what is sent or measured
// and that knee does not implement: a script that sets one is refused
// before the test, saying what to do instead, rather than run differently.
var unsupportedOptions = map[string]string{
	"hosts":                    "knee resolves names through the system; put the address in the URL or an /etc/hosts entry",
	"dns":                      "knee resolves names through the system resolver; remove it",
	"rps":                      "knee has no global request-rate cap; use an arrival-rate scenario (constant-arrival-rate) for the rate you want",
	"paused":                   "knee has no REST API to resume a paused test; remove it",
	"noConnectionReuse":        "knee keeps connections alive, as browsers and k6 do by default; remove it",
	"noVUConnectionReuse":      "knee keeps each VU's connections between iterations; remove it",
	"tlsAuth":                  "client certificates are not supported by knee; remove it",
	"tlsVersion":               "knee uses Go's TLS defaults; remove it",
	"tlsCipherSuites":          "knee uses Go's TLS defaults; remove it",
	"blockHostnames":           "knee has no host block list; remove it (knee sends only what the script asks)",
	"blacklistIPs":             "knee has no address block list; remove it (knee sends only what the script asks)",
	"executionSegment":         "use knee's --execution-segment flags instead",
	"executionSegmentSequence": "use knee's --execution-segment-sequence flag instead",
}

// ScenarioOption is one entry of options.scenarios.
type ScenarioOption struct {
	Executor         string            `json:"executor"`
	StartTime        *Duration         `json:"startTime"`
	GracefulStop     *Duration         `json:"gracefulStop"`
	GracefulRampDown *Duration         `json:"gracefulRampDown"`
	Exec             string            `json:"exec"`
	Env              map[string]string `json:"env"`
	Tags             map[string]string `json:"tags"`
	Duration         *Duration         `json:"duration"`
	MaxDuration      *Duration         `json:"maxDuration"`
	TimeUnit         *Duration         `json:"timeUnit"`
	Rate             *float64          `json:"rate"`
	StartRate        *float64          `json:"startRate"`
	VUs              *int64            `json:"vus"`
	StartVUs         *int64            `json:"startVUs"`
	PreAllocatedVUs  *int64            `json:"preAllocatedVUs"`
	MaxVUs           *int64            `json:"maxVUs"`
	Iterations       *int64            `json:"iterations"`
	Stages           []StageOption     `json:"stages"`
}

// StageOption is one {duration, target} stage.
type StageOption struct {
	Duration Duration `json:"duration"`
	Target   float64  `json:"target"`
}

// ThresholdOption is a metric's thresholds: strings, or objects with a
// threshold and, optionally, abortOnFail and delayAbortEval.
type ThresholdOption struct {
	Exprs []string
	// Abort holds the expressions with abortOnFail, each with its
	// delayAbortEval (0 when none).
	Abort map[string]time.Duration
}

// UnmarshalJSON takes ["p(95)<200"] or [{threshold: "p(95)<200", abortOnFail: true, delayAbortEval: "10s"}] or one string.
func (t *ThresholdOption) UnmarshalJSON(b []byte) error {
	var one string
	if json.Unmarshal(b, &one) == nil {
		t.Exprs = []string{one}
		return nil
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return errors.New("write a metric's thresholds as a list of strings, e.g. ['p(95)<200']")
	}
	for _, r := range raw {
		var s string
		if json.Unmarshal(r, &s) == nil {
			t.Exprs = append(t.Exprs, s)
			continue
		}
		var o struct {
			Threshold      string    `json:"threshold"`
			AbortOnFail    bool      `json:"abortOnFail"`
			DelayAbortEval *Duration `json:"delayAbortEval"`
		}
		if err := json.Unmarshal(r, &o); err != nil || o.Threshold == "" {
			return errors.New("a threshold is a string such as 'p(95)<200' or {threshold: 'p(95)<200', abortOnFail: true}")
		}
		t.Exprs = append(t.Exprs, o.Threshold)
		if o.AbortOnFail {
			if t.Abort == nil {
				t.Abort = map[string]time.Duration{}
			}
			if o.DelayAbortEval != nil {
				t.Abort[o.Threshold] = time.Duration(*o.DelayAbortEval)
			} else {
				t.Abort[o.Threshold] = 0
			}
		}
	}
	return nil
}

// Duration is a k6 duration: a string such as "1m30s" or "2d", or a number of milliseconds.
type Duration time.Duration

// UnmarshalJSON implements json.Unmarshaler.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var ms float64
	if json.Unmarshal(b, &ms) == nil {
		if ms < 0 || math.IsNaN(ms) || ms > float64(math.MaxInt64/int64(time.Millisecond)) {
			return fmt.Errorf("duration %v ms is out of range", ms)
		}
		*d = Duration(ms * float64(time.Millisecond))
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return errors.New(`a duration is a string such as "30s" or "1m30s", or a number of milliseconds`)
	}
	v, err := ParseDuration(s)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// ParseDuration reads k6's duration syntax (lib/types ParseExtendedDuration):
// Go's, plus days ("1d12h") and a bare number of milliseconds ("500").
func ParseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		if f < 0 || f > math.MaxInt64/float64(time.Millisecond) {
			return 0, fmt.Errorf("duration %q is out of range", s)
		}
		return time.Duration(f * float64(time.Millisecond)), nil
	}
	var days time.Duration
	if i := strings.IndexByte(s, 'd'); i > 0 {
		n, err := strconv.Atoi(s[:i])
		if err != nil || n < 0 || n > 10000 {
			return 0, fmt.Errorf("duration %q: write it as 30s, 1m30s, 2h or 1d", s)
		}
		days, s = time.Duration(n)*24*time.Hour, s[i+1:]
		if s == "" {
			return days, nil
		}
	}
	v, err := time.ParseDuration(s)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("duration %q: write it as 30s, 1m30s, 2h or 1d", s)
	}
	return days + v, nil
}

// DecodeOptions reads options as JSON (JSON.stringify of the script's
// exported options). Unknown options are ignored, as k6 does; unknown keys
// inside a scenario are errors, since a misspelt one would silently change
// the load.
func DecodeOptions(b []byte) (Options, error) {
	var o Options
	if len(bytes.TrimSpace(b)) == 0 || string(bytes.TrimSpace(b)) == "null" {
		return o, nil
	}
	b = intStrings(b)
	if err := json.Unmarshal(b, &o); err != nil {
		return o, fmt.Errorf("options: %w", cleanJSONErr(err))
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(b, &keys); err != nil {
		return o, fmt.Errorf("options: %w", cleanJSONErr(err))
	}
	refused := &refusedOptions{}
	for k := range keys {
		if why, ok := unsupportedOptions[k]; ok {
			refused.add(k, fmt.Sprintf("options.%s is not supported by knee: %s", k, why))
		}
	}
	if raw, ok := keys["systemTags"]; ok {
		if err := checkSystemTags(raw); err != nil {
			refused.add("systemTags", err.Error())
		}
	}
	if len(refused.msgs) > 0 {
		return o, refused
	}
	if err := checkSummaryOptions(o); err != nil {
		return o, err
	}
	if err := checkBatchOptions(o); err != nil {
		return o, err
	}
	var raw struct {
		Scenarios map[string]json.RawMessage `json:"scenarios"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return o, fmt.Errorf("options.scenarios: %w", cleanJSONErr(err))
	}
	if raw.Scenarios == nil {
		return o, nil
	}
	o.Scenarios = map[string]ScenarioOption{}
	for name, r := range raw.Scenarios {
		dec := json.NewDecoder(bytes.NewReader(r))
		dec.DisallowUnknownFields()
		var sc ScenarioOption
		if err := dec.Decode(&sc); err != nil {
			return o, fmt.Errorf("options.scenarios.%s: %w", name, cleanJSONErr(err))
		}
		o.Scenarios[name] = sc
		o.ScenarioNames = append(o.ScenarioNames, name)
	}
	sort.Strings(o.ScenarioNames)
	return o, nil
}

// intStrings rewrites the integer options given as strings into numbers:
// k6 reads them as null.Int, which takes a number or a string of one, ""
// leaving the option unset (guregu/null.v3 Int.UnmarshalJSON), so scripts
// pass __ENV values as they are (vus: __ENV.VUS). A string that is no
// integer is left for the decoder to refuse; b is returned as it is when
// it is not a JSON object.
func intStrings(b []byte) []byte {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber() // every other number passes through exactly
	var top map[string]any
	if dec.Decode(&top) != nil || top == nil {
		return b
	}
	fix := func(m map[string]any, keys ...string) {
		for _, k := range keys {
			str, ok := m[k].(string)
			if !ok {
				continue
			}
			if str == "" {
				delete(m, k)
			} else if _, err := strconv.ParseInt(str, 10, 64); err == nil {
				m[k] = json.Number(str)
			}
		}
	}
	stages := func(m map[string]any) {
		list, _ := m["stages"].([]any)
		for _, st := range list {
			if st, ok := st.(map[string]any); ok {
				fix(st, "target")
			}
		}
	}
	fix(top, "vus", "iterations", "batch", "batchPerHost")
	stages(top)
	scs, _ := top["scenarios"].(map[string]any)
	for _, sc := range scs {
		if sc, ok := sc.(map[string]any); ok {
			fix(sc, "vus", "startVUs", "preAllocatedVUs", "maxVUs", "iterations", "rate", "startRate")
			stages(sc)
		}
	}
	out, err := json.Marshal(top)
	if err != nil {
		return b
	}
	return out
}

// refusedOptions are the options DecodeOptions refuses, each with why.
type refusedOptions struct {
	keys, msgs []string
}

func (r *refusedOptions) add(key, msg string) {
	r.keys, r.msgs = append(r.keys, key), append(r.msgs, msg)
}

func (r *refusedOptions) Error() string {
	msgs := slices.Clone(r.msgs)
	sort.Strings(msgs)
	return strings.Join(msgs, "; ")
}

// first is the refused key that sorts first, where the refusal is placed.
func (r *refusedOptions) first() string { return slices.Min(r.keys) }

// k6DefaultSystemTags are the tags k6 v1.8.1 puts on samples by default
// (metrics/system_tag.go DefaultSystemTagSet), the ones knee puts on them;
// k6SystemTags all the system tags k6 knows, the others (iter, vu,
// ocsp_status, ip) off by default.
var (
	k6DefaultSystemTags = []string{"proto", "subproto", "status", "method", "url", "name", "group", "check", "error",
		"error_code", "tls_version", "scenario", "service", "expected_response"}
	k6SystemTags = append(slices.Clone(k6DefaultSystemTags), "iter", "vu", "ocsp_status", "ip")
)

// checkSystemTags refuses an options.systemTags that changes k6's default
// set: k6 then leaves the tags off its samples (a threshold on one selects
// nothing), or adds others, and knee always tags as the default set does.
// An empty list is k6's default (metrics.SystemTagSet.UnmarshalJSON), and
// k6 drops the names it does not know (ToSystemTagSet).
func checkSystemTags(raw json.RawMessage) error {
	var list []string
	if err := json.Unmarshal(raw, &list); err != nil {
		return errors.New("options.systemTags: write it as a list of tag names, e.g. ['status', 'method', 'url']")
	}
	if len(list) == 0 {
		return nil
	}
	set := map[string]bool{}
	for _, t := range list {
		if slices.Contains(k6SystemTags, t) {
			set[t] = true
		}
	}
	same := len(set) == len(k6DefaultSystemTags)
	for _, t := range k6DefaultSystemTags {
		same = same && set[t]
	}
	if same {
		return nil
	}
	return fmt.Errorf("options.systemTags is not supported by knee: knee tags every sample with k6's default system tags (%s); remove it",
		strings.Join(k6DefaultSystemTags, ", "))
}

// checkSummaryOptions refuses what k6 refuses of the summary's options:
// an unknown summaryTrendStats column (k6 checks the script's
// summaryTimeUnit no more than knee: it reaches data.options as written).
func checkSummaryOptions(o Options) error {
	for _, st := range o.SummaryTrendStats {
		if _, err := parseTrendStat(st); err != nil {
			return fmt.Errorf("options.%w", err)
		}
	}
	return nil
}

func cleanJSONErr(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Errorf("%s is a %s, not a %s", te.Field, te.Value, te.Type)
	}
	return errors.New(strings.TrimPrefix(err.Error(), "json: "))
}

// Overrides are the command line's execution options (--vus, --duration,
// --iterations, --stage), which outrank the script's as in k6: any of
// duration, iterations or stages replaces the script's scenarios and
// shortcuts; --vus replaces the script's vus.
type Overrides struct {
	VUs        *int64
	Duration   *time.Duration
	Iterations *int64
	Stages     []load.Stage
}

// Plan is what the script will run: knee's scenarios, and per scenario
// what the executors cannot say (exec function, env, iteration limit).
type Plan struct {
	Config *scenario.Config
	// Scenarios, by name.
	Scenarios map[string]ScenarioPlan
	// Thresholds in k6's form, metric -> expressions.
	Thresholds map[string][]string
	// AbortOnFail holds the thresholds with abortOnFail, as "metric:
	// expression" (the Expr analyze and SplitThresholds give them), each
	// with its delayAbortEval.
	AbortOnFail map[string]time.Duration
	Notes       []string
}

// ScenarioPlan is the script-side part of one scenario.
type ScenarioPlan struct {
	Exec     string            // the exported function each iteration calls
	Executor string            // k6's executor name, as the script gave it
	Env      map[string]string // added to __ENV
	// Iterations, when > 0, ends the run once that many iterations have
	// finished (k6's shared-iterations and per-vu-iterations).
	Iterations int64
	// PerVU, when > 0, is how many of them each VU runs (k6's
	// per-vu-iterations): a VU that ran its share waits for the others.
	PerVU int64
}

// Default durations, as k6 has them.
const (
	defaultMaxDuration  = 10 * time.Minute
	defaultGracefulStop = 30 * time.Second
)

// Plan applies ov to o with k6's precedence and maps the result onto
// knee's scenarios. source names the script in errors.
func (o Options) Plan(source string, ov Overrides) (*Plan, error) {
	if ov.Duration != nil || ov.Iterations != nil || ov.Stages != nil {
		o.Duration, o.Iterations, o.Stages, o.Scenarios, o.ScenarioNames = nil, nil, nil, nil, nil
		o.Duration, o.Iterations = durationPtr(ov.Duration), ov.Iterations
		if ov.Stages != nil {
			for _, st := range ov.Stages {
				o.Stages = append(o.Stages, StageOption{Duration: Duration(st.Duration), Target: st.Target})
			}
		}
	}
	if ov.VUs != nil {
		o.VUs = ov.VUs
	}
	p := &Plan{
		Config:     &scenario.Config{Source: source, HTTP: request.TransportOptions{ALPN: true, Insecure: o.InsecureSkipTLSVerify}},
		Scenarios:  map[string]ScenarioPlan{},
		Thresholds: map[string][]string{},
	}
	for m, ts := range o.Thresholds {
		p.Thresholds[m] = ts.Exprs
		for expr, delay := range ts.Abort {
			if p.AbortOnFail == nil {
				p.AbortOnFail = map[string]time.Duration{}
			}
			p.AbortOnFail[strings.TrimSpace(m)+": "+expr] = delay
		}
	}
	if len(o.Scenarios) > 0 {
		if o.Duration != nil || o.Iterations != nil || len(o.Stages) > 0 {
			return nil, &scenarioError{source, "", errors.New("scenarios and the duration/iterations/stages shortcuts are both set; keep one (k6 refuses this too)")}
		}
		if o.VUs != nil {
			p.Notes = append(p.Notes, "options.vus is ignored: the scenarios set their own VUs")
		}
		var errs []error
		for _, name := range o.ScenarioNames {
			if err := p.add(name, o.Scenarios[name]); err != nil {
				errs = append(errs, &scenarioError{source, name, err})
			}
		}
		if err := errors.Join(errs...); err != nil {
			return nil, err
		}
	} else {
		sc, note := o.shortcut()
		if note != "" {
			p.Notes = append(p.Notes, note)
		}
		if err := p.add("default", sc); err != nil {
			return nil, &scenarioError{source, "", err}
		}
	}
	if len(p.Config.Scenarios) > 1 {
		// In the script's order, so the message names the same scenario
		// every time (a map's order is random).
		for _, sc := range p.Config.Scenarios {
			name := sc.Name
			if p.Scenarios[name].Iterations > 0 {
				return nil, &scenarioError{source, name, errors.New("an iteration-count executor runs only as the script's one scenario in knee; give it its own run, or use constant-vus with a duration")}
			}
		}
	}
	// The executors' own checks; scenario.Config.Validate would ask for
	// request templates, which a script does not have.
	var errs []error
	for _, sc := range p.Config.Scenarios {
		for _, err := range sc.Executor.Validate() {
			errs = append(errs, &scenarioError{source, sc.Name, err})
		}
		if sc.StartTime < 0 || sc.GracefulStop < 0 {
			errs = append(errs, &scenarioError{source, sc.Name, errors.New("startTime and gracefulStop must not be negative")})
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return p, nil
}

// scenarioError is a problem of one of options.scenarios (of the
// shortcuts' scenario when name is ""), named by source; Script.Plan makes
// source the place of the scenario's key (of options).
type scenarioError struct {
	source, name string
	err          error
}

func (e *scenarioError) Error() string {
	if e.name == "" {
		return fmt.Sprintf("%s: options: %v", e.source, e.err)
	}
	return fmt.Sprintf("%s: options.scenarios.%s: %v", e.source, e.name, e.err)
}

func (e *scenarioError) Unwrap() error { return e.err }

func durationPtr(d *time.Duration) *Duration {
	if d == nil {
		return nil
	}
	v := Duration(*d)
	return &v
}

// shortcut is the scenario k6 (v1.8.1, lib/executor/execution_config_shortcuts.go)
// derives from vus/duration/iterations/stages, and what it warns of.
func (o Options) shortcut() (ScenarioOption, string) {
	vus := int64(1)
	if o.VUs != nil {
		vus = *o.VUs
	}
	switch {
	case o.Iterations != nil:
		sc := ScenarioOption{Executor: "shared-iterations", VUs: &vus, Iterations: o.Iterations}
		if o.Duration != nil {
			sc.MaxDuration = o.Duration
		}
		return sc, ""
	case o.Duration != nil:
		return ScenarioOption{Executor: "constant-vus", VUs: &vus, Duration: o.Duration}, ""
	case len(o.Stages) > 0:
		return ScenarioOption{Executor: "ramping-vus", StartVUs: &vus, Stages: o.Stages}, ""
	}
	// Nothing says how long: one iteration on one VU, whatever vus says.
	one := int64(1)
	note := ""
	if vus != 1 {
		note = fmt.Sprintf("vus=%d is ignored: it only works with iterations, duration or stages; the script runs 1 iteration on 1 VU (as k6)", vus)
	}
	return ScenarioOption{Executor: "per-vu-iterations", VUs: &one, Iterations: &one}, note
}

// add maps one k6 scenario onto knee's.
func (p *Plan) add(name string, sc ScenarioOption) error {
	out := scenario.Scenario{Name: name, GracefulStop: defaultGracefulStop, Tags: sc.Tags}
	if sc.StartTime != nil {
		out.StartTime = time.Duration(*sc.StartTime)
	}
	if sc.GracefulStop != nil {
		out.GracefulStop = time.Duration(*sc.GracefulStop)
	}
	sp := ScenarioPlan{Exec: sc.Exec, Env: sc.Env, Executor: sc.Executor}
	if sp.Exec == "" {
		sp.Exec = "default"
	}
	dur := func() time.Duration {
		if sc.Duration == nil {
			return 0
		}
		return time.Duration(*sc.Duration)
	}
	unit := func() time.Duration {
		if sc.TimeUnit == nil {
			return time.Second
		}
		return time.Duration(*sc.TimeUnit)
	}
	switch sc.Executor {
	case scenario.ConstantArrivalRate:
		out.Executor = load.ConstantArrivalRate{Rate: f64(sc.Rate), TimeUnit: unit(), Duration: dur(),
			PreAllocatedVUs: intOf(sc.PreAllocatedVUs, 0), MaxVUs: intOf(sc.MaxVUs, 0)}
	case scenario.RampingArrivalRate:
		out.Executor = load.RampingArrivalRate{StartRate: f64(sc.StartRate), TimeUnit: unit(), Stages: stages(sc.Stages),
			PreAllocatedVUs: intOf(sc.PreAllocatedVUs, 0), MaxVUs: intOf(sc.MaxVUs, 0)}
	case scenario.ConstantVUs:
		out.Executor = load.ConstantVUs{VUs: intOf(sc.VUs, 1), Duration: dur()}
	case scenario.RampingVUs:
		out.Executor = load.RampingVUs{StartVUs: intOf(sc.StartVUs, 1), Stages: stages(sc.Stages)}
	case "shared-iterations", "per-vu-iterations":
		vus, iters := intOf(sc.VUs, 1), int64(intOf(sc.Iterations, 1))
		if sc.Executor == "per-vu-iterations" {
			sp.PerVU = iters
			iters *= int64(vus)
		}
		if iters <= 0 || vus <= 0 {
			return fmt.Errorf("vus (%d) and iterations (%d) must be at least 1", vus, iters)
		}
		if sc.Executor == "shared-iterations" && iters < int64(vus) {
			// k6 refuses this before the start (SharedIterationsConfig.Validate),
			// the --vus/--iterations shortcut included; its words.
			return fmt.Errorf("the number of iterations (%d) can't be less than the number of VUs (%d)", iters, vus)
		}
		maxDur := defaultMaxDuration
		if sc.MaxDuration != nil {
			maxDur = time.Duration(*sc.MaxDuration)
		}
		out.Executor = load.ConstantVUs{VUs: vus, Duration: maxDur}
		sp.Iterations = iters
	case "externally-controlled":
		return errors.New("the externally-controlled executor is not supported by knee; use constant-vus or ramping-vus")
	case "":
		return fmt.Errorf("no executor; set executor to one of %s", strings.Join(scenario.Executors, ", "))
	default:
		return fmt.Errorf("executor %q is not one knee knows; use one of %s, shared-iterations or per-vu-iterations", sc.Executor, strings.Join(scenario.Executors, ", "))
	}
	p.Config.Scenarios = append(p.Config.Scenarios, out)
	p.Scenarios[name] = sp
	return nil
}

func f64(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

func intOf(p *int64, def int) int {
	switch {
	case p == nil:
		return def
	case *p > math.MaxInt32:
		return math.MaxInt32
	case *p < math.MinInt32:
		return math.MinInt32
	}
	return int(*p)
}

func stages(in []StageOption) []load.Stage {
	out := make([]load.Stage, 0, len(in))
	for _, st := range in {
		out = append(out, load.Stage{Duration: time.Duration(st.Duration), Target: st.Target})
	}
	return out
}

// k6's defaults for options.batch and options.batchPerHost (its run
// command's --batch and --batch-per-host).
const (
	defaultBatch        = 20
	defaultBatchPerHost = 6
)

// batchLimits are the requests of an http.batch in flight at once, in all
// and to one host (0: no bound).
func (o Options) batchLimits() (parallel, perHost int) {
	parallel, perHost = defaultBatch, defaultBatchPerHost
	if o.Batch != nil {
		parallel = int(*o.Batch)
	}
	if o.BatchPerHost != nil {
		perHost = int(*o.BatchPerHost)
	}
	return parallel, perHost
}

// checkBatchOptions refuses bounds k6 would hang or misread on: a batch of
// 0 starts no worker, and k6 then waits for replies forever.
func checkBatchOptions(o Options) error {
	if o.Batch != nil && *o.Batch < 1 {
		return fmt.Errorf("options.batch is %d: at least one request of an http.batch must be let go at a time (k6 would wait forever); set 1 or more, or remove it for k6's 20", *o.Batch)
	}
	if o.BatchPerHost != nil && *o.BatchPerHost < 0 {
		return fmt.Errorf("options.batchPerHost is %d: set 0 for no bound per host, or a positive number (k6's default is 6)", *o.BatchPerHost)
	}
	return nil
}
