package k6script

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/knee-dev/knee/k6metric"
)

// linkServer serves a page of links at /dir/sub/page.html, reached by a
// redirect from /r/start/here (so a relative link resolves differently
// against the page's URL than against the one asked for); every other
// request is answered with its method, path and query, and X-Link header.
func linkServer(t *testing.T) *httptest.Server {
	t.Helper()
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/r/start/here":
			http.Redirect(w, r, "/dir/sub/page.html", http.StatusFound)
		case "/dir/sub/page.html":
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte(`<html><body><a name="top">top</a>
<a class="rel" href="../b/next?x=1">next</a>
<a class="abs" href="/abs">abs</a>
<a class="full" href="` + srv.URL + `/full?q=a%20b">full</a>
<a class="frag" href="#part">part</a>
</body></html>`))
		default:
			json.NewEncoder(w).Encode([]string{r.Method, r.URL.RequestURI(), r.Header.Get("X-Link")})
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// res.clickLink as k6 v1.8.1 follows a link, worked out by hand from the
// page: the first element the selector finds (default a[href], so the
// first <a>, which has no href, is passed over), its href resolved
// against the page's URL after the redirect (/dir/sub/page.html:
// ../b/next is /dir/b/next; against /r/start/here it would be /r/b/next),
// sent as a GET with params. Each iteration is 3 requests: the redirect,
// the page, the link.
func TestClickLink(t *testing.T) {
	srv := linkServer(t)
	for _, tt := range []struct {
		name, args string
		want       any // method, request URI, X-Link; "page": the page again
	}{
		{"no argument: the first a[href], relative", ``, []string{"GET", "/dir/b/next?x=1", ""}},
		{"a selector, params", `{selector: 'a.abs', params: {headers: {'X-Link': 'yes'}}}`, []string{"GET", "/abs", "yes"}},
		{"an absolute URL", `{selector: '.full'}`, []string{"GET", "/full?q=a%20b", ""}},
		{"a fragment: the page itself", `{selector: 'a.frag'}`, "page"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			want, _ := json.Marshal(tt.want)
			s := loadScript(t, `import http from 'k6/http';
export default function () {
  const page = http.get(__ENV.BASE + '/r/start/here');
  const r = page.clickLink(`+tt.args+`);
  if (__ENV.WANT === '"page"') {
    if (r.status !== 200 || r.body.indexOf('<a class="rel"') < 0) throw new Error('not the page: ' + r.status + ' ' + r.url);
    return;
  }
  if (JSON.stringify(r.json()) !== __ENV.WANT) throw new Error('got ' + r.body + ' want ' + __ENV.WANT);
}`, map[string]string{"BASE": srv.URL, "WANT": string(want)})
			runWS(t, s, 1)
			if n, _ := k6Count(t, s, k6metric.HTTPReqs); n != 3 {
				t.Errorf("http_reqs %d, want 3 (the redirect, the page, the link)", n)
			}
		})
	}
}

// No element for the selector, or a first element without an href,
// throws k6's errors, naming the selector and the page's URL; an
// argument that is not an object throws a TypeError, as k6's conversion.
func TestClickLinkErrors(t *testing.T) {
	srv := linkServer(t)
	page := srv.URL + "/dir/sub/page.html"
	for _, tt := range []struct{ args, want string }{
		{`{selector: '#nope'}`, "no element found for selector '#nope' in response '" + page + "'"},
		// the selection's first element, <a name="top">, has no href
		{`{selector: 'a'}`, "no valid href attribute value found on element 'a' in response '" + page + "'"},
		{`null`, "TypeError"},
	} {
		t.Run(tt.args, func(t *testing.T) {
			runHTTPOnce(t, `import http from 'k6/http';
export default function () {
  const page = http.get(__ENV.BASE + '/r/start/here');
  try { page.clickLink(`+tt.args+`); } catch (e) {
    if (String(e).includes(__ENV.WANT)) return;
    throw e;
  }
  throw new Error('no error');
}`, map[string]string{"BASE": srv.URL, "WANT": tt.want})
		})
	}
}
