package k6script

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/knee-dev/knee/internal/limits"
)

// moduleServer is a loopback HTTPS server of the handlers given by path;
// it records each request's path and query.
type moduleServer struct {
	*httptest.Server
	pool *x509.CertPool
	mu   sync.Mutex
	seen []string // path?query of each request
}

func newModuleServer(t *testing.T, routes map[string]http.HandlerFunc) *moduleServer {
	t.Helper()
	ms := &moduleServer{}
	ms.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ms.mu.Lock()
		ms.seen = append(ms.seen, r.URL.RequestURI())
		ms.mu.Unlock()
		if h, ok := routes[r.URL.Path]; ok {
			h(w, r)
			return
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(ms.Close)
	ms.pool = x509.NewCertPool()
	ms.pool.AddCert(ms.Certificate())
	return ms
}

func (ms *moduleServer) requests() []string {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	return append([]string(nil), ms.seen...)
}

// serve answers with src.
func serve(src string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte(src)) }
}

// runChecks loads the script at path with cfg, runs one iteration and
// returns its checks.
func runChecks(t *testing.T, path string, cfg Config) []CheckResult {
	t.Helper()
	s, err := Load(context.Background(), path, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	iterateOnce(t, s)
	if n, first := s.IterationErrors(); n != 0 {
		t.Fatalf("iteration error: %s", first)
	}
	return s.Checks.Results()
}

// A script imports a module by https URL; the module imports a relative
// sibling and a host-absolute path, as jslib's modules do. The function's
// result (2*20 + 2 = 42) passes a check; the cache then holds the three
// files byte for byte, each at host/SHA-256(URL)-NAME; a second load
// offline, with the server gone, runs from them; an empty cache offline
// is an error naming the URL, the cache file and the fix.
func TestRemoteModulesCachedAndOffline(t *testing.T) {
	files := map[string]string{
		"/lib/1.4.0/index.js": "import { twice } from './twice.js';\nimport { plus } from '/abs/plus.js';\nexport function answer(a, b) { return plus(twice(a), b); }\n",
		"/lib/1.4.0/twice.js": "export function twice(x) { return 2 * x; }\n",
		"/abs/plus.js":        "export function plus(a, b) { return a + b; }\n",
	}
	routes := map[string]http.HandlerFunc{}
	for p, src := range files {
		routes[p] = serve(src)
	}
	srv := newModuleServer(t, routes)
	entry := srv.URL + "/lib/1.4.0/index.js"
	path := writeScript(t, "s.js", map[string]string{"s.js": "import { check } from 'k6';\nimport { answer } from '" + entry + "';\n" +
		"export default function () { check(answer(20, 2), { 'is 42': (v) => v === 42 }); }\n"})
	cache := t.TempDir()
	want := []CheckResult{{Name: "is 42", Passes: 1}}

	got := runChecks(t, path, Config{Modules: Modules{Cache: cache, RootCAs: srv.pool}})
	if len(got) != 1 || got[0] != want[0] {
		t.Fatalf("online: checks %+v, want %+v", got, want)
	}
	// k6 asks for each module with ?_k6=1 first; it answers, so once each.
	reqs := srv.requests()
	slices.Sort(reqs)
	seen := strings.Join(reqs, " ")
	if wantReqs := "/abs/plus.js?_k6=1 /lib/1.4.0/index.js?_k6=1 /lib/1.4.0/twice.js?_k6=1"; seen != wantReqs {
		t.Errorf("server got %s, want %s", seen, wantReqs)
	}
	host := strings.ReplaceAll(strings.TrimPrefix(srv.URL, "https://"), ":", "_")
	for p, src := range files {
		sum := sha256.Sum256([]byte(srv.URL + p))
		file := filepath.Join(cache, host, hex.EncodeToString(sum[:])+"-"+filepath.Base(p))
		b, err := os.ReadFile(file)
		if err != nil || string(b) != src {
			t.Errorf("cache file of %s: %q, %v; want the served %q", p, b, err, src)
		}
	}
	srv.Close()

	got = runChecks(t, path, Config{Modules: Modules{Cache: cache, Offline: true}})
	if len(got) != 1 || got[0] != want[0] {
		t.Errorf("offline: checks %+v, want %+v", got, want)
	}

	empty := t.TempDir()
	_, err := Load(context.Background(), path, Config{Modules: Modules{Cache: empty, Offline: true}})
	var se *ScriptError
	if !errors.As(err, &se) {
		t.Fatalf("offline, empty cache: %v (%T), want a *ScriptError", err, err)
	}
	for _, w := range []string{"s.js:2:", entry, "not in the module cache", filepath.Join(empty, host), "run once without --offline", "--module-cache"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("offline, empty cache: %q lacks %q", err, w)
		}
	}
}

// What k6 refuses, and what knee bounds, fails Load with a *ScriptError
// saying why; a URL's password never appears in it.
func TestRemoteModuleRefusals(t *testing.T) {
	var srv *moduleServer
	big := strings.Repeat("/", limits.Script+1)
	srv = newModuleServer(t, map[string]http.HandlerFunc{
		"/big.js": func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Length", strconv.Itoa(len(big))) // refused before the body is read
			w.Write([]byte(big))
		},
		"/big-chunked.js": func(w http.ResponseWriter, _ *http.Request) {
			// no Content-Length: the body itself must be cut at the limit
			for i := 0; i <= limits.Script; i += 1 << 20 {
				w.Write([]byte(big[:1<<20]))
				w.(http.Flusher).Flush()
			}
		},
		"/local.js":  serve("import x from 'file:///etc/passwd';\nexport const y = x;\n"),
		"/bare.js":   serve("import x from 'lodash';\nexport const y = x;\n"),
		"/stream.js": serve("import { Blob } from 'k6/websockets';\nexport function f() {\n  return new Blob(['x']).stream();\n}\n"),
		"/to-http.js": func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "http://127.0.0.1:1/x.js", http.StatusFound)
		},
		"/loop.js": func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/loop.js", http.StatusFound) },
		"/hang.js": func(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() },
	})
	u := srv.URL
	withPW := strings.Replace(u, "https://", "https://knee:s3cretPW@", 1)
	cases := []struct {
		name, spec string
		want       []string
		timeout    time.Duration // of the download; 0: 30 s
	}{
		{"http", "http://jslib.k6.io/k6-utils/1.4.0/index.js", []string{"s.js:1:", "file and https", "not http"}, 0},
		{"github shortcut", "github.com/grafana/k6-jslib-utils/index.js", []string{"github.com shortcuts are no longer supported"}, 0},
		{"too large", u + "/big.js", []string{u + "/big.js", "too large", "16 MiB"}, 0},
		{"too large, no length", u + "/big-chunked.js", []string{u + "/big-chunked.js", "too large", "16 MiB"}, 0},
		{"not found", u + "/none.js", []string{u + "/none.js", "404 Not Found"}, 0},
		{"local file from remote", u + "/local.js", []string{"file:///etc/passwd", "may not import a local file"}, 0},
		{"bare name from remote", u + "/bare.js", []string{`"lodash"`, "neither a relative path"}, 0},
		{"redirect to http", u + "/to-http.js", []string{"redirected to http://127.0.0.1:1/x.js", "https:// only"}, 0},
		{"redirect loop", u + "/loop.js", []string{"stopped after 10 requests (9 redirects)"}, 0},
		{"timeout", u + "/hang.js", []string{u + "/hang.js", "no complete reply within 300ms"}, 300 * time.Millisecond},
		{"password", withPW + "/none.js", []string{"https://REDACTED@" + strings.TrimPrefix(u, "https://") + "/none.js", "404"}, 0},
		{"lacked API in a module", u + "/stream.js", []string{u + "/stream.js:3:25", "Blob.stream() (k6/websockets) is not supported"}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := writeScript(t, "s.js", map[string]string{"s.js": "import * as m from '" + c.spec + "';\nexport default function () { m; }\n"})
			timeout := c.timeout
			if timeout == 0 {
				timeout = 30 * time.Second
			}
			_, err := Load(context.Background(), path, Config{Modules: Modules{Cache: t.TempDir(), RootCAs: srv.pool, Timeout: timeout}})
			var se *ScriptError
			if !errors.As(err, &se) {
				t.Fatalf("Load: %v (%T), want a *ScriptError", err, err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "s3cretPW") {
				t.Errorf("error %q shows the password", err)
			}
		})
	}
}

// A module fetched with credentials is cached under a name that does not
// hold them.
func TestRemoteModuleCachePathHasNoCredentials(t *testing.T) {
	srv := newModuleServer(t, map[string]http.HandlerFunc{"/m.js": serve("export const v = 7;\n")})
	spec := strings.Replace(srv.URL, "https://", "https://knee:s3cretPW@", 1) + "/m.js"
	path := writeScript(t, "s.js", map[string]string{"s.js": "import { check } from 'k6';\nimport { v } from '" + spec + "';\nexport default function () { check(v, { 'is 7': (x) => x === 7 }); }\n"})
	cache := t.TempDir()
	if got := runChecks(t, path, Config{Modules: Modules{Cache: cache, RootCAs: srv.pool}}); len(got) != 1 || got[0].Passes != 1 {
		t.Fatalf("checks %+v, want is 7 passed once", got)
	}
	var names []string
	filepath.WalkDir(cache, func(p string, _ os.DirEntry, _ error) error {
		names = append(names, p)
		return nil
	})
	if len(names) != 3 { // the cache, the host's folder, the module
		t.Errorf("cache holds %q, want one module", names)
	}
	for _, n := range names {
		if strings.Contains(n, "s3cret") || strings.Contains(n, "knee:") {
			t.Errorf("cache path %q holds the credentials", n)
		}
	}
}

// A redirected module keeps the URL it was imported by, as in k6: its
// relative imports resolve against that URL, not the redirect's.
func TestRemoteModuleRedirectKeepsImportedURL(t *testing.T) {
	srv := newModuleServer(t, map[string]http.HandlerFunc{
		"/old/index.js": func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "/new/v2/index.js", http.StatusMovedPermanently)
		},
		"/new/v2/index.js": serve("export { v } from './sib.js';\n"),
		"/old/sib.js":      serve("export const v = 'old';\n"),
		"/new/v2/sib.js":   serve("export const v = 'new';\n"),
	})
	path := writeScript(t, "s.js", map[string]string{"s.js": "import { check } from 'k6';\nimport { v } from '" + srv.URL + "/old/index.js';\n" +
		"export default function () { check(v, { 'from /old/sib.js': (x) => x === 'old' }); }\n"})
	got := runChecks(t, path, Config{Modules: Modules{RootCAs: srv.pool}})
	if len(got) != 1 || got[0].Passes != 1 {
		t.Errorf("checks %+v, want 'from /old/sib.js' passed once", got)
	}
}

// An exception thrown in a remote module is placed at its URL:line:col.
func TestRemoteModuleExceptionNamesURL(t *testing.T) {
	srv := newModuleServer(t, map[string]http.HandlerFunc{"/m.js": serve("export function boom() {\n  throw new Error('boom');\n}\n")})
	path := writeScript(t, "s.js", map[string]string{"s.js": "import { boom } from '" + srv.URL + "/m.js';\nexport default function () { boom(); }\n"})
	s, err := Load(context.Background(), path, Config{Modules: Modules{RootCAs: srv.pool}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	iterateOnce(t, s)
	// line 2 of the module, named by its URL alone (the column is goja's)
	n, first := s.IterationErrors()
	if n != 1 || !strings.HasPrefix(first, srv.URL+"/m.js:2:") || !strings.HasSuffix(first, "Error: boom") {
		t.Errorf("iteration errors %d, first %q; want 1, %s/m.js:2:COL: Error: boom", n, first, srv.URL)
	}
}

func TestDefaultModuleCache(t *testing.T) {
	cases := []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"XDG_CACHE_HOME": "/c", "HOME": "/h"}, "/c/knee/modules"},
		{map[string]string{"HOME": "/h"}, "/h/.cache/knee/modules"},
		{map[string]string{"XDG_CACHE_HOME": "rel", "HOME": "/h"}, "/h/.cache/knee/modules"}, // XDG: relative paths are ignored
		{map[string]string{}, ""},
	}
	for _, c := range cases {
		if got := DefaultModuleCache(func(k string) string { return c.env[k] }); got != c.want {
			t.Errorf("DefaultModuleCache(%v) = %q, want %q", c.env, got, c.want)
		}
	}
}
