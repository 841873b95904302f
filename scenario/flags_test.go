package scenario

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/knee-dev/knee/load"
	"github.com/knee-dev/knee/request"
)

func TestFromFlags(t *testing.T) {
	const url = "http://127.0.0.1:5080/api/books/{isbn}?run={vu}-{iter}"
	tests := []struct {
		name     string
		flags    Flags
		executor load.Executor
	}{
		// Defaults: 50 pre-allocated; maxVUs covers a 10 s stall at the peak
		// rate, at least 1,000: 200/s × 10 s = 2,000.
		{"open by default", Flags{URL: url, Rate: 200, Duration: time.Minute, Vars: []string{"isbn=1,2"}},
			load.ConstantArrivalRate{Rate: 200, TimeUnit: time.Second, Duration: time.Minute, PreAllocatedVUs: 50, MaxVUs: 2000}},
		{"slow open by default", Flags{URL: url, Rate: 50, Duration: time.Minute, Vars: []string{"isbn=1,2"}},
			load.ConstantArrivalRate{Rate: 50, TimeUnit: time.Second, Duration: time.Minute, PreAllocatedVUs: 50, MaxVUs: 1000}},
		{"open with pool", Flags{URL: url, Rate: 5, TimeUnit: time.Minute, Duration: time.Hour, MaxVUs: 10, Vars: []string{"isbn=1"}},
			load.ConstantArrivalRate{Rate: 5, TimeUnit: time.Minute, Duration: time.Hour, PreAllocatedVUs: 10, MaxVUs: 10}},
		{"closed from --vus", Flags{URL: url, VUs: 20, Think: 100 * time.Millisecond, Duration: time.Minute, Vars: []string{"isbn=1"}},
			load.ConstantVUs{VUs: 20, Duration: time.Minute, Think: 100 * time.Millisecond}},
		{"ramp from --stages", Flags{URL: url, StartRate: 100, Stages: "30s:100, 1m:300", PreAllocatedVUs: 80, Vars: []string{"isbn=1"}},
			load.RampingArrivalRate{StartRate: 100, TimeUnit: time.Second, PreAllocatedVUs: 80, MaxVUs: 3000, // peak 300/s × 10 s
				Stages: []load.Stage{{Duration: 30 * time.Second, Target: 100}, {Duration: time.Minute, Target: 300}}}},
		{"ramping vus", Flags{URL: url, VUs: 1, Stages: "10s:5", Vars: []string{"isbn=1"}},
			load.RampingVUs{StartVUs: 1, Stages: []load.Stage{{Duration: 10 * time.Second, Target: 5}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := FromFlags(tt.flags)
			if err != nil {
				t.Fatal(err)
			}
			if len(cfg.Scenarios) != 1 || !reflect.DeepEqual(cfg.Scenarios[0].Executor, tt.executor) {
				t.Errorf("executor %+v, want %+v", cfg.Scenarios[0].Executor, tt.executor)
			}
			if sc := cfg.Scenarios[0]; sc.Name != FlagScenario || sc.GracefulStop != DefaultGracefulStop {
				t.Errorf("name %q graceful stop %v", sc.Name, sc.GracefulStop)
			}
		})
	}
}

func TestFromFlagsRequestAndTransport(t *testing.T) {
	cfg, err := FromFlags(Flags{
		URL: "https://h/books", Method: "POST", Body: `{"isbn":"{isbn}"}`, Name: "create",
		Headers: []string{"Content-Type: application/json", "X-Trace:  a:b "}, Vars: []string{"isbn=1, 2", "isbn=3"},
		Timeout: 5 * time.Second, MaxConns: 8, HTTP2: true, Insecure: true, Seed: 42,
		Rate: 1, Duration: time.Second, Thresholds: []string{"p(99)<1s"},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := request.Spec{Name: "create", Method: "POST", URL: "https://h/books", Body: `{"isbn":"{isbn}"}`, Timeout: 5 * time.Second,
		Headers: []request.Header{{Key: "Content-Type", Value: "application/json"}, {Key: "X-Trace", Value: "a:b"}}}
	if !reflect.DeepEqual(cfg.Scenarios[0].Requests, []request.Spec{want}) {
		t.Errorf("requests %+v, want %+v", cfg.Scenarios[0].Requests, want)
	}
	if !reflect.DeepEqual(cfg.Vars, map[string][]string{"isbn": {"1", "2", "3"}}) {
		t.Errorf("vars %v", cfg.Vars)
	}
	if cfg.HTTP != (request.TransportOptions{MaxConnsPerHost: 8, HTTP2: true, Insecure: true}) || cfg.Seed != 42 {
		t.Errorf("http %+v seed %d", cfg.HTTP, cfg.Seed)
	}
	if len(cfg.Thresholds) != 1 {
		t.Errorf("thresholds %v", cfg.Thresholds)
	}
}

func TestFromFlagsErrorsNameTheFlag(t *testing.T) {
	ok := Flags{URL: "http://h/", Rate: 10, Duration: time.Second}
	with := func(change func(*Flags)) Flags { f := ok; change(&f); return f }
	tests := []struct {
		name    string
		flags   Flags
		keys    []string
		mention string
	}{
		{"zero rate", with(func(f *Flags) { f.Rate = 0; f.Executor = ConstantArrivalRate }), []string{"--rate"}, "rate is 0; set it to the iterations to start per timeUnit, more than 0"},
		{"no url", with(func(f *Flags) { f.URL = "" }), []string{"--url"}, "give --url"},
		{"bad url", with(func(f *Flags) { f.URL = "h/x" }), []string{"--url"}, "http://"},
		{"unknown placeholder", with(func(f *Flags) { f.URL = "http://h/{isbn}" }), []string{"--url"}, "add --var isbn="},
		{"bad stages", Flags{URL: "http://h/", Stages: "30s-100"}, []string{"--stages"}, "duration:target"},
		{"bad stage duration", Flags{URL: "http://h/", Stages: "30:100"}, []string{"--stages"}, "not a duration"},
		{"bad header", with(func(f *Flags) { f.Headers = []string{"NoColon"} }), []string{"--header"}, "Name: value"},
		{"bad header name", with(func(f *Flags) { f.Headers = []string{"Bad Name: v"} }), []string{"--header"}, "header name"},
		{"bad var", with(func(f *Flags) { f.Vars = []string{"isbn"} }), []string{"--var"}, "name=v1,v2"},
		{"reserved var", with(func(f *Flags) { f.Vars = []string{"vu=1"} }), []string{"--var"}, "reserved"},
		{"think on open model", with(func(f *Flags) { f.Think = time.Second }), []string{"--think"}, "does not apply to constant-arrival-rate"},
		{"rate on closed model", with(func(f *Flags) { f.Executor = ConstantVUs; f.VUs = 1 }), []string{"--rate"}, "does not apply"},
		{"unknown executor", with(func(f *Flags) { f.Executor = "open" }), []string{"--executor"}, "unknown executor"},
		{"negative timeout", with(func(f *Flags) { f.Timeout = -time.Second }), []string{"--timeout"}, "negative"},
		{"negative max conns", with(func(f *Flags) { f.MaxConns = -1 }), []string{"--max-conns"}, "negative"},
		{"max below pre", with(func(f *Flags) { f.PreAllocatedVUs = 9; f.MaxVUs = 3 }), []string{"--max-vus"}, "maxVUs (3) is below preAllocatedVUs (9)"},
		{"several at once", Flags{Rate: -1, Duration: time.Second, Think: 1}, []string{"--think", "--url", "--rate"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := FromFlags(tt.flags)
			where, msg := problems(t, err)
			var keys []string
			for _, w := range where {
				keys = append(keys, w[strings.Index(w, ":")+1:])
			}
			if strings.Join(keys, " ") != strings.Join(tt.keys, " ") {
				t.Errorf("problems at %v, want %v\n%s", keys, tt.keys, msg)
			}
			if !strings.Contains(msg, tt.mention) || !strings.HasPrefix(msg, "--") {
				t.Errorf("message should start with the flag and mention %q:\n%s", tt.mention, msg)
			}
		})
	}
}

func TestParseStages(t *testing.T) {
	got, err := ParseStages("30s:100,1m30s:0.5")
	want := []load.Stage{{Duration: 30 * time.Second, Target: 100}, {Duration: 90 * time.Second, Target: 0.5}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("ParseStages = %v, %v; want %v", got, err, want)
	}
	if got, err := ParseStages(" "); got != nil || err != nil {
		t.Errorf("empty: %v, %v", got, err)
	}
}

// A header without its colon may be a credential ("Authorization Bearer
// X"): the error says which one and how to fix it, never what it holds.
func TestHeaderWithoutColonNotEchoed(t *testing.T) {
	f := Flags{URL: "http://h/", Rate: 10, Duration: time.Second, Headers: []string{"Accept: */*", "Authorization Bearer s3cr3t-token"}}
	_, err := FromFlags(f)
	if err == nil || !strings.Contains(err.Error(), "header 2 (33 characters) has no colon") || strings.Contains(err.Error(), "s3cr3t") {
		t.Fatalf("error %v; want header 2 named without its value", err)
	}
}
