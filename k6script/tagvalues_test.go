package k6script

import (
	"context"
	"strings"
	"testing"
)

// A tag value that is not a string, a boolean or a number makes k6 throw
// (js/common/tags.go ApplyCustomUserTags), with the call's prefix, and
// make no sample; a number and a boolean are tags as their text. A
// request's throws only under options.throw (else TestUnreadableParamsUnsent).
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
		{"request, undefined, throw", `http.get(__ENV.BASE, { tags: { k: undefined } })`, "invalid HTTP request metric tags: invalid value for metric tag 'k'"},
		{"request, 1.5", `http.get(__ENV.BASE, { tags: { k: 1.5 } })`, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := loadScript(t, `import http from 'k6/http';
import { check } from 'k6';
import { Counter } from 'k6/metrics';
const c = new Counter('c');
export const options = { throw: true };
export default function () { `+tt.call+`; }`, map[string]string{"BASE": srv.URL})
			iterateOnce(t, s)
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

// Under options.throw false (k6's default) a request whose params k6
// cannot read is not sent: k6 warns and gives back a Response of status 0
// with the error's text and no error_code (js/modules/k6/http/request.go:69
// handleParseRequestError); http.batch sends none of its requests and
// gives back the entries up to the unreadable one, an array's later ones
// null (request.go:412-440, 489-494).
func TestUnreadableParamsUnsent(t *testing.T) {
	srv := okServer(t)
	const tagErr = "invalid HTTP request metric tags: invalid value for metric tag 'k': only String, Boolean and Number types are accepted as a metric tag values"
	for _, tt := range []struct {
		name, code string
		want       string // what the script logs
	}{
		{"get", `const r = http.get(__ENV.BASE, { tags: { k: null } });
			out = [r.status, r.error, r.error_code, typeof r.body, String(r.body), r.url, r.status_text, r.request].join('|');`,
			"0|" + tagErr + "|0|object||||"},
		{"post in a check", `const r = http.post(__ENV.BASE, 'x', { tags: { k: {} } });
			out = String(check(r, { 'no status': (x) => x.status === 0 }));`,
			"true"},
		{"batch array", `const rs = http.batch([__ENV.BASE, ['GET', __ENV.BASE, null, { tags: { k: [1] } }], __ENV.BASE]);
			out = [rs.length, rs[0].status, rs[0].error, rs[1].error, rs[2]].join('|');`,
			"3|0||" + tagErr + "|"},
		{"batch object", `const rs = http.batch({ a: __ENV.BASE, b: { method: 'GET', url: __ENV.BASE, params: { tags: { k: undefined } } }, c: __ENV.BASE });
			out = Object.keys(rs).join(',') + '|' + rs.b.error_code;`,
			"a,b|0"},
		// k6's other errors reading a request (request.go:143-404, url.go:57-70)
		{"no URL", `const r = http.get(); out = [r.status, r.error, r.error_code].join('|');`,
			"0|invalid URL: '#<nil>'|1020"},
		{"a number for a URL", `const r = http.get(42); out = [r.error, r.error_code].join('|');`,
			"invalid URL: '#42'|1020"},
		{"URL that does not parse", `const r = http.get('http://[::1'); out = [r.error, r.error_code].join('|');`,
			`invalid URL: parse "http://[::1": missing ']' in host|1020`},
		{"a number for a body", `out = http.post(__ENV.BASE, 42).error;`, "unknown request body type int64"},
		{"an array for a body", `out = http.post(__ENV.BASE, [1, 2]).error;`, "unknown request body type []interface {}"},
		{"timeout", `out = http.get(__ENV.BASE, { timeout: 'soon' }).error;`, `invalid timeout value: time: invalid duration "soon"`},
		{"compression", `out = http.post(__ENV.BASE, 'x', { compression: 'lz4' }).error;`,
			"unknown compression algorithm lz4, supported algorithms are [gzip deflate zstd br]"},
		{"responseType", `out = http.get(__ENV.BASE, { responseType: 'json' }).error;`, "json does not belong to ResponseType values"},
		{"responseCallback", `out = http.get(__ENV.BASE, { responseCallback: (r) => true }).error;`, "unsupported responseCallback"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := loadScript(t, `import http from 'k6/http';
import { check } from 'k6';
export let out = '';
export default function () { `+tt.code+` }`, map[string]string{"BASE": srv.URL})
			iterateOnce(t, s)
			if n, first := s.IterationErrors(); n != 0 {
				t.Fatalf("iteration error %q; want none", first)
			}
			v, _, _ := s.vuFor(context.Background(), 1, nil)
			if got := v.exports.Get("out").String(); got != tt.want {
				t.Errorf("the script saw %q; want %q", got, tt.want)
			}
			if st, _ := s.k6.Stat("http_reqs"); st.Count != 0 {
				t.Errorf("http_reqs %d; want 0: nothing is sent", st.Count)
			}
		})
	}
}
