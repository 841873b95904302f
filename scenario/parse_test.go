package scenario

import (
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/knee-dev/knee/load"
	"github.com/knee-dev/knee/request"
)

const fullFile = `scenarios:
  open:
    executor: constant-arrival-rate   # ramping-arrival-rate, constant-vus, ramping-vus
    rate: 200
    timeUnit: 1s
    duration: 60s
    preAllocatedVUs: 50
    maxVUs: 2000
    startTime: 0s
    gracefulStop: 10s
    tags: {team: books}
    requests:
      - name: GET /api/books/{isbn}
        method: GET
        url: http://127.0.0.1:5080/api/books/{isbn}?run={vu}-{iter}
        headers: {Accept: application/json, X-Run: "{vu}"}
        body: ""
        weight: 3
        timeout: 2s
      - url: http://127.0.0.1:5080/api/books
  closed: {executor: constant-vus, vus: 20, think: 100ms, duration: 1m30s, requests: [{url: "http://127.0.0.1:5080/"}]}
  ramp:
    executor: ramping-arrival-rate
    startRate: 100
    stages: [{target: 300, duration: 30s}, {duration: 1m, target: 0}]
    preAllocatedVUs: 10
    requests: [{url: "http://127.0.0.1:5080/"}]
  steps: {executor: ramping-vus, startVUs: 1, stages: [{duration: 10s, target: 5}], requests: [{url: "http://h/"}]}
vars: {isbn: [9780441172719, 9780261102217], one: single}
seed: 1
http: {maxConnsPerHost: 64, http2: true, insecure: false}
faults:
  - {at: 30s, freeze: 5s, target: "pid:1234"}
  - {at: 1m, cpu: 0.5, for: 10s, target: "cgroup:/sys/fs/cgroup/cpu/bookstore"}
thresholds: ["p(95)<200ms", "errors<1%"]
`

func TestParseFullFile(t *testing.T) {
	cfg, err := Parse("s.yaml", []byte(fullFile))
	if err != nil {
		t.Fatal(err)
	}
	web := "http://127.0.0.1:5080/"
	want := []Scenario{
		{Name: "open", StartTime: 0, GracefulStop: 10 * time.Second, Tags: map[string]string{"team": "books"},
			Executor: load.ConstantArrivalRate{Rate: 200, TimeUnit: time.Second, Duration: time.Minute, PreAllocatedVUs: 50, MaxVUs: 2000},
			Requests: []request.Spec{
				{Name: "GET /api/books/{isbn}", Method: "GET", URL: "http://127.0.0.1:5080/api/books/{isbn}?run={vu}-{iter}",
					Headers: []request.Header{{Key: "Accept", Value: "application/json"}, {Key: "X-Run", Value: "{vu}"}},
					Weight:  3, Timeout: 2 * time.Second},
				{URL: "http://127.0.0.1:5080/api/books"},
			}},
		{Name: "closed", GracefulStop: DefaultGracefulStop, Requests: []request.Spec{{URL: web}},
			Executor: load.ConstantVUs{VUs: 20, Duration: 90 * time.Second, Think: 100 * time.Millisecond}},
		{Name: "ramp", GracefulStop: DefaultGracefulStop, Requests: []request.Spec{{URL: web}},
			Executor: load.RampingArrivalRate{StartRate: 100, TimeUnit: time.Second, PreAllocatedVUs: 10, MaxVUs: 3000, // maxVUs default: peak 300/s × 10 s
				Stages: []load.Stage{{Duration: 30 * time.Second, Target: 300}, {Duration: time.Minute, Target: 0}}}},
		{Name: "steps", GracefulStop: DefaultGracefulStop, Requests: []request.Spec{{URL: "http://h/"}},
			Executor: load.RampingVUs{StartVUs: 1, Stages: []load.Stage{{Duration: 10 * time.Second, Target: 5}}}},
	}
	if !reflect.DeepEqual(cfg.Scenarios, want) {
		t.Errorf("scenarios\n got %+v\nwant %+v", cfg.Scenarios, want)
	}
	if v := map[string][]string{"isbn": {"9780441172719", "9780261102217"}, "one": {"single"}}; !reflect.DeepEqual(cfg.Vars, v) {
		t.Errorf("vars %v, want %v", cfg.Vars, v)
	}
	if cfg.Seed != 1 || cfg.HTTP != (request.TransportOptions{MaxConnsPerHost: 64, HTTP2: true}) {
		t.Errorf("seed %d http %+v", cfg.Seed, cfg.HTTP)
	}
	faults := []Fault{
		{At: 30 * time.Second, Kind: FaultFreeze, For: 5 * time.Second, Target: "pid:1234"},
		{At: time.Minute, Kind: FaultCPU, CPU: 0.5, For: 10 * time.Second, Target: "cgroup:/sys/fs/cgroup/cpu/bookstore"},
	}
	if !reflect.DeepEqual(cfg.Faults, faults) {
		t.Errorf("faults %+v, want %+v", cfg.Faults, faults)
	}
	if !reflect.DeepEqual(cfg.Thresholds, []string{"p(95)<200ms", "errors<1%"}) {
		t.Errorf("thresholds %q", cfg.Thresholds)
	}
	if m := []string{cfg.Scenarios[0].Model(), cfg.Scenarios[1].Model()}; m[0] != "open" || m[1] != "closed" {
		t.Errorf("models %v", m)
	}
}

func TestReadFile(t *testing.T) {
	fsys := fstest.MapFS{"s.yaml": {Data: []byte(fullFile)}}
	if _, err := ReadFile(fsys, "s.yaml"); err != nil {
		t.Error(err)
	}
	if _, err := ReadFile(fsys, "missing.yaml"); err == nil {
		t.Error("missing file: want an error")
	}
}

func TestValidateChangesNothing(t *testing.T) {
	cfg, err := Parse("s.yaml", []byte(fullFile))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Scenarios[1].Executor = load.ConstantVUs{} // invalid on purpose
	before := fmt.Sprintf("%#v", *cfg)
	if errs := cfg.Validate(); len(errs) != 2 {
		t.Errorf("want 2 problems (vus, duration), got %v", errs)
	}
	if after := fmt.Sprintf("%#v", *cfg); after != before {
		t.Error("Validate changed the config")
	}
}

// problems flattens a joined error into "line:key" strings and messages.
func problems(t *testing.T, err error) ([]string, string) {
	t.Helper()
	if err == nil {
		t.Fatal("want an error")
	}
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	var where []string
	for _, e := range errs {
		var se *Error
		if !errors.As(e, &se) {
			t.Fatalf("%v is not a *Error", e)
		}
		where = append(where, fmt.Sprintf("%d:%s", se.Line, se.Key))
	}
	return where, err.Error()
}

func TestParseErrors(t *testing.T) {
	const req = "\n    requests: [{url: \"http://h/\"}]"
	tests := []struct {
		name    string
		yaml    string
		where   []string // line:key of every problem, in order
		mention []string
	}{
		{"unknown top key", "scenario: {}", []string{"1:scenario", "1:scenarios"}, []string{"s.yaml:1:1", "did you mean scenarios?"}},
		{"unknown executor key",
			"scenarios:\n  a:\n    executor: constant-arrival-rate\n    rate: 1\n    duration: 1s\n    preAllocatedVUs: 1\n    vus: 5" + req,
			[]string{"7:scenarios.a.vus"}, []string{"vus is a key of constant-vus, not constant-arrival-rate"}},
		{"wrong type", "scenarios:\n  a:\n    executor: constant-vus\n    vus: many\n    duration: 1s" + req,
			[]string{"4:scenarios.a.vus"}, []string{`want a whole number, got "many"`}},
		{"unknown executor", "scenarios:\n  a:\n    executor: constant-rate" + req,
			[]string{"3:scenarios.a.executor"}, []string{"use one of constant-arrival-rate"}},
		{"missing executor", "scenarios:\n  a:\n    vus: 1" + req,
			[]string{"2:scenarios.a"}, []string{"executor is missing"}},
		{"misspelt executor, its keys no further error",
			"scenarios:\n  a:\n    executor: constant-arival-rate\n    rate: 100\n    duration: 10s\n    preAllocatedVUs: 50" + req,
			[]string{"3:scenarios.a.executor"}, []string{`s.yaml:3:15: scenarios.a.executor: unknown executor "constant-arival-rate"; did you mean constant-arrival-rate?`}},
		{"mis-indented key", "scenarios:\n  a:\n    executor: constant-arrival-rate\n    rate: 100\n    duration: 10s\n   preAllocatedVUs: 50" + req,
			[]string{"6:"}, []string{"s.yaml:6:4: not valid YAML: did not find expected key"}},
		{"zero and negative rate, all at once",
			"scenarios:\n  a:\n    executor: constant-arrival-rate\n    rate: 0\n    duration: -1s\n    preAllocatedVUs: 1" + req,
			[]string{"4:scenarios.a.rate", "5:scenarios.a.duration"}, []string{"s.yaml:4:5: scenarios.a.rate: rate is 0; set it to the iterations to start per timeUnit, more than 0"}},
		{"stage without duration",
			"scenarios:\n  a:\n    executor: ramping-arrival-rate\n    preAllocatedVUs: 1\n    stages:\n      - target: 10" + req,
			[]string{"6:scenarios.a.stages[0]"}, []string{"stage has no duration; add duration: 30s"}},
		{"unknown placeholder",
			"scenarios:\n  a:\n    executor: constant-vus\n    vus: 1\n    duration: 1s\n    requests:\n      - url: http://h/{isbn}",
			[]string{"7:scenarios.a.requests[0].url"}, []string{"add --var isbn=", "column 10"}},
		{"bad duration", "scenarios:\n  a:\n    executor: constant-vus\n    vus: 1\n    duration: 100" + req,
			[]string{"5:scenarios.a.duration"}, []string{"use a number with a unit"}},
		{"alias", "x: &d 1s\nscenarios:\n  a:\n    executor: constant-vus\n    vus: 1\n    duration: *d" + req,
			[]string{"1:x", "6:scenarios.a.duration"}, []string{"aliases (*d) are not supported"}},
		{"no requests", "scenarios:\n  a: {executor: constant-vus, vus: 1, duration: 1s}",
			[]string{"2:scenarios.a.requests"}, []string{"no requests"}},
		{"request without url", "scenarios:\n  a: {executor: constant-vus, vus: 1, duration: 1s, requests: [{method: GET}]}",
			[]string{"2:scenarios.a.requests[0]"}, []string{"request has no url"}},
		{"maxVUs below preAllocated",
			"scenarios:\n  a:\n    executor: constant-arrival-rate\n    rate: 1\n    duration: 1s\n    preAllocatedVUs: 5\n    maxVUs: 2" + req,
			[]string{"7:scenarios.a.maxVUs"}, []string{"maxVUs (2) is below preAllocatedVUs (5)"}},
		{"fault target", "scenarios:\n  a: {executor: constant-vus, vus: 1, duration: 1s, requests: [{url: 'http://h/'}]}\nfaults: [{at: 1s, freeze: 1s, target: 1234}]",
			[]string{"3:faults[0].target"}, []string{"write pid:1234"}},
		{"empty var list", "vars: {isbn: []}\nscenarios:\n  a: {executor: constant-vus, vus: 1, duration: 1s, requests: [{url: 'http://h/'}]}",
			[]string{"1:vars"}, []string{"no values"}},
		{"duplicate key", "scenarios:\n  a: {executor: constant-vus, vus: 1, vus: 2, duration: 1s, requests: [{url: 'http://h/'}]}",
			[]string{"2:scenarios.a.vus"}, []string{"given twice"}},
		{"not yaml", "scenarios: [", []string{"1:"}, []string{"not valid YAML"}},
		{"empty", "", []string{"0:"}, []string{"the file is empty"}},
		{"no scenarios", "seed: 1", []string{"1:scenarios"}, []string{"define at least one scenario"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("s.yaml", []byte(tt.yaml))
			where, msg := problems(t, err)
			if strings.Join(where, " ") != strings.Join(tt.where, " ") {
				t.Errorf("problems at %v, want %v\n%s", where, tt.where, msg)
			}
			for _, m := range tt.mention {
				if !strings.Contains(msg, m) {
					t.Errorf("message should mention %q:\n%s", m, msg)
				}
			}
		})
	}
}

func TestValidateWithoutOrigins(t *testing.T) {
	cfg := &Config{Scenarios: []Scenario{{Name: "a", Executor: load.ConstantArrivalRate{TimeUnit: time.Second, Duration: time.Second, PreAllocatedVUs: 1},
		Requests: []request.Spec{{URL: "http://h/"}}}}}
	errs := cfg.Validate()
	if len(errs) != 1 || errs[0].Error() != "scenarios.a.rate: rate is 0; set it to the iterations to start per timeUnit, more than 0" {
		t.Errorf("got %v", errs)
	}
	cfg.Scenarios[0].Executor = nil
	if errs := cfg.Validate(); len(errs) != 1 || !strings.Contains(errs[0].Error(), "scenarios.a.executor: no executor") {
		t.Errorf("got %v", errs)
	}
}

func TestParseBoundsTheErrorList(t *testing.T) {
	_, err := Parse("s.yaml", []byte("scenarios: {a: {executor: constant-vus, vus: 1, duration: 1s, requests: [{url: 'http://h/'}], "+
		strings.Repeat("rate: 1, ", 60)+"}}"))
	where, msg := problems(t, err)
	if len(where) != maxErrors+1 || !strings.HasSuffix(msg, "s.yaml: and 10 more problems") {
		t.Errorf("%d problems, ending %q", len(where), msg[max(len(msg)-40, 0):])
	}
}

// TestReadPathLimit: a scenario file or stdin past limits.Scenario (4 MiB)
// stops there with an error naming it, the limit and the fix, however long
// the input (yes "a: b" | knee run - read 1.2 GB before).
func TestReadPathLimit(t *testing.T) {
	endless := io.LimitReader(neverEnding('a'), 1<<40) // 1 TiB: never read to its end
	_, err := ReadPath(Stdin, endless)
	if err == nil || !strings.Contains(err.Error(), "<stdin>: too large: a scenario file is read up to 4 MiB (fix: ") {
		t.Errorf("error %v, want stdin too large at 4 MiB", err)
	}
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skipf("SKIP the /dev/zero case: %v", err)
	}
	if _, err := ReadPath("/dev/zero", nil); err == nil || !strings.Contains(err.Error(), "/dev/zero: too large") {
		t.Errorf("/dev/zero: %v, want too large", err)
	}
}

type neverEnding byte

func (b neverEnding) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(b)
	}
	return len(p), nil
}
