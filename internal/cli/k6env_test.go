package cli

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// k6's K6_ variables, as k6 v1.8.1 reads them (above the script's options,
// below the command line; a duration, iteration count or stages on the
// command line drop the variables' as lib.Options.Apply drops a lower
// tier's): the script asks for 1 VU and 1 iteration of one request.
func TestScriptK6Env(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer srv.Close()
	script := writeJS(t, `import http from 'k6/http';
export const options = { vus: 1, iterations: 1 };
export default function () { http.get(__ENV.BASE); }
`)
	dir := t.TempDir()
	export := filepath.Join(dir, "k6-summary.json")
	for _, c := range []struct {
		name string
		env  map[string]string
		args []string
		code int
		reqs int64  // requests the target got
		err  string // on stderr
	}{
		{"the script's own", nil, nil, 0, 1, ""},
		{"K6_VUS and K6_ITERATIONS", map[string]string{"K6_VUS": "3", "K6_ITERATIONS": "6"}, nil, 0, 6, ""},
		{"the flag over the variable", map[string]string{"K6_ITERATIONS": "4"}, []string{"--iterations", "2"}, 0, 2, ""},
		{"iterations on the command line drop K6_DURATION", map[string]string{"K6_DURATION": "1h"}, []string{"--iterations", "3"}, 0, 3, ""},
		{"K6_DURATION in k6's syntax, refused when bad", map[string]string{"K6_DURATION": "soon"}, nil, ExitUsage, 0, `K6_DURATION="soon"`},
		{"an option knee does not take", map[string]string{"K6_THROW": "true", "K6_HOSTS": `{"a":"b"}`}, nil, ExitUsage, 0,
			"K6_HOSTS, K6_THROW set: k6 reads it as the script's option"},
		{"thresholds not judged", map[string]string{"K6_NO_THRESHOLDS": "1"}, nil, ExitUsage, 0, "K6_NO_THRESHOLDS set"},
		{"thresholds judged, as without it", map[string]string{"K6_NO_THRESHOLDS": "false"}, nil, 0, 1, ""},
		{"no system variables in __ENV", map[string]string{"K6_INCLUDE_SYSTEM_ENV_VARS": "false"}, nil, ExitUsage, 0, "K6_INCLUDE_SYSTEM_ENV_VARS set"},
		{"k6's cloud and dashboard", map[string]string{"K6_CLOUD_TOKEN": "x", "K6_WEB_DASHBOARD": "true", "K6_NO_USAGE_REPORT": "true"}, nil, 0, 1, ""},
		{"K6_SUMMARY_EXPORT", map[string]string{"K6_SUMMARY_EXPORT": export}, nil, 0, 1, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			hits.Store(0)
			args := append([]string{"run", script, "-e", "BASE=" + srv.URL, "--quiet", "--out", filepath.Join(dir, "runs")}, c.args...)
			var out, errb bytes.Buffer
			code := Main(Env{Args: args, Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return c.env[k] }})
			if code != c.code || hits.Load() != c.reqs {
				t.Fatalf("exit %d, %d requests; want %d and %d\n%s\n%s", code, hits.Load(), c.code, c.reqs, out.String(), errb.String())
			}
			if c.err != "" && !strings.Contains(errb.String(), c.err) {
				t.Errorf("stderr lacks %q:\n%s", c.err, errb.String())
			}
		})
	}
	if b, err := os.ReadFile(export); err != nil || !bytes.HasPrefix(b, []byte("{\n    \"metrics\"")) {
		t.Errorf("K6_SUMMARY_EXPORT: %.40q, %v; want k6's summary export", b, err)
	}
}
