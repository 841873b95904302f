package scenario

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/knee-dev/knee/internal/limits"
	"io"
	"io/fs"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/knee-dev/knee/load"
	"github.com/knee-dev/knee/request"
)

// Keys each level of a scenario file accepts, with k6's spelling.
var (
	topKeys      = []string{"scenarios", "vars", "seed", "http", "faults", "thresholds", "redactQuery"}
	httpKeys     = []string{"maxConnsPerHost", "http2", "insecure"}
	commonKeys   = []string{"executor", "startTime", "gracefulStop", "tags", "requests"}
	requestKeys  = []string{"name", "method", "url", "headers", "body", "weight", "timeout"}
	stageKeys    = []string{"duration", "target"}
	faultKeys    = []string{"at", "freeze", "cpu", "for", "target"}
	executorKeys = map[string][]string{
		ConstantArrivalRate: {"rate", "timeUnit", "duration", "preAllocatedVUs", "maxVUs"},
		RampingArrivalRate:  {"startRate", "timeUnit", "stages", "preAllocatedVUs", "maxVUs"},
		ConstantVUs:         {"vus", "duration", "think"},
		RampingVUs:          {"startVUs", "stages", "think"},
	}
)

// maxErrors bounds how many problems Parse lists: past it, the file is
// probably not a scenario file at all.
const maxErrors = 50

// ReadFile reads and parses the scenario file at path in fsys.
func ReadFile(fsys fs.FS, path string) (*Config, error) {
	f, err := fsys.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read scenario file: %w", err)
	}
	defer f.Close()
	data, err := limits.ReadAll(f, limits.Scenario, path, "scenario file", scenarioFix)
	if err != nil {
		return nil, fmt.Errorf("read scenario file: %w", err)
	}
	return Parse(path, data)
}

// scenarioFix is what to do with a scenario file past limits.Scenario.
const scenarioFix = "is this a scenario file? a scenario's YAML is a few KB"

// Stdin is the path that names standard input, as shells and most tools spell it.
const Stdin = "-"

// ReadPath reads and parses the scenario file at path as a shell gives it:
// relative (./s.yaml, ../s.yaml, s.yaml), absolute, or Stdin for stdin.
// Errors name the path as given. io/fs paths cannot start with ./ or ..,
// which is why a command-line path does not go through ReadFile.
func ReadPath(path string, stdin io.Reader) (*Config, error) {
	var data []byte
	var err error
	name := path
	switch {
	case path == Stdin && stdin == nil:
		return nil, errors.New("read scenario file: - names standard input, but there is none")
	case path == Stdin:
		name = "<stdin>"
		data, err = limits.ReadAll(stdin, limits.Scenario, name, "scenario file", scenarioFix)
	default:
		data, err = limits.ReadFile(path, limits.Scenario, "scenario file", scenarioFix)
	}
	if errors.Is(err, limits.ErrTooLarge) {
		return nil, err // it names the file
	}
	if err != nil {
		return nil, fmt.Errorf("read scenario file %s: %w", name, err)
	}
	return Parse(name, data)
}

// Parse reads a scenario file; name is used in error messages. It fills in
// defaults, then validates. The error joins every problem found, each an
// *Error, in file order.
func Parse(name string, data []byte) (*Config, error) {
	cfg := &Config{Source: name, origins: map[string]origin{}}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, syntaxError(name, data, err)
	}
	if len(doc.Content) == 0 {
		return nil, &Error{Source: name, Msg: "the file is empty; define at least one scenario under scenarios:"}
	}
	d := &decoder{cfg: cfg}
	d.top(doc.Content[0])
	errs := append(d.errs, withoutRepeats(cfg.Validate(), d.errs)...)
	if len(errs) > 0 {
		sortErrors(errs)
		if len(errs) > maxErrors {
			more := &Error{Source: name, Msg: fmt.Sprintf("and %d more problems", len(errs)-maxErrors)}
			errs = append(errs[:maxErrors], more)
		}
		return nil, errors.Join(errs...)
	}
	return cfg, nil
}

// syntaxError places a YAML syntax error on the line where the text went
// wrong. The YAML library names the line where the enclosing block starts
// (a mis-indented key on line 6 of a mapping opened on line 2 is "line 1"):
// the first prefix of the file, in whole lines, that fails with the same
// problem ends at the line to fix. When no prefix fails alike (a problem
// only the end of the file shows), the library's words stand as they are.
func syntaxError(name string, data []byte, err error) *Error {
	problem := yamlProblem(err)
	lines := bytes.SplitAfter(data, []byte("\n"))
	fails := func(k int) bool {
		var n yaml.Node
		e := yaml.Unmarshal(bytes.Join(lines[:k], nil), &n)
		return e != nil && yamlProblem(e) == problem
	}
	// The prefixes that fail alike are the longer ones: search for the shortest.
	k := sort.Search(len(lines), func(i int) bool { return fails(i + 1) }) + 1
	if k > len(lines) || !fails(k) {
		return &Error{Source: name, Msg: fmt.Sprintf("not valid YAML: %v", err), Err: err}
	}
	line := string(lines[k-1])
	col := len(line) - len(strings.TrimLeft(line, " \t")) + 1
	return &Error{Source: name, Line: k, Column: col, Err: err,
		Msg: fmt.Sprintf("not valid YAML: %s (check this line's indentation and punctuation against the lines above)", problem)}
}

// yamlProblem is the library's message without its "yaml: line N: " prefix.
func yamlProblem(err error) string {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if i := strings.Index(rest, ": "); i > 0 {
			if _, e := strconv.Atoi(rest[:i]); e == nil {
				return rest[i+2:]
			}
		}
	}
	return msg
}

// withoutRepeats drops the problems Validate found at, above or below a key
// the decoder already reported: a rate that is not a number need not also be
// reported as zero.
func withoutRepeats(found, reported []error) []error {
	var keys []string
	for _, err := range reported {
		var e *Error
		if errors.As(err, &e) {
			keys = append(keys, e.Key)
		}
	}
	related := func(a, b string) bool {
		return a == b || a == "" || b == "" || under(a, b) || under(b, a)
	}
	var out []error
next:
	for _, err := range found {
		var e *Error
		if errors.As(err, &e) {
			for _, k := range keys {
				if related(e.Key, k) {
					continue next
				}
			}
		}
		out = append(out, err)
	}
	return out
}

// under reports whether key path a lies below b.
func under(a, b string) bool {
	return strings.HasPrefix(a, b) && len(a) > len(b) && (a[len(b)] == '.' || a[len(b)] == '[')
}

func sortErrors(errs []error) {
	line := func(err error) (int, int) {
		var e *Error
		if errors.As(err, &e) {
			return e.Line, e.Column
		}
		return 0, 0
	}
	sort.SliceStable(errs, func(i, j int) bool {
		li, ci := line(errs[i])
		lj, cj := line(errs[j])
		return li < lj || li == lj && ci < cj
	})
}

func (d *decoder) top(n *yaml.Node) {
	var scenarios *yaml.Node
	d.fields(n, "", topKeys, func(k string, v *yaml.Node) {
		switch k {
		case "scenarios":
			scenarios = v
		case "vars":
			d.vars(v)
		case "seed":
			d.cfg.Seed = d.uint64(v, k)
		case "http":
			d.http(v)
		case "faults":
			d.items(v, k, "faults", func(path string, fn *yaml.Node) { d.fault(fn, path) })
		case "thresholds":
			d.cfg.Thresholds = d.strList(v, k, "thresholds such as \"p(95)<200ms\"")
		case "redactQuery":
			d.cfg.RedactQuery = d.strList(v, k, "query parameter names such as token")
		}
	})
	if scenarios == nil {
		if n.Kind == yaml.MappingNode {
			d.fail(n, "scenarios", "missing; define at least one scenario, e.g. scenarios: {open: {executor: constant-arrival-rate, ...}}")
		}
		return
	}
	d.entries(scenarios, "scenarios", "scenario names to scenarios", func(name string, kn, vn *yaml.Node) {
		d.scenario(name, kn, vn)
	})
}

func (d *decoder) vars(n *yaml.Node) {
	d.cfg.Vars = map[string][]string{}
	d.entries(n, "vars", "variable names to lists of values", func(name string, _, vn *yaml.Node) {
		path := join("vars", name)
		if vn.Kind == yaml.ScalarNode {
			d.cfg.Vars[name] = []string{vn.Value}
			return
		}
		d.cfg.Vars[name] = d.strList(vn, path, "values")
	})
}

func (d *decoder) http(n *yaml.Node) {
	d.fields(n, "http", httpKeys, func(k string, v *yaml.Node) {
		path := join("http", k)
		switch k {
		case "maxConnsPerHost":
			d.cfg.HTTP.MaxConnsPerHost = d.int(v, path)
		case "http2":
			d.cfg.HTTP.HTTP2 = d.bool(v, path)
		case "insecure":
			d.cfg.HTTP.Insecure = d.bool(v, path)
		}
	})
}

func (d *decoder) fault(n *yaml.Node, key string) {
	f := Fault{}
	d.fields(n, key, faultKeys, func(k string, v *yaml.Node) {
		path := join(key, k)
		switch k {
		case "at":
			f.At = d.duration(v, path)
		case "freeze":
			f.Kind, f.For = FaultFreeze, d.duration(v, path)
		case "cpu":
			f.CPU = d.float(v, path)
		case "for":
			f.For = d.duration(v, path)
		case "target":
			f.Target = d.str(v, path)
		}
	})
	if f.Kind == "" && f.CPU != 0 {
		f.Kind = FaultCPU
	}
	d.cfg.Faults = append(d.cfg.Faults, f)
}

func (d *decoder) scenario(name string, kn, n *yaml.Node) {
	key := join("scenarios", name)
	sc := Scenario{Name: name, GracefulStop: DefaultGracefulStop}
	exec, execNode := executorOf(n)
	keys := append([]string(nil), commonKeys...)
	if ek, ok := executorKeys[exec]; ok {
		keys = append(keys, ek...)
	} else {
		// With the executor unknown or missing, so is which keys belong:
		// any executor's is taken, so that the one mistake is the one error.
		for _, ek := range executorKeys {
			keys = append(keys, ek...)
		}
	}
	values := map[string]*yaml.Node{}
	d.fieldsOf(exec, n, key, keys, func(k string, v *yaml.Node) {
		path := join(key, k)
		switch k {
		case "executor":
			if _, ok := executorKeys[exec]; !ok {
				d.fail(v, path, "unknown executor %q%s", d.str(v, path), suggestExecutor(exec))
			}
		case "startTime":
			sc.StartTime = d.duration(v, path)
		case "gracefulStop":
			sc.GracefulStop = d.duration(v, path)
		case "tags":
			sc.Tags = d.strMap(v, path)
		case "requests":
			d.items(v, path, "requests", func(p string, rn *yaml.Node) { sc.Requests = append(sc.Requests, d.request(rn, p)) })
		default:
			values[k] = v
		}
	})
	if n.Kind == yaml.MappingNode && execNode == nil {
		d.fail(kn, key, "executor is missing; set executor: to one of %s", strings.Join(Executors, ", "))
	}
	sc.Executor = d.executor(exec, key, values)
	d.cfg.Scenarios = append(d.cfg.Scenarios, sc)
}

// suggestExecutor names the executor closest to a misspelt one, or lists them.
func suggestExecutor(kind string) string {
	if hint := suggest(kind, Executors); strings.HasPrefix(hint, "; did you mean") {
		return hint
	}
	return "; use one of " + strings.Join(Executors, ", ")
}

// executorOf peeks at a scenario's executor, which decides its other keys.
func executorOf(n *yaml.Node) (string, *yaml.Node) {
	if n.Kind != yaml.MappingNode {
		return "", nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == "executor" {
			return n.Content[i+1].Value, n.Content[i+1]
		}
	}
	return "", nil
}

// executor builds the named executor's settings from its keys' values, with
// load's defaults (WithDefaults). nil when unknown.
func (d *decoder) executor(kind, key string, v map[string]*yaml.Node) load.Executor {
	num := func(k string) float64 {
		return ifSet(v, k, 0, func(n *yaml.Node) float64 { return d.float(n, join(key, k)) })
	}
	whole := func(k string) int { return ifSet(v, k, 0, func(n *yaml.Node) int { return d.int(n, join(key, k)) }) }
	dur := func(k string, def time.Duration) time.Duration {
		return ifSet(v, k, def, func(n *yaml.Node) time.Duration { return d.duration(n, join(key, k)) })
	}
	stages := func() []load.Stage {
		return ifSet(v, "stages", nil, func(n *yaml.Node) []load.Stage { return d.stages(n, join(key, "stages")) })
	}
	// Defaults (timeUnit, preAllocatedVUs, maxVUs) are load's, applied as for flags.
	switch kind {
	case ConstantArrivalRate:
		return load.ConstantArrivalRate{Rate: num("rate"), TimeUnit: dur("timeUnit", 0),
			Duration: dur("duration", 0), PreAllocatedVUs: whole("preAllocatedVUs"), MaxVUs: whole("maxVUs")}.WithDefaults()
	case RampingArrivalRate:
		return load.RampingArrivalRate{StartRate: num("startRate"), TimeUnit: dur("timeUnit", 0),
			Stages: stages(), PreAllocatedVUs: whole("preAllocatedVUs"), MaxVUs: whole("maxVUs")}.WithDefaults()
	case ConstantVUs:
		return load.ConstantVUs{VUs: whole("vus"), Duration: dur("duration", 0), Think: dur("think", 0)}
	case RampingVUs:
		return load.RampingVUs{StartVUs: whole("startVUs"), Stages: stages(), Think: dur("think", 0)}
	}
	return nil
}

// ifSet is get(v[k]) when k was given, else def.
func ifSet[T any](v map[string]*yaml.Node, k string, def T, get func(*yaml.Node) T) T {
	if n, ok := v[k]; ok {
		return get(n)
	}
	return def
}

func (d *decoder) stages(n *yaml.Node, key string) []load.Stage {
	var out []load.Stage
	d.items(n, key, "stages such as {duration: 30s, target: 100}", func(path string, sn *yaml.Node) {
		var st load.Stage
		var hasDur, hasTarget bool
		d.fields(sn, path, stageKeys, func(k string, v *yaml.Node) {
			switch k {
			case "duration":
				st.Duration, hasDur = d.duration(v, join(path, k)), true
			case "target":
				st.Target, hasTarget = d.float(v, join(path, k)), true
			}
		})
		if sn.Kind == yaml.MappingNode && !hasDur {
			d.fail(sn, path, "stage has no duration; add duration: 30s (how long to ramp to target)")
		}
		if sn.Kind == yaml.MappingNode && !hasTarget {
			d.fail(sn, path, "stage has no target; add target: 100 (the rate or VUs to reach)")
		}
		out = append(out, st)
	})
	return out
}

func (d *decoder) request(n *yaml.Node, key string) request.Spec {
	var r request.Spec
	d.fields(n, key, requestKeys, func(k string, v *yaml.Node) {
		path := join(key, k)
		switch k {
		case "name":
			r.Name = d.str(v, path)
		case "method":
			r.Method = d.str(v, path)
		case "url":
			r.URL = d.str(v, path)
		case "headers":
			d.entries(v, path, "header names to values", func(h string, _, hv *yaml.Node) {
				r.Headers = append(r.Headers, request.Header{Key: h, Value: d.str(hv, join(path, h))})
			})
		case "body":
			r.Body = d.str(v, path)
		case "weight":
			r.Weight = d.int(v, path)
		case "timeout":
			r.Timeout = d.duration(v, path)
		}
	})
	if n.Kind == yaml.MappingNode && r.URL == "" && !hasKey(n, "url") {
		d.fail(n, key, "request has no url; add url: http://host:port/path")
	}
	return r
}

// fieldsOf is fields for a scenario: a key of another executor is named as such.
func (d *decoder) fieldsOf(exec string, n *yaml.Node, key string, keys []string, set func(string, *yaml.Node)) {
	hint := func(k string) string {
		if _, ok := executorKeys[exec]; !ok {
			return ""
		}
		for _, other := range Executors {
			if contains(executorKeys[other], k) {
				return fmt.Sprintf("%s is a key of %s, not %s, which takes %s", k, other, exec, strings.Join(executorKeys[exec], ", "))
			}
		}
		return ""
	}
	d.fieldsHint(n, key, keys, hint, set)
}

func hasKey(n *yaml.Node, k string) bool {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == k {
			return true
		}
	}
	return false
}
