package k6script

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// The options decoder never panics; what it accepts, Plan maps or refuses
// with an error, never a panic.
func FuzzDecodeOptions(f *testing.F) {
	for _, seed := range []string{
		`{}`, `null`, `{"vus": 5, "duration": "30s"}`, `{"iterations": 3}`, `{"stages": [{"duration": "1s", "target": 2}]}`,
		`{"scenarios": {"open": {"executor": "constant-arrival-rate", "rate": 200, "timeUnit": "1s", "duration": "60s", "preAllocatedVUs": 50, "maxVUs": 2000}}}`,
		`{"scenarios": {"s": {"executor": "ramping-arrival-rate", "startRate": 1, "stages": [{"target": 1e308, "duration": 1e300}]}}}`,
		`{"scenarios": {"x": {"executor": "per-vu-iterations", "vus": -1, "iterations": 9223372036854775807}}}`,
		`{"thresholds": {"http_req_duration": ["p(95)<200", {"threshold": "p(99)<1"}]}, "duration": "1d2h"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		o, err := DecodeOptions(b)
		if err != nil {
			return
		}
		p, err := o.Plan("f.js", Overrides{})
		if err != nil {
			return
		}
		for _, sc := range p.Config.Scenarios {
			if sc.Executor == nil || len(sc.Executor.Validate()) > 0 {
				t.Fatalf("Plan accepted an invalid scenario %+v", sc)
			}
			if _, ok := p.Scenarios[sc.Name]; !ok {
				t.Fatalf("scenario %q has no plan", sc.Name)
			}
		}
	})
}

// The loader never panics on any source: it loads it or returns a
// *ScriptError.
func FuzzLoad(f *testing.F) {
	for _, seed := range []string{
		"export default function () {}",
		"import http from 'k6/http';\nexport const options = {vus: 2, duration: '1s'};\nexport default function () { http.get('http://127.0.0.1:1/'); }",
		"import ws from 'k6/ws';",
		"export let options = {scenarios: {a: {executor: 'constant-vus'}}}; export function handleSummary() {}",
		"throw new Error('init')",
		"let = ;",
		"export const options = {get vus() { throw 1 }};",
		"import { check, sleep, group, fail } from 'k6'; export default () => group('g', () => check(1, {a: 1}));",
		"export const options = (function f() { const o = {}; o.self = o; return o })();",
		"import { randomIntBetween } from 'https://jslib.k6.io/k6-utils/1.4.0/index.js';",
	} {
		f.Add(seed)
	}
	dir, cache := f.TempDir(), f.TempDir()
	f.Fuzz(func(t *testing.T, src string) {
		path := filepath.Join(dir, "fuzz.js")
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		// Offline from an empty cache: a remote import fails at once,
		// never downloads.
		s, err := Load(context.Background(), path, Config{Modules: Modules{Offline: true, Cache: cache}})
		if err != nil {
			var se *ScriptError
			if !errors.As(err, &se) {
				t.Fatalf("Load: %v (%T); want a *ScriptError", err, err)
			}
			return
		}
		s.Close()
		_, _ = s.Plan(Overrides{})
	})
}
