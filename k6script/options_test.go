package k6script

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/knee-dev/knee/load"
)

func i64(n int64) *int64 { return &n }

func TestPlanShortcutsAndPrecedence(t *testing.T) {
	d := func(s string) *time.Duration { v, _ := time.ParseDuration(s); return &v }
	cases := []struct {
		name  string
		opts  string
		ov    Overrides
		want  load.Executor
		iters int64
	}{
		{"no options: 1 VU, 1 iteration", `{}`, Overrides{}, load.ConstantVUs{VUs: 1, Duration: 10 * time.Minute}, 1},
		// k6 v1.8.1 ignores vus without iterations, duration or stages,
		// with a warning (execution_config_shortcuts.go): 1 iteration, 1 VU.
		{"vus alone: 1 VU, 1 iteration", `{"vus": 3}`, Overrides{}, load.ConstantVUs{VUs: 1, Duration: 10 * time.Minute}, 1},
		{"--vus alone: the same", `{}`, Overrides{VUs: i64(4)}, load.ConstantVUs{VUs: 1, Duration: 10 * time.Minute}, 1},
		{"vus and duration", `{"vus": 5, "duration": "30s"}`, Overrides{}, load.ConstantVUs{VUs: 5, Duration: 30 * time.Second}, 0},
		{"duration in ms", `{"vus": 2, "duration": 1500}`, Overrides{}, load.ConstantVUs{VUs: 2, Duration: 1500 * time.Millisecond}, 0},
		{"iterations shared by vus", `{"vus": 3, "iterations": 10}`, Overrides{}, load.ConstantVUs{VUs: 3, Duration: 10 * time.Minute}, 10},
		{"stages start at vus", `{"stages": [{"duration": "10s", "target": 5}, {"duration": "1d", "target": 0}]}`, Overrides{},
			load.RampingVUs{StartVUs: 1, Stages: []load.Stage{{Duration: 10 * time.Second, Target: 5}, {Duration: 24 * time.Hour}}}, 0},
		{"--vus replaces the script's vus only", `{"vus": 5, "duration": "30s"}`, Overrides{VUs: i64(7)}, load.ConstantVUs{VUs: 7, Duration: 30 * time.Second}, 0},
		{"--duration replaces the script's scenarios", `{"scenarios": {"a": {"executor": "constant-arrival-rate", "rate": 10, "duration": "1m", "preAllocatedVUs": 2}}}`,
			Overrides{Duration: d("5s"), VUs: i64(4)}, load.ConstantVUs{VUs: 4, Duration: 5 * time.Second}, 0},
		{"--iterations replaces the script's duration", `{"vus": 2, "duration": "1m"}`, Overrides{Iterations: i64(3)}, load.ConstantVUs{VUs: 2, Duration: 10 * time.Minute}, 3},
		{"--stage replaces the script's iterations", `{"iterations": 9}`, Overrides{Stages: []load.Stage{{Duration: time.Second, Target: 2}}},
			load.RampingVUs{StartVUs: 1, Stages: []load.Stage{{Duration: time.Second, Target: 2}}}, 0},
		{"per-vu-iterations", `{"scenarios": {"p": {"executor": "per-vu-iterations", "vus": 4, "iterations": 3, "maxDuration": "20s"}}}`, Overrides{},
			load.ConstantVUs{VUs: 4, Duration: 20 * time.Second}, 12},
		{"constant-arrival-rate", `{"scenarios": {"open": {"executor": "constant-arrival-rate", "rate": 200, "timeUnit": "1s", "duration": "60s", "preAllocatedVUs": 50, "maxVUs": 2000}}}`, Overrides{},
			load.ConstantArrivalRate{Rate: 200, TimeUnit: time.Second, Duration: time.Minute, PreAllocatedVUs: 50, MaxVUs: 2000}, 0},
		{"ramping-arrival-rate", `{"scenarios": {"s": {"executor": "ramping-arrival-rate", "startRate": 100, "timeUnit": "1m", "preAllocatedVUs": 5, "stages": [{"target": 200, "duration": "1s"}]}}}`, Overrides{},
			load.RampingArrivalRate{StartRate: 100, TimeUnit: time.Minute, PreAllocatedVUs: 5, Stages: []load.Stage{{Duration: time.Second, Target: 200}}}, 0},
		// k6 reads these as null.Int (guregu/null.v3), which takes a string
		// of an integer, "" leaving the option unset: vus: __ENV.VUS.
		{"integers as strings", `{"vus": "3", "iterations": "10"}`, Overrides{}, load.ConstantVUs{VUs: 3, Duration: 10 * time.Minute}, 10},
		{"an empty string leaves it unset", `{"vus": "", "iterations": "4"}`, Overrides{}, load.ConstantVUs{VUs: 1, Duration: 10 * time.Minute}, 4},
		{"stage targets as strings", `{"stages": [{"duration": "10s", "target": "5"}]}`, Overrides{},
			load.RampingVUs{StartVUs: 1, Stages: []load.Stage{{Duration: 10 * time.Second, Target: 5}}}, 0},
		{"a scenario's integers as strings", `{"scenarios": {"s": {"executor": "ramping-arrival-rate", "startRate": "100", "timeUnit": "1m", "preAllocatedVUs": "5", "maxVUs": "", "stages": [{"target": "200", "duration": "1s"}]}}}`, Overrides{},
			load.RampingArrivalRate{StartRate: 100, TimeUnit: time.Minute, PreAllocatedVUs: 5, Stages: []load.Stage{{Duration: time.Second, Target: 200}}}, 0},
		{"a per-vu scenario's as strings", `{"scenarios": {"p": {"executor": "per-vu-iterations", "vus": "4", "iterations": "3", "maxDuration": "20s"}}}`, Overrides{},
			load.ConstantVUs{VUs: 4, Duration: 20 * time.Second}, 12},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o, err := DecodeOptions([]byte(c.opts))
			if err != nil {
				t.Fatal(err)
			}
			p, err := o.Plan("s.js", c.ov)
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Config.Scenarios) != 1 {
				t.Fatalf("%d scenarios; want 1", len(p.Config.Scenarios))
			}
			sc := p.Config.Scenarios[0]
			if got := sc.Executor; !equalExecutor(got, c.want) {
				t.Errorf("executor %#v; want %#v", got, c.want)
			}
			if got := p.Scenarios[sc.Name].Iterations; got != c.iters {
				t.Errorf("iteration count %d; want %d", got, c.iters)
			}
			if ignored := slices.ContainsFunc(p.Notes, func(n string) bool { return strings.Contains(n, "is ignored: it only works with") }); ignored != strings.Contains(c.name, "vus alone") {
				t.Errorf("notes %q; want the ignored vus said exactly when vus is alone", p.Notes)
			}
			if sc.GracefulStop != 30*time.Second {
				t.Errorf("gracefulStop %v; want k6's default 30s", sc.GracefulStop)
			}
		})
	}
}

func equalExecutor(a, b load.Executor) bool {
	return strings.TrimSpace(fmtExec(a)) == strings.TrimSpace(fmtExec(b))
}

func fmtExec(e load.Executor) string { return strings.ReplaceAll(sprint(e), " ", "") }

func TestPlanScenarioFields(t *testing.T) {
	o, err := DecodeOptions([]byte(`{"scenarios": {
		"b": {"executor": "constant-vus", "vus": 2, "duration": "10s", "exec": "browse", "startTime": "5s", "gracefulStop": "2s", "env": {"X": "1"}, "tags": {"t": "v"}},
		"a": {"executor": "ramping-vus", "stages": [{"duration": "3s", "target": 4}]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	p, err := o.Plan("s.js", Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Config.Scenarios) != 2 || p.Config.Scenarios[0].Name != "a" || p.Config.Scenarios[1].Name != "b" {
		t.Fatalf("scenarios %+v; want a then b", p.Config.Scenarios)
	}
	b := p.Config.Scenarios[1]
	if b.StartTime != 5*time.Second || b.GracefulStop != 2*time.Second || b.Tags["t"] != "v" {
		t.Errorf("b: startTime %v gracefulStop %v tags %v", b.StartTime, b.GracefulStop, b.Tags)
	}
	if sp := p.Scenarios["b"]; sp.Exec != "browse" || sp.Env["X"] != "1" {
		t.Errorf("b's plan %+v; want exec browse, env X=1", sp)
	}
	if sp := p.Scenarios["a"]; sp.Exec != "default" {
		t.Errorf("a's exec %q; want default", sp.Exec)
	}
}

func TestPlanErrors(t *testing.T) {
	cases := []struct{ opts, want string }{
		{`{"scenarios": {"x": {"executor": "constant-vus", "vus": 1, "duraton": "1s"}}}`, `unknown field "duraton"`},
		{`{"scenarios": {"x": {"executor": "warp-speed"}}}`, `executor "warp-speed" is not one knee knows`},
		{`{"scenarios": {"x": {"executor": "externally-controlled"}}}`, "externally-controlled executor is not supported"},
		{`{"scenarios": {"x": {"vus": 1}}}`, "no executor"},
		{`{"scenarios": {"x": {"executor": "constant-arrival-rate", "duration": "1s", "preAllocatedVUs": 1}}}`, "rate is 0"},
		{`{"duration": "1s", "scenarios": {"x": {"executor": "constant-vus", "duration": "1s"}}}`, "scenarios and the duration/iterations/stages shortcuts"},
		{`{"scenarios": {"x": {"executor": "shared-iterations"}, "y": {"executor": "constant-vus", "duration": "1s"}}}`, "iteration-count executor runs only as the script's one scenario"},
		{`{"duration": "soon"}`, `duration "soon"`},
		{`{"vus": "many"}`, "vus is a string"},
		{`{"thresholds": {"http_req_duration": [{"abortOnFail": true}]}}`, "a threshold is a string"},
		{`{"hosts": {"books.local": "127.0.0.1:5080"}}`, "options.hosts is not supported by knee: knee resolves names through the system; put the address in the URL"},
		{`{"rps": 100, "noConnectionReuse": true}`, "options.noConnectionReuse is not supported by knee: knee keeps connections alive, as browsers and k6 do by default; remove it; options.rps is not supported by knee"},
		// k6's shared-iterations refuses fewer iterations than VUs, from the
		// shortcut as from a scenario; per-vu-iterations has no such rule.
		{`{"vus": 5, "iterations": 2}`, "options: the number of iterations (2) can't be less than the number of VUs (5)"},
		{`{"scenarios": {"x": {"executor": "shared-iterations", "vus": 3, "iterations": 1}}}`, "options.scenarios.x: the number of iterations (1) can't be less than the number of VUs (3)"},
	}
	for _, c := range cases {
		o, err := DecodeOptions([]byte(c.opts))
		if err == nil {
			_, err = o.Plan("s.js", Overrides{})
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v; want one containing %q", c.opts, err, c.want)
		}
	}
}

// abortOnFail and delayAbortEval are kept per threshold, keyed as
// "metric: expression".
func TestPlanAbortOnFail(t *testing.T) {
	o, err := DecodeOptions([]byte(`{"vus": 1, "duration": "1s", "thresholds": {
		"http_req_duration": ["p(99)<3000", {"threshold": "p(95)<200", "abortOnFail": true, "delayAbortEval": "10s"}],
		"checks": [{"threshold": "rate>0.9", "abortOnFail": true}],
		"http_req_failed": [{"threshold": "rate<0.01"}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	p, err := o.Plan("s.js", Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]time.Duration{"http_req_duration: p(95)<200": 10 * time.Second, "checks: rate>0.9": 0}
	if !reflect.DeepEqual(p.AbortOnFail, want) {
		t.Errorf("abortOnFail %v, want %v", p.AbortOnFail, want)
	}
	if got := p.Thresholds["http_req_duration"]; !reflect.DeepEqual(got, []string{"p(99)<3000", "p(95)<200"}) {
		t.Errorf("http_req_duration thresholds %v", got)
	}
}

func TestParseDuration(t *testing.T) {
	for in, want := range map[string]time.Duration{"30s": 30 * time.Second, "1m30s": 90 * time.Second, "1d": 24 * time.Hour,
		"1d2h": 26 * time.Hour, "2.5": 2500 * time.Microsecond, "500ms": 500 * time.Millisecond,
		"1500": 1500 * time.Millisecond} { // a bare number is milliseconds (k6's ParseExtendedDuration)
		got, err := ParseDuration(in)
		if err != nil || got != want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "-1s", "1x", "d", "-3"} {
		if _, err := ParseDuration(bad); err == nil {
			t.Errorf("ParseDuration(%q) succeeded; want an error", bad)
		}
	}
}

// options.systemTags is taken when it is k6's default set (in any order,
// empty, or with names k6 does not know, which k6 drops), refused
// otherwise: k6 would leave tags off its samples, or add others, and a
// threshold on a tag would select other samples than knee's. The
// refusal is placed at the key.
func TestSystemTagsOnlyK6Defaults(t *testing.T) {
	all := `"proto","subproto","status","method","url","name","group","check","error","error_code","tls_version","scenario","service","expected_response"`
	reversed := `"expected_response","service","scenario","tls_version","error_code","error","check","group","name","url","method","status","subproto","proto"`
	for _, tt := range []struct {
		name, tags string
		refused    bool
	}{
		{"k6's default set", "[" + all + "]", false},
		{"in another order", "[" + reversed + "]", false},
		{"empty: k6's default", "[]", false},
		{"null: k6's default", "null", false},
		{"with a name k6 drops", "[" + all + `,"nope"]`, false},
		{"without url", `["proto","status","method"]`, true},
		{"with vu added", "[" + all + `,"vu"]`, true},
		{"with ip added", "[" + all + `,"ip"]`, true},
		{"not a list", `"status,method"`, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeOptions([]byte(`{"systemTags": ` + tt.tags + `}`))
			if got := err != nil; got != tt.refused {
				t.Errorf("refused %v (%v); want %v", got, err, tt.refused)
			}
		})
	}
	path := writeScript(t, "s.js", map[string]string{"s.js": "export const options = {\n  vus: 1,\n  systemTags: ['status'],\n};\nexport default function () {}\n"})
	_, err := Load(context.Background(), path, Config{})
	if err == nil || !strings.Contains(err.Error(), path+":3:3: options.systemTags is not supported by knee") {
		t.Errorf("Load: %v; want the refusal at %s:3:3", err, path)
	}
}
