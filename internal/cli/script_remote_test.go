package cli

import (
	"context"
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/knee-dev/knee/k6script"
)

// A script's https:// imports: downloaded once into a cache (here by
// k6script, trusting the test server's CA), then run by knee run
// --offline with the server gone; offline from an empty cache, given by
// flag or by the user's cache directory, is bad input (exit 2) naming the
// URL, the cache file and the fix.
func TestRunScriptRemoteModulesOffline(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/lib/index.js":
			w.Write([]byte("import { twice } from './twice.js';\nexport function answer(a) { return twice(a) + 2; }\n"))
		case "/lib/twice.js":
			w.Write([]byte("export function twice(x) { return 2 * x; }\n"))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	entry := srv.URL + "/lib/index.js"
	script := writeJS(t, "import { check } from 'k6';\nimport { answer } from '"+entry+"';\n"+
		"export const options = { thresholds: { checks: ['rate==1'] } };\n"+
		"export default function () { check(answer(20), { 'is 42': (v) => v === 42 }); }\n")
	cache := t.TempDir()
	s, err := k6script.Load(context.Background(), script, k6script.Config{Modules: k6script.Modules{Cache: cache, RootCAs: pool}})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	srv.Close()

	host := strings.ReplaceAll(strings.TrimPrefix(srv.URL, "https://"), ":", "_")
	xdg, home := t.TempDir(), t.TempDir()
	cases := []struct {
		name string
		env  map[string]string
		args []string
		code int
		want []string // in stderr, or stdout when the run passed
	}{
		{"offline from the cache", nil, []string{"--offline", "--module-cache", cache}, 0, []string{"is 42"}},
		{"offline from KNEE_ variables", map[string]string{"KNEE_OFFLINE": "true", "KNEE_MODULE_CACHE": cache}, nil, 0, []string{"is 42"}},
		{"empty cache by flag", nil, []string{"--offline", "--module-cache", filepath.Join(xdg, "none")}, ExitUsage,
			[]string{entry, "not in the module cache", filepath.Join(xdg, "none", host), "run once without --offline"}},
		{"XDG_CACHE_HOME", map[string]string{"KNEE_OFFLINE": "1", "XDG_CACHE_HOME": xdg, "HOME": home}, nil, ExitUsage,
			[]string{entry, filepath.Join(xdg, "knee", "modules", host)}},
		{"HOME", map[string]string{"KNEE_OFFLINE": "1", "HOME": home}, nil, ExitUsage,
			[]string{entry, filepath.Join(home, ".cache", "knee", "modules", host)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"run", script, "--quiet", "--out", t.TempDir()}, c.args...)
			code, stdout, stderr := runKneeEnv(t, c.env, args...)
			out := stderr
			if c.code == 0 {
				out = stdout
			}
			if code != c.code {
				t.Fatalf("exit %d, want %d; stderr %s", code, c.code, stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
		})
	}
}

// Module downloads go through HTTPS_PROXY (or https_proxy) unless
// NO_PROXY names the host, as k6's (Go's default client's) do.
func TestScriptModulesProxy(t *testing.T) {
	cases := []struct {
		env  map[string]string
		want string // the proxy of https://jslib.k6.io/x.js; "" direct
	}{
		{map[string]string{}, ""},
		{map[string]string{"HTTPS_PROXY": "http://proxy.example:3128"}, "http://proxy.example:3128"},
		{map[string]string{"https_proxy": "http://lower.example:8080"}, "http://lower.example:8080"},
		{map[string]string{"HTTPS_PROXY": "http://proxy.example:3128", "NO_PROXY": "k6.io"}, ""},
	}
	for _, c := range cases {
		m := scriptModules(scriptFlags{}, func(k string) string { return c.env[k] })
		req, _ := http.NewRequest(http.MethodGet, "https://jslib.k6.io/x.js", nil)
		u, err := m.Proxy(req)
		got := ""
		if u != nil {
			got = u.String()
		}
		if err != nil || got != c.want {
			t.Errorf("env %v: proxy %q, %v; want %q", c.env, got, err, c.want)
		}
	}
}
