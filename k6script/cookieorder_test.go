package k6script

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
)

// A request's params.cookies go before the jar's, and one with replace:
// true keeps the jar's cookie of its name from being sent (k6's
// SetRequestCookies, lib/netext/httpext/request.go:349-362): a server that
// reads the first cookie of a name gets the params' value.
func TestParamsCookiesBeforeTheJars(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(r.Header.Get("Cookie")))
	}))
	defer srv.Close()
	for _, tt := range []struct {
		name, code, want string
	}{
		{"jar only", `http.get(__ENV.BASE).body`, "b=jar"},
		{"params, no replace", `http.get(__ENV.BASE, { cookies: { b: 'p' } }).body`, "b=p; b=jar"},
		{"params, replace", `http.get(__ENV.BASE, { cookies: { b: { value: 'p', replace: true } } }).body`, "b=p"},
		{"replace false", `http.get(__ENV.BASE, { cookies: { b: { value: 'p', replace: false } } }).body`, "b=p; b=jar"},
		{"replace, another name kept", `http.get(__ENV.BASE, { cookies: { c: { value: 'p', replace: true } } }).body`, "c=p; b=jar"},
		{"batch, replace", `http.batch([['GET', __ENV.BASE, null, { cookies: { b: { value: 'p', replace: true } } }]])[0].body`, "b=p"},
		{"batch, no replace", `http.batch([['GET', __ENV.BASE, null, { cookies: { b: 'p' } }]])[0].body`, "b=p; b=jar"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := loadScript(t, `import http from 'k6/http';
export let out = '';
export default function () { http.cookieJar().set(__ENV.BASE, 'b', 'jar'); out = `+tt.code+`; }`, map[string]string{"BASE": srv.URL})
			iterateOnce(t, s)
			if n, first := s.IterationErrors(); n != 0 {
				t.Fatalf("iteration error %q", first)
			}
			v, _, _ := s.vuFor(context.Background(), 1, nil)
			if got := v.exports.Get("out").String(); got != tt.want {
				t.Errorf("Cookie: %q; want %q", got, tt.want)
			}
		})
	}
}
