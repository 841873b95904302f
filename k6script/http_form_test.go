package k6script

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/knee-dev/knee/k6metric"
)

// formPage is served at /form/page.html; every other request is echoed.
const formPage = `<html><body>
<form id="f1" method="post" action="../submit?x=1">
  <input type="text" name="user" value="ann">
  <input type="hidden" name="token" value="t&amp;1">
  <input type="checkbox" name="tick" value="yes" checked="checked">
  <input type="checkbox" name="bare" value="no" checked>
  <input type="radio" name="size" value="L" checked="checked">
  <input type="radio" name="size" value="S">
  <input type="text" name="off" value="x" disabled="disabled">
  <input type="text" name="half" value="y" disabled>
  <input type="text" name="empty">
  <select name="one"><option value="a">A</option><option selected>B</option></select>
  <select name="none"><option value="a">A</option></select>
  <select name="many" multiple><option value="a" selected>A</option><option value="b">B</option><option value="c" selected>C</option></select>
  <textarea name="note">a & b</textarea>
  <input type="file" name="upload">
  <input type="submit" name="go" value="Send">
  <button type="submit" name="alt" value="Other">Other</button>
</form>
<form id="f2" action="/search?old=1">
  <input name="q" value="shoes">
  <input type="checkbox" name="c">
  <input type="submit" value="Find">
</form>
<form id="f3" method="put"><input name="k" value="v"></form>
</body></html>`

type formEcho struct {
	Method, URI, Body, CT, XForm string
}

func formServer(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.Path == "/form/page.html" {
			w.Write([]byte(formPage))
			return
		}
		b, _ := io.ReadAll(r.Body)
		json.NewEncoder(w).Encode(formEcho{r.Method, r.URL.RequestURI(), string(b), r.Header.Get("Content-Type"), r.Header.Get("X-Form")})
	}))
	t.Cleanup(srv.Close)
	return srv
}

// res.submitForm as k6 sends the form, each expectation worked out by
// hand from formPage: the fields k6/html's serializeObject collects (a
// checkbox or radio only with checked="checked", disabled only when
// disabled="disabled", a select's marked option or "", a multiple select
// as Go prints a []string, a textarea's inner HTML escaped), the submit
// button's name=value, the fields given over them; POST form-encoded to
// the action resolved against the page's URL; GET with the values as the
// whole query; keys sorted.
func TestSubmitForm(t *testing.T) {
	const urlenc = "application/x-www-form-urlencoded"
	cases := []struct {
		name, args string
		want       formEcho
	}{
		// "form" picks all three: the first's method and action, every
		// form's fields (k6 serializes the whole selection).
		{"defaults: every form, the first's method", ``, formEcho{"POST", "/submit?x=1",
			"empty=&go=Send&half=y&k=v&many=%5Ba+c%5D&none=&note=a+%26amp%3B+b&one=B&q=shoes&size=L&tick=yes&token=t%261&user=ann", urlenc, ""}},
		{"fields, submitSelector, params", `{formSelector: '#f1', submitSelector: 'button[name=alt]', fields: {user: 'bob', extra: 5, many: ['x', 'y']}, params: {headers: {'X-Form': 'yes'}}}`,
			formEcho{"POST", "/submit?x=1",
				"alt=Other&empty=&extra=5&half=y&many=x&many=y&none=&note=a+%26amp%3B+b&one=B&size=L&tick=yes&token=t%261&user=bob", urlenc, "yes"}},
		{"GET replaces the action's query; a nameless submit adds nothing", `{formSelector: '#f2'}`, formEcho{"GET", "/search?q=shoes", "", "", ""}},
		{"GET fields as JavaScript prints them", `{formSelector: '#f2', fields: {q: 'boots', n: 2, list: ['a', 'b']}}`,
			formEcho{"GET", "/search?list=a%2Cb&n=2&q=boots", "", "", ""}},
		{"method upper-cased, no action: the page's URL", `{formSelector: '#f3'}`, formEcho{"PUT", "/form/page.html", "k=v", urlenc, ""}},
	}
	srv := formServer(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var want strings.Builder
			enc := json.NewEncoder(&want)
			enc.SetEscapeHTML(false) // as JSON.stringify writes '&'
			if err := enc.Encode(c.want); err != nil {
				t.Fatal(err)
			}
			s := loadScript(t, `import http from 'k6/http';
export default function () {
  const page = http.get(__ENV.BASE + '/form/page.html');
  const r = page.submitForm(`+c.args+`);
  if (r.status !== 200) throw new Error('status ' + r.status + ' ' + r.error);
  if (JSON.stringify(r.json()) !== __ENV.WANT) throw new Error('got ' + JSON.stringify(r.json()) + ' want ' + __ENV.WANT);
}`, map[string]string{"BASE": srv.URL, "WANT": strings.TrimSpace(want.String())})
			runWS(t, s, 1)
			if n, _ := k6Count(t, s, k6metric.HTTPReqs); n != 2 {
				t.Errorf("http_reqs %d, want 2 (the page and the form)", n)
			}
		})
	}
}

// No form for the selector throws k6's error, naming both.
func TestSubmitFormNoForm(t *testing.T) {
	srv := formServer(t)
	runHTTPOnce(t, `import http from 'k6/http';
export default function () {
  const page = http.get(__ENV.BASE + '/form/page.html');
  try { page.submitForm({formSelector: '#nope'}); } catch (e) {
    if (String(e).includes("no form found for selector '#nope' in response '" + __ENV.BASE + "/form/page.html'")) return;
    throw e;
  }
  throw new Error('no error');
}`, map[string]string{"BASE": srv.URL})
}
