package k6script

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
)

// res.json() as k6's Response.JSON (js/modules/k6/http/response.go:66-144):
// a selector on a body that is not JSON picks nothing (undefined, no
// exception); a body that is not JSON throws Go's decoding error with the
// line and character (counted from 1, after k6's checkErrorInJSON); a null
// body throws k6's own words.
func TestResJSONAsK6(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/html":
			w.Write([]byte("<html></html>"))
		case "/lines":
			w.Write([]byte("{\n  \"a\": 1,\n  \"b\": x\n}"))
		case "/json":
			w.Write([]byte(`{"a":{"b":[1,2]}}`))
		}
	}))
	defer srv.Close()
	get := func(path string) string { return `http.get(__ENV.BASE + '` + path + `')` }
	for _, tt := range []struct {
		name, expr, want string
	}{
		{"selector, not JSON", `String(` + get("/html") + `.json('a.b'))`, "undefined"},
		{"selector, missing", `String(` + get("/json") + `.json('a.c'))`, "undefined"},
		{"selector, found", `String(` + get("/json") + `.json('a.b.1'))`, "2"},
		{"not JSON", get("/html") + `.json()`,
			"GoError: cannot parse json due to an error at line 1, character 1 , error: invalid character '<' looking for beginning of value"},
		{"third line", get("/lines") + `.json()`,
			"GoError: cannot parse json due to an error at line 3, character 8 , error: invalid character 'x' looking for beginning of value"},
		{"empty body", get("/empty") + `.json()`,
			"GoError: cannot parse json due to an error at line 1, character 0 , error: unexpected end of JSON input"},
		{"no body", `http.get(__ENV.BASE + '/json', { responseType: 'none' }).json()`,
			"GoError: the body is null so we can't transform it to JSON - this likely was because of a request error getting the response"},
		{"no body, selector", `http.get(__ENV.BASE + '/json', { responseType: 'none' }).json('a')`,
			"GoError: the body is null so we can't transform it to JSON - this likely was because of a request error getting the response"},
		{"no body, html", `http.get(__ENV.BASE + '/json', { responseType: 'none' }).html()`,
			"GoError: the body is null so we can't transform it to HTML - this likely was because of a request error getting the response"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := loadScript(t, `import http from 'k6/http';
export let out = '';
export default function () { try { out = `+tt.expr+`; } catch (e) { out = String(e); } }`, map[string]string{"BASE": srv.URL})
			iterateOnce(t, s)
			if n, first := s.IterationErrors(); n != 0 {
				t.Fatalf("iteration error %q", first)
			}
			v, _, _ := s.vuFor(context.Background(), 1, nil)
			if got := v.exports.Get("out").String(); got != tt.want {
				t.Errorf("got %q\n want %q", got, tt.want)
			}
		})
	}
}
