package k6script

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
)

// res.cookies' fields are k6's (lib/netext/httpext/request.go:314-327):
// expires is the Expires time's UnixNano()/1e6, which for a cookie without
// one is Go's zero time overflowing int64, -6795364578871, not 0; max_age
// as Go reads Max-Age (0 absent, -1 for Max-Age=0).
func TestResCookiesAsK6(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Add("Set-Cookie", "a=1; Path=/")
		w.Header().Add("Set-Cookie", "b=2; Expires=Wed, 21 Oct 2026 07:28:00 GMT; Secure; HttpOnly")
		w.Header().Add("Set-Cookie", "c=3; Max-Age=0")
	}))
	defer srv.Close()
	for _, tt := range []struct {
		name, expr, want string
	}{
		{"no Expires", `c.a[0].expires`, "-6795364578871"},
		{"Expires", `c.b[0].expires`, "1792567680000"},
		{"flags", `[c.b[0].secure, c.b[0].http_only, c.a[0].secure, c.a[0].path].join()`, "true,true,false,/"},
		{"max_age", `[c.a[0].max_age, c.c[0].max_age].join()`, "0,-1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := loadScript(t, `import http from 'k6/http';
export let out = '';
export default function () { const c = http.get(__ENV.BASE).cookies; out = String(`+tt.expr+`); }`, map[string]string{"BASE": srv.URL})
			iterateOnce(t, s)
			if n, first := s.IterationErrors(); n != 0 {
				t.Fatalf("iteration error %q", first)
			}
			v, _, _ := s.vuFor(context.Background(), 1, nil)
			if got := v.exports.Get("out").String(); got != tt.want {
				t.Errorf("got %q; want %q", got, tt.want)
			}
		})
	}
}
