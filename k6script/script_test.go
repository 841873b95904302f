package k6script

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/knee-dev/knee/load"
)

// writeScript writes files (name -> source) into a fresh directory and
// returns the path of the first name given as main.
func writeScript(t *testing.T, main string, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, src := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, main)
}

func TestLoadErrorsNameFileLineColumn(t *testing.T) {
	cases := []struct {
		name  string
		files map[string]string
		want  []string
	}{
		{"syntax error", map[string]string{"s.js": "export default function () {\n  let x = ;\n}\n"}, []string{"s.js:2:11", "Unexpected"}},
		{"syntax error in an import", map[string]string{"s.js": "import { f } from './lib/f.js';\nexport default function () { f(); }\n",
			"lib/f.js": "export function f() {\n\n  return )\n}\n"}, []string{filepath.Join("lib", "f.js") + ":3:10"}},
		{"WebSockets' Blob.stream", map[string]string{"s.js": "import http from 'k6/http';\nimport { Blob } from 'k6/websockets';\nexport default function () { new Blob([]).stream(); }\n"},
			[]string{"s.js:3:42", "Blob.stream() (k6/websockets) is not supported", "blob.arrayBuffer()"}},
		{"experimental gRPC", map[string]string{"s.js": "import grpc from 'k6/experimental/grpc';\nexport default function () {}\n"}, []string{"s.js:1:18", "has been graduated, use k6/net/grpc"}},
		{"browser", map[string]string{"s.js": "import { browser } from 'k6/browser';\nexport default function () {}\n"}, []string{"s.js:1:25", "browser tests are not supported"}},
		{"experimental", map[string]string{"s.js": "import x from 'k6/experimental/redis';\nexport default function () {}\n"}, []string{"s.js:1:15", "experimental modules are not supported"}},
		{"http import", map[string]string{"s.js": "import { x } from 'http://jslib.k6.io/x/1.0/index.js';\nexport default function () {}\n"},
			[]string{"s.js:1:19", "the schemes of imports are file and https (as in k6), not http"}},
		{"secrets", map[string]string{"s.js": "import secrets from 'k6/secrets';\nexport default function () {}\n"}, []string{"s.js:1:21", "secrets are not supported", "-e NAME=VALUE"}},
		{"unknown k6 module", map[string]string{"s.js": "import x from 'k6/nonsense';\nexport default function () {}\n"}, []string{"s.js:1:15", `"k6/nonsense" is not one knee provides`}},
		{"a summaryTrendStats k6 refuses", map[string]string{"s.js": "export const options = {summaryTrendStats: ['avg', 'p(101)']};\nexport default function () {}\n"},
			[]string{"s.js:1:14", "summaryTrendStats", `"p(101)"`, "0 to 100"}},
		{"init exception", map[string]string{"s.js": "const a = 1;\nnull.boom;\nexport default function () {}\n"}, []string{"s.js:2:", "TypeError"}},
		{"http in init", map[string]string{"s.js": "import http from 'k6/http';\nhttp.get('http://127.0.0.1:1/');\nexport default function () {}\n"},
			[]string{"s.js:2:", "init code", "setup()"}},
		{"a response callback of JavaScript", map[string]string{"s.js": "import http from 'k6/http';\nhttp.setResponseCallback((r) => true);\nexport default function () {}\n"},
			[]string{"s.js:2:", "http.setResponseCallback", "http.expectedStatuses(...) or null"}},
		{"expectedStatuses of a word", map[string]string{"s.js": "import http from 'k6/http';\nhttp.setResponseCallback(http.expectedStatuses(200, 'ok'));\nexport default function () {}\n"},
			[]string{"s.js:2:", "argument 2 (ok)", "{min: N, max: M}"}},
		{"open a missing file", map[string]string{"s.js": "const d = open('./users.csv');\nexport default function () {}\n"}, []string{"s.js:1:", "users.csv", "no such file"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := writeScript(t, "s.js", c.files)
			_, err := Load(context.Background(), path, Config{})
			var se *ScriptError
			if !errors.As(err, &se) {
				t.Fatalf("Load: %v (%T); want a *ScriptError", err, err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestPlanNeedsTheExecFunction(t *testing.T) {
	path := writeScript(t, "s.js", map[string]string{"s.js": "export const options = {scenarios: {a: {executor: 'constant-vus', duration: '1s', exec: 'nope'}}};\nexport default function () {}\n"})
	s, err := Load(context.Background(), path, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Plan(Overrides{}); err == nil || !strings.Contains(err.Error(), `no function "nope"`) {
		t.Errorf("Plan: %v; want the missing exec function named", err)
	}
	path = writeScript(t, "s.js", map[string]string{"s.js": "export function x() {}\n"})
	s, err = Load(context.Background(), path, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Plan(Overrides{}); err == nil || !strings.Contains(err.Error(), "no default function") {
		t.Errorf("Plan: %v; want the missing default function named", err)
	}
}

// samples records what an iteration recorded.
type samples struct {
	mu  sync.Mutex
	all []load.Sample
}

func (s *samples) Record(x load.Sample) { s.mu.Lock(); s.all = append(s.all, x); s.mu.Unlock() }

func okServer(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("X-Method", r.Method)
		switch r.URL.Path {
		case "/slow":
			time.Sleep(20 * time.Millisecond)
		case "/json":
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"token":"t-123","user":{"roles":["a","b"]},"echo":` + quote(string(body)) + `,"ct":` + quote(r.Header.Get("Content-Type")) + `,"auth":` + quote(r.Header.Get("Authorization")) + `}`))
			return
		case "/missing":
			w.WriteHeader(http.StatusNotFound)
		}
		w.Write([]byte("ok"))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func quote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"` }

func loadScript(t *testing.T, src string, env map[string]string) *Script {
	t.Helper()
	path := writeScript(t, "s.js", map[string]string{"s.js": src})
	s, err := Load(context.Background(), path, Config{Env: env})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// The open model: every request of an iteration is charged the
// iteration's start lag. An iteration that started 50 ms late sends two
// requests; each one's latency is its service time plus exactly 50 ms.
func TestOpenModelChargesTheStartLag(t *testing.T) {
	srv := okServer(t)
	s := loadScript(t, `import http from 'k6/http';
import { sleep } from 'k6';
export default function () {
  http.get(__ENV.BASE + '/slow', { tags: { name: 'first' } });
  sleep(0.03);
  http.get(__ENV.BASE + '/', { tags: { name: 'second' } });
}`, map[string]string{"BASE": srv.URL})
	if err := s.Prepare(context.Background(), 1); err != nil { // the VU is ready, as load's pre-allocated ones are
		t.Fatal(err)
	}
	it := s.Iteration("open", ScenarioPlan{Exec: "default"}, nil).(load.SelfRecording)
	var got samples
	called := time.Now()
	lag := 50 * time.Millisecond
	it.DoRecord(context.Background(), load.Start{Scenario: "open", VU: 1, Intended: called.Add(-lag), Called: called}, &got)
	if len(got.all) != 2 {
		t.Fatalf("%d samples; want 2", len(got.all))
	}
	for i, name := range []string{"first", "second"} {
		smp := got.all[i]
		if smp.Name != name || smp.Status != 200 || smp.Scenario != "open" {
			t.Errorf("sample %d: name %q status %d scenario %q; want %q 200 open", i, smp.Name, smp.Status, smp.Scenario, name)
		}
		if smp.Service != smp.Done.Sub(smp.Sent) || smp.Service <= 0 {
			t.Errorf("sample %d: service %v; want Done-Sent %v", i, smp.Service, smp.Done.Sub(smp.Sent))
		}
		if smp.Latency != smp.Service+lag || smp.SendLag != lag {
			t.Errorf("sample %d: latency %v send lag %v; want service %v + %v and %v", i, smp.Latency, smp.SendLag, smp.Service, lag, lag)
		}
		if smp.Interval != 0 {
			t.Errorf("sample %d: interval %v in the open model; want 0", i, smp.Interval)
		}
	}
	if got.all[0].Service < 20*time.Millisecond {
		t.Errorf("first service %v; the target held it 20 ms", got.all[0].Service)
	}
	if got.all[1].Sent.Sub(got.all[0].Done) < 30*time.Millisecond {
		t.Errorf("second request sent %v after the first; the script slept 30 ms", got.all[1].Sent.Sub(got.all[0].Done))
	}
}

// The closed model: one interval per iteration, on its last request; a
// VU's first iteration's interval is the iteration's own duration.
func TestClosedModelRecordsOneIntervalPerIteration(t *testing.T) {
	srv := okServer(t)
	s := loadScript(t, `import http from 'k6/http';
import { sleep } from 'k6';
export default function () {
  http.get(__ENV.BASE + '/');
  http.get(__ENV.BASE + '/');
  sleep(0.05);
}`, map[string]string{"BASE": srv.URL})
	it := s.Iteration("closed", ScenarioPlan{Exec: "default"}, nil).(load.SelfRecording)
	var first samples
	called := time.Now()
	it.DoRecord(context.Background(), load.Start{Scenario: "closed", VU: 1, Called: called}, &first)
	ended := time.Now()
	if len(first.all) != 2 {
		t.Fatalf("%d samples; want 2", len(first.all))
	}
	if first.all[0].Interval != 0 {
		t.Errorf("first request's interval %v; want 0 (one interval per iteration)", first.all[0].Interval)
	}
	iv := first.all[1].Interval
	if iv < 50*time.Millisecond || iv > ended.Sub(called) {
		t.Errorf("first iteration's interval %v; want its duration, between the 50 ms sleep and %v", iv, ended.Sub(called))
	}
	for _, smp := range first.all {
		if smp.Latency != smp.Service || smp.SendLag != 0 {
			t.Errorf("closed latency %v service %v send lag %v; want latency = service, no send lag", smp.Latency, smp.Service, smp.SendLag)
		}
	}
	var next samples
	it.DoRecord(context.Background(), load.Start{Scenario: "closed", VU: 1, Iter: 1, Called: time.Now(), Interval: 123 * time.Millisecond}, &next)
	if len(next.all) != 2 || next.all[0].Interval != 0 || next.all[1].Interval != 123*time.Millisecond {
		t.Errorf("second iteration's intervals %v, %v; want 0 and the executor's 123ms", next.all[0].Interval, next.all[1].Interval)
	}
}

// options.minIterationDuration holds the VU back before its next
// iteration, but k6 judges and times the iteration where its function
// returned (k6 internal/js/runner.go: runFn emits iterations and
// iteration_duration, RunOnce then sleeps the rest): iteration_duration
// leaves the padding out, and a run that ends during the padding cuts the
// sleep short without interrupting the iteration. The script sleeps 20 ms
// against a 1 s minimum.
func TestMinIterationDurationLeftOutOfIterationDuration(t *testing.T) {
	for _, tt := range []struct {
		name    string
		stopAt  time.Duration // the run's end after the start; 0: none
		atLeast time.Duration // DoRecord returns no sooner
	}{
		{"the padding slept in full", 0, time.Second},
		{"the run ends in the padding", 300 * time.Millisecond, 300 * time.Millisecond},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := loadScript(t, `import { sleep } from 'k6';
export const options = { minIterationDuration: '1s' };
export default function () { sleep(0.02); }`, nil)
			it := s.Iteration("closed", ScenarioPlan{Exec: "default"}, nil).(load.SelfRecording)
			ctx := context.Background()
			if tt.stopAt > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.stopAt)
				defer cancel()
			}
			began := time.Now()
			it.DoRecord(ctx, load.Start{Scenario: "closed", VU: 1, Called: began}, &samples{})
			took := time.Since(began)
			if took < tt.atLeast || tt.stopAt > 0 && took >= time.Second {
				t.Errorf("the iteration returned after %v; want at least %v and, when the run ends first, less than the 1 s minimum", took, tt.atLeast)
			}
			if n, cut := s.Iterations(), s.exec.interrupted.Load(); n != 1 || cut != 0 {
				t.Errorf("%d iterations, %d interrupted; want 1 and 0", n, cut)
			}
			st, ok := s.k6.Stat("iteration_duration")
			if !ok || st.Count != 1 || st.Max < 20 || st.Max >= 1000 {
				t.Errorf("iteration_duration %+v; want one value from the 20 ms sleep, short of the 1000 ms minimum", st)
			}
		})
	}
}

// A runtime error is counted as an iteration error with its place kept;
// the requests sent before it are still recorded.
func TestIterationErrorCountedWithPlace(t *testing.T) {
	srv := okServer(t)
	s := loadScript(t, `import http from 'k6/http';
export default function () {
  http.get(__ENV.BASE + '/');
  if (__ITER > 0) {
    undefinedFunction();
  }
}`, map[string]string{"BASE": srv.URL})
	it := s.Iteration("x", ScenarioPlan{Exec: "default"}, nil).(load.SelfRecording)
	var got samples
	for i := uint64(0); i < 3; i++ {
		it.DoRecord(context.Background(), load.Start{Scenario: "x", VU: 1, Iter: i, Called: time.Now()}, &got)
	}
	n, first := s.IterationErrors()
	if n != 2 {
		t.Errorf("%d iteration errors; want 2", n)
	}
	if !strings.Contains(first, "s.js:5:") || !strings.Contains(first, "undefinedFunction") {
		t.Errorf("first error %q; want s.js:5 and the name", first)
	}
	if len(got.all) != 3 {
		t.Errorf("%d samples; want the 3 requests sent before the errors", len(got.all))
	}
}

// A VU made during the run (beyond the prepared ones) runs its init code
// first; its requests are charged that delay as start lag.
func TestFreshVUInitChargedAsStartLag(t *testing.T) {
	srv := okServer(t)
	s := loadScript(t, `import http from 'k6/http';
const start = Date.now();
while (Date.now() - start < 30) {} // a slow init: 30 ms
export default function () { http.get(__ENV.BASE + '/'); }`, map[string]string{"BASE": srv.URL})
	it := s.Iteration("open", ScenarioPlan{Exec: "default"}, nil).(load.SelfRecording)
	var got samples
	now := time.Now()
	it.DoRecord(context.Background(), load.Start{Scenario: "open", VU: 7, Intended: now, Called: now}, &got)
	if len(got.all) != 1 {
		t.Fatalf("%d samples; want 1", len(got.all))
	}
	smp := got.all[0]
	if smp.SendLag < 25*time.Millisecond || smp.Latency != smp.Service+smp.SendLag {
		t.Errorf("send lag %v, latency %v, service %v; want the 30 ms init (Date.now has 1 ms steps) in the lag and latency = service + lag", smp.SendLag, smp.Latency, smp.Service)
	}
}

// console.* goes to Stderr, at most 20 lines a second; the rest are counted.
func TestConsoleIsRateLimited(t *testing.T) {
	var buf strings.Builder
	path := writeScript(t, "s.js", map[string]string{"s.js": `export default function () {
  for (let i = 0; i < 100; i++) console.log('line', i, { vu: __VU });
  console.error(new Error('boom'));
}`})
	s, err := Load(context.Background(), path, Config{Stderr: &buf})
	if err != nil {
		t.Fatal(err)
	}
	it := s.Iteration("c", ScenarioPlan{Exec: "default"}, nil).(load.SelfRecording)
	it.DoRecord(context.Background(), load.Start{Scenario: "c", VU: 1, Called: time.Now()}, &samples{})
	s.Close()
	out := buf.String()
	if got := strings.Count(out, "log: line "); got != 20 {
		t.Errorf("%d log lines shown; want the first 20 of 100", got)
	}
	for _, want := range []string{`log: line 0 { vu: 1 }`, "console: 81 lines not shown (more than 20 a second)"} {
		if !strings.Contains(out, want) {
			t.Errorf("console output lacks %q:\n%s", want, out)
		}
	}
}

// console prints values as k6 v1.8.1's console does (internal/js
// console.go): objects key by key, strings inside them quoted, functions
// and cycles as placeholders, binary data with its bytes, Errors and
// top-level primitives as their strings.
func TestConsoleFormatsAsK6(t *testing.T) {
	for _, c := range []struct{ args, want string }{
		{`'plain', 5, true, null, undefined`, `plain 5 true null undefined`},
		{`{ a: 1, b: 'x', c: [1, 'y', null, undefined], d: { e: true } }`, `{ a: 1, b: "x", c: [ 1, "y", null, null ], d: { e: true } }`},
		{`[], {}, () => 1, { f() {} }`, `[] {} [object Function] { f: [object Function] }`},
		{`new Error('boom'), { e: new Error('in') }`, `Error: boom { e: Error: in }`},
		{`(() => { const o = { n: 1 }; o.self = o; return o; })()`, `{ n: 1, self: [Circular] }`},
		{`new Date(0), { d: new Date(0) }`, `"1970-01-01T00:00:00.000Z" { d: "1970-01-01T00:00:00.000Z" }`},
		{`new Uint8Array([1, 255]), new Float64Array(0), new Int16Array([-2])`, `Uint8Array(2) [ 1, 255 ] Float64Array(0) [] Int16Array(1) [ -2 ]`},
		{`new Uint8Array([1, 171]).buffer`, `ArrayBuffer { [Uint8Contents]: <01 ab>, byteLength: 2 }`},
	} {
		var buf strings.Builder
		path := writeScript(t, "s.js", map[string]string{"s.js": "export default function () { console.log(" + c.args + "); }"})
		s, err := Load(context.Background(), path, Config{Stderr: &buf})
		if err != nil {
			t.Fatal(err)
		}
		it := s.Iteration("c", ScenarioPlan{Exec: "default"}, nil).(load.SelfRecording)
		it.DoRecord(context.Background(), load.Start{Scenario: "c", VU: 1, Called: time.Now()}, &samples{})
		s.Close()
		if got := strings.TrimSpace(buf.String()); got != "log: "+c.want {
			t.Errorf("console.log(%s):\n got %s\nwant log: %s", c.args, got, c.want)
		}
	}
}

// res.json(selector) takes k6's selector syntax (gjson): paths, lengths,
// queries and their projections; a selector that picks nothing gives
// undefined, and a body that is not JSON throws k6's error, naming where
// (a selector on it picks nothing: TestResJSONAsK6).
func TestResponseJSONSelectors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/bad" {
			w.Write([]byte(`{"items": [1,`))
			return
		}
		w.Write([]byte(`{"user": {"name": "ann", "roles": ["r", "w"]}, "items": [{"id": 1, "name": "a"}, {"id": 2, "name": "b"}, {"id": 3, "name": "c"}]}`))
	}))
	t.Cleanup(srv.Close)
	s := loadScript(t, `import http from 'k6/http';
export default function () {
  if (__ITER === 1) { http.get(__ENV.BASE + '/bad').json(); return; }
  const r = http.get(__ENV.BASE + '/');
  const want = [['items.#', 3], ['items.#(id==2).name', 'b'], ['items.1.id', 2], ['user.roles', ['r', 'w']],
    ['items.#.id', [1, 2, 3]], ['user.missing', undefined], ['items.#(id>1)#.name', ['b', 'c']]];
  for (const [sel, v] of want) {
    const got = r.json(sel);
    if (JSON.stringify(got) !== JSON.stringify(v)) throw new Error(sel + ' gave ' + JSON.stringify(got));
  }
  if (r.json().user.name !== 'ann') throw new Error('the whole body');
}`, map[string]string{"BASE": srv.URL})
	it := s.Iteration("x", ScenarioPlan{Exec: "default"}, nil).(load.SelfRecording)
	var got samples
	it.DoRecord(context.Background(), load.Start{Scenario: "x", VU: 1, Iter: 0, Called: time.Now()}, &got)
	if n, first := s.IterationErrors(); n != 0 {
		t.Fatalf("selectors: %s", first)
	}
	it.DoRecord(context.Background(), load.Start{Scenario: "x", VU: 1, Iter: 1, Called: time.Now()}, &got)
	const want = "cannot parse json due to an error at line 1, character 13 , error: unexpected end of JSON input"
	if n, first := s.IterationErrors(); n != 1 || !strings.Contains(first, want) {
		t.Errorf("a body that is not JSON: %d errors, first %q; want 1, %q", n, first, want)
	}
}

// randomSeed makes Math.random repeatable: two VUs seeded alike draw the
// same numbers, and a differently seeded one does not.
func TestRandomSeed(t *testing.T) {
	s := loadScript(t, `import { randomSeed } from 'k6';
randomSeed(Number(__ENV.SEED));
export const draws = [Math.random(), Math.random(), Math.random()].join(',');
export default function () {}`, map[string]string{"SEED": "42"})
	draws := func(seed string) string {
		s.cfg.Env["SEED"] = seed
		v, err := s.newVU(context.Background(), 1)
		if err != nil {
			t.Fatal(err)
		}
		return v.exports.Get("draws").String()
	}
	a, b, c := draws("42"), draws("42"), draws("7")
	if a != b || a == c || strings.Count(a, ",") != 2 {
		t.Errorf("seed 42 drew %q and %q, seed 7 %q; want the first two equal, the third different", a, b, c)
	}
}

func TestCloseClosesEveryVUsConnections(t *testing.T) {
	var mu sync.Mutex
	open := map[net.Conn]bool{}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	srv.Config.ConnState = func(c net.Conn, st http.ConnState) {
		mu.Lock()
		defer mu.Unlock()
		switch st {
		case http.StateNew:
			open[c] = true
		case http.StateClosed, http.StateHijacked:
			delete(open, c)
		}
	}
	srv.Start()
	defer srv.Close()
	s, err := Load(context.Background(), writeScript(t, "s.js", map[string]string{"s.js": `import http from 'k6/http';
export default function () { http.get(__ENV.BASE + '/'); }`}), Config{Env: map[string]string{"BASE": srv.URL}})
	if err != nil {
		t.Fatal(err)
	}
	it := s.Iteration("open", ScenarioPlan{Exec: "default"}, nil).(load.SelfRecording)
	for vu := uint64(1); vu <= 3; vu++ {
		var got samples
		it.DoRecord(t.Context(), load.Start{Scenario: "open", VU: vu, Called: time.Now()}, &got)
		if len(got.all) != 1 || got.all[0].Status != 200 {
			t.Fatalf("VU %d: %+v, want one 200", vu, got.all)
		}
	}
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(open) }
	if n := count(); n != 3 {
		t.Fatalf("%d connections open after three VUs' requests, want 3 (one each, kept alive)", n)
	}
	s.Close()
	deadline := time.Now().Add(10 * time.Second)
	for count() > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := count(); n != 0 {
		t.Errorf("%d connections still open after Close, want 0", n)
	}
}

// TestLoadLimits: what a script reads is bounded: open() of a file past
// limits.ScriptOpen (64 MiB, a sparse file here) or of /dev/zero, and an
// import of a device, fail naming the file and the limit, before reading it
// all (open('/dev/zero', 'b') took over 1.2 GB before).
func TestLoadLimits(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skipf("SKIP: %v", err)
	}
	for _, c := range []struct {
		name, src string
		want      []string
	}{
		{"open a big file", "const d = open('./big.bin', 'b');\nexport default function () {}\n", []string{"s.js:1:", "big.bin: too large: a file a script open()s is read up to 64 MiB (fix: "}},
		{"open a device", "const d = open('/dev/zero', 'b');\nexport default function () {}\n", []string{"s.js:1:", "/dev/zero: too large"}},
		{"import a device", "import x from './zero.js';\nexport default function () {}\n", []string{"s.js:1:15", "/dev/zero: not a regular file"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := writeScript(t, "s.js", map[string]string{"s.js": c.src})
			dir := filepath.Dir(path)
			if err := os.Symlink("/dev/zero", filepath.Join(dir, "zero.js")); err != nil {
				t.Fatal(err)
			}
			f, err := os.Create(filepath.Join(dir, "big.bin"))
			if err != nil {
				t.Fatal(err)
			}
			if err := errors.Join(f.Truncate(64<<20+1), f.Close()); err != nil {
				t.Fatal(err)
			}
			_, err = Load(context.Background(), path, Config{})
			for _, w := range c.want {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("error %v lacks %q", err, w)
				}
			}
		})
	}
}

// A scenario knee refuses is named at its key in the script, line and
// column counted by hand in each source below.
func TestPlanPlacesScenarioErrors(t *testing.T) {
	for _, c := range []struct {
		name, src, want string
	}{
		{"two iteration-count scenarios", "export const options = {\n  scenarios: {\n    readers: { executor: 'shared-iterations', iterations: 2, exec: 'readers' },\n" +
			"    writers: { executor: 'per-vu-iterations', iterations: 1 },\n  },\n};\nexport function readers() {}\nexport default function () {}\n",
			"s.js:3:5: options.scenarios.readers: an iteration-count executor runs only"},
		{"the shortcuts' scenario", "// fewer iterations than VUs\nexport const options = { vus: 5, iterations: 2 };\nexport default function () {}\n",
			"s.js:2:14: options: the number of iterations (2) can't be less than the number of VUs (5)"},
		{"a quoted key with an unknown executor", "export const options = { scenarios: {\n  // the 'slow-ramp' scenario\n\t'slow-ramp': { executor: 'ramping-nothing' } } };\nexport default function () {}\n",
			"s.js:3:2: options.scenarios.slow-ramp: "},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := writeScript(t, "s.js", map[string]string{"s.js": c.src})
			s, err := Load(context.Background(), path, Config{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			_, err = s.Plan(Overrides{})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Plan: %v; want %q", err, c.want)
			}
		})
	}
}
