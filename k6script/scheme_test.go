package k6script

import (
	"context"
	"testing"
)

// A URL that is not http:// or https:// (a relative one too) reaches k6's
// transport, which net/http's refuses: k6 counts it as a request, failed,
// with error_code 1000 and the Transport's words (lib/netext/httpext/
// transport.go RoundTrip saves it whatever the error; error_codes.go's
// default), where a URL that does not parse is refused before it.
func TestUnsupportedSchemeCounted(t *testing.T) {
	for _, tt := range []struct {
		name, url, want string
	}{
		{"relative", "'undefined/get'", `0|unsupported protocol scheme ""|1000`},
		{"ftp", "'ftp://127.0.0.1/x'", `0|unsupported protocol scheme "ftp"|1000`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := loadScript(t, `import http from 'k6/http';
export let out = '';
export default function () { const r = http.get(`+tt.url+`); out = [r.status, r.error, r.error_code].join('|'); }`, nil)
			iterateOnce(t, s)
			v, _, _ := s.vuFor(context.Background(), 1, nil)
			if got := v.exports.Get("out").String(); got != tt.want {
				t.Errorf("the script saw %q; want %q", got, tt.want)
			}
			reqs, _ := s.k6.Stat("http_reqs")
			failed, _ := s.k6.Stat("http_req_failed")
			if reqs.Count != 1 || failed.Count != 1 {
				t.Errorf("http_reqs %d, http_req_failed %d values; want 1 and 1", reqs.Count, failed.Count)
			}
		})
	}
}

// A request's params.throw overrides options.throw for that request, as
// k6's parseRequest takes it (js/modules/k6/http/request.go:378) and
// MakeRequest throws on it (lib/netext/httpext/request.go:328).
func TestParamsThrow(t *testing.T) {
	for _, tt := range []struct {
		name, options, params string
		throws                bool
	}{
		{"neither", "{}", "{}", false},
		{"options", "{ throw: true }", "{}", true},
		{"params", "{}", "{ throw: true }", true},
		{"params over options", "{ throw: true }", "{ throw: false }", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := loadScript(t, `import http from 'k6/http';
export const options = `+tt.options+`;
export default function () { http.get('http://127.0.0.1:1/', `+tt.params+`); }`, nil)
			iterateOnce(t, s)
			if n, first := s.IterationErrors(); (n == 1) != tt.throws {
				t.Errorf("%d iteration errors (%q); want the request to throw: %v", n, first, tt.throws)
			}
		})
	}
}
