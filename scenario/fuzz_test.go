package scenario

import (
	"errors"
	"testing"
)

// FuzzParse checks that any bytes either parse into a Config that validates
// cleanly, with an executor in every scenario, or fail with *Errors only.
func FuzzParse(f *testing.F) {
	f.Add([]byte(fullFile))
	f.Add([]byte("scenarios:\n  a: {executor: constant-vus, vus: 1, duration: 1s, requests: [{url: 'http://h/{vu}'}]}"))
	f.Add([]byte("scenarios:\n  a:\n    executor: ramping-vus\n    stages: [{duration: 1s, target: 2}]\n    requests: [{url: 'http://h/'}]"))
	f.Add([]byte("x: &a [1]\ny: *a"))
	f.Add([]byte("scenarios: {a: {executor: constant-arrival-rate, rate: 1e3, duration: 1m, preAllocatedVUs: 1}}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := Parse("f.yaml", data)
		if err != nil {
			errs := []error{err}
			if j, ok := err.(interface{ Unwrap() []error }); ok {
				errs = j.Unwrap()
			}
			for _, e := range errs {
				var se *Error
				if !errors.As(e, &se) {
					t.Fatalf("%v (%T) is not a *Error", e, e)
				}
			}
			return
		}
		if errs := cfg.Validate(); len(errs) > 0 {
			t.Fatalf("Parse accepted a config Validate rejects: %v", errs)
		}
		for _, sc := range cfg.Scenarios {
			if sc.Executor == nil || len(sc.Requests) == 0 {
				t.Fatalf("scenario %q accepted without executor or requests", sc.Name)
			}
		}
	})
}
