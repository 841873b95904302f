package k6script

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/knee-dev/knee/load"
)

// A tag value that is not a string, a boolean or a number makes k6 throw
// (js/common/tags.go ApplyCustomUserTags), with the call's prefix, and
// make no sample; a number and a boolean are tags as their text.
func TestTagValuesOnlyPrimitives(t *testing.T) {
	srv := okServer(t)
	for _, tt := range []struct {
		name, call string
		err        string // "" when taken
	}{
		{"check, null", `check(1, { a: true }, { k: null })`, "invalid value for metric tag 'k': only String, Boolean and Number types are accepted"},
		{"check, number and boolean", `check(1, { a: true }, { k: 1, b: false })`, ""},
		{"metric add, object", `c.add(1, { k: {} })`, "cannot add tags for the 'c' custom metric: invalid value for metric tag 'k'"},
		{"metric add, array", `c.add(1, { k: [1] })`, "invalid value for metric tag 'k'"},
		{"request, undefined", `http.get(__ENV.BASE, { tags: { k: undefined } })`, "invalid HTTP request metric tags: invalid value for metric tag 'k'"},
		{"request, 1.5", `http.get(__ENV.BASE, { tags: { k: 1.5 } })`, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := loadScript(t, `import http from 'k6/http';
import { check } from 'k6';
import { Counter } from 'k6/metrics';
const c = new Counter('c');
export default function () { `+tt.call+`; }`, map[string]string{"BASE": srv.URL})
			it := s.Iteration("x", ScenarioPlan{Exec: "default"}, nil).(load.SelfRecording)
			var got samples
			it.DoRecord(context.Background(), load.Start{Scenario: "x", VU: 1, Called: time.Now()}, &got)
			n, first := s.IterationErrors()
			switch {
			case tt.err == "" && n != 0:
				t.Errorf("iteration error %q; want none", first)
			case tt.err != "" && (n != 1 || !strings.Contains(first, tt.err)):
				t.Errorf("%d iteration errors, first %q; want one with %q", n, first, tt.err)
			}
			// No sample of the refused call: no request, no check, no value.
			wantSamples := int64(0)
			if tt.err == "" {
				wantSamples = 1
			}
			var made int64
			for _, m := range []string{"http_reqs", "checks", "c"} {
				st, _ := s.k6.Stat(m)
				made += st.Count
			}
			if made != wantSamples {
				t.Errorf("%d samples; want %d", made, wantSamples)
			}
		})
	}
}
