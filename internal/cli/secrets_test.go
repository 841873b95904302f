package cli

import (
	"bytes"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// No secret reaches anything knee writes. Each input path gets a distinct
// planted secret; every command that writes something runs on them; then
// every byte of every file written and of stdout and stderr is scanned for
// each secret, and the masked request name is checked to be the name tag.
func TestNoSecretInAnyOutput(t *testing.T) {
	if testing.Short() {
		t.Skip("runs knee run twice, steps and the reports: about 15 s")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/metrics" {
			fmt.Fprint(w, "# TYPE go_goroutines gauge\ngo_goroutines 7\n")
			return
		}
		// A server that echoes a secret back in a cookie: knee must not keep it.
		w.Header().Set("Set-Cookie", "sid=SETCOOKIE0001; HttpOnly")
		w.Write([]byte("ok"))
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")

	secrets := []string{
		"URLUSER0001", "URLPASS0001", "QTOKEN0001", "QAPIKEY0001", "AUTHBEARER01", "PROXYAUTH001", "COOKIEVAL001",
		"XAPIKEY00001", "YAMLPASS0001", "YAMLSIG00001", "YAMLCOOKIE01", "YAMLAUTH0001", "METRICPASS01", "PGPASS000001",
		"STEPTOKEN001", "LABDBPASS001", "BADURLPASS01", "BADQTOKEN001", "METRICBAD001", "SETCOOKIE0001",
	}
	root := t.TempDir()
	var stdio bytes.Buffer
	knee := func(wantCode int, args ...string) {
		t.Helper()
		code, out, errs := runKnee(t, args...)
		stdio.WriteString(out + errs)
		if code != wantCode {
			t.Fatalf("knee %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, wantCode, out, errs)
		}
	}
	flagURL := "http://URLUSER0001:URLPASS0001@" + host + "/books?token=QTOKEN0001&api_key=QAPIKEY0001&page=2"
	for _, out := range []string{"a", "a2"} { // twice, for knee compare
		knee(0, "run", "--rate", "50", "--duration", "1s", "--graceful-stop", "1s", "--url", flagURL,
			"--redact-query", "token,api_key",
			"--header", "Authorization: Bearer AUTHBEARER01", "--header", "Proxy-Authorization: Basic PROXYAUTH001",
			"--header", "Cookie: sid=COOKIEVAL001", "--header", "X-Api-Key: XAPIKEY00001",
			"--out", filepath.Join(root, out), "--summary-export", filepath.Join(root, out+".json"))
	}

	yaml := `redactQuery: [sig]
scenarios:
  file:
    executor: constant-arrival-rate
    rate: 50
    duration: 1s
    gracefulStop: 1s
    requests:
      - url: "http://knee:YAMLPASS0001@` + host + `/books/{isbn}?sig=YAMLSIG00001"
        headers: {Cookie: "c=YAMLCOOKIE01", Authorization: "Token YAMLAUTH0001"}
vars:
  isbn: [9780441172719]
`
	file := filepath.Join(root, "s.yaml")
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	knee(0, "run", file, "--out", filepath.Join(root, "b"), "--summary-export", filepath.Join(root, "b.json"))

	knee(0, "steps", "--start", "20", "--step", "20", "--steps", "2", "--step-duration", "2s", "--warmup", "500ms",
		"--url", "http://"+host+"/s?token=STEPTOKEN001", "--redact-query", "token",
		"--metrics", "http://m:METRICPASS01@"+host+"/metrics",
		"--postgres", "postgres://knee:PGPASS000001@127.0.0.1:1/knee?connect_timeout=1",
		"--out", filepath.Join(root, "c"), "--summary-export", filepath.Join(root, "c.json"))

	// A database that refuses: the error names the DSN's user and host.
	knee(ExitFailure, "lab", "serve", "--addr", "127.0.0.1:0", "--db", "postgres://knee:LABDBPASS001@127.0.0.1:1/knee?connect_timeout=1")

	// Bad input whose error messages echo the URL.
	knee(ExitUsage, "run", "--rate", "10", "--duration", "1s", "--redact-query", "token",
		"--url", "http://u:BADURLPASS01@127.0.0.1:99999/x?token=BADQTOKEN001{")
	knee(ExitUsage, "steps", "--url", "http://"+host+"/", "--metrics", "http://m:METRICBAD001@127.0.0.1:1/metrics")

	runA, runB := findRun(t, filepath.Join(root, "a")), findRun(t, filepath.Join(root, "b"))
	knee(0, "analyze", runA)
	knee(0, "analyze", runB, "--summary-export", filepath.Join(root, "b-analysis.json"))
	knee(0, "report", runA, "--format", "md", "--out", filepath.Join(root, "a.md"))
	knee(0, "report", runB, "--format", "html", "--out", filepath.Join(root, "b.html"))
	knee(0, "report", runA)
	knee(0, "compare", runA, "--vs", findRun(t, filepath.Join(root, "a2")))

	// The name tag is the URL with its secrets masked, in run.json and
	// latency.hlog alike (JSON escapes '&', the hlog tags '=').
	wantName := "http://REDACTED@" + host + "/books?token=REDACTED&api_key=REDACTED&page=2"
	for f, want := range map[string]string{"run.json": strings.ReplaceAll(wantName, "&", `\u0026`), "latency.hlog": strings.ReplaceAll(wantName, "=", "%3D")} {
		b, err := os.ReadFile(filepath.Join(runA, f))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("%s does not name the request %q:\n%.2000s", f, want, b)
		}
	}

	written := map[string][]byte{"stdout and stderr": stdio.Bytes()}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || path == file {
			return err
		}
		b, err := os.ReadFile(path)
		written[path] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(written) < 12 {
		t.Fatalf("only %d outputs were written; the commands did not run as planned", len(written))
	}
	for name, b := range written {
		for _, s := range secrets {
			if i := bytes.Index(b, []byte(s)); i >= 0 {
				t.Errorf("%s holds secret %s: ...%s...", name, s, b[max(0, i-80):min(len(b), i+40)])
			}
		}
	}
}

// findRun returns the one run directory under out.
func findRun(t *testing.T, out string) string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(out, "*", "run.json"))
	if err != nil || len(m) != 1 {
		t.Fatalf("want one run directory under %s, got %v (%v)", out, m, err)
	}
	return filepath.Dir(m[0])
}

// knee k8s job's manifests on stdout (the README's "> job.yaml") are the
// file the user asked for: the terminal's scrubber leaves them whole, so the
// Secret holds the real credentials the runners send (it used to hold
// "http://REDACTED@host" and "Authorization: REDACTED"), and only the
// Secret holds them.
func TestK8sJobStdoutKeepsSecrets(t *testing.T) {
	dir := t.TempDir()
	sc := filepath.Join(dir, "s.yaml")
	scenario := `scenarios:
  a:
    executor: constant-arrival-rate
    rate: 10
    duration: 5s
    requests:
      - url: http://alice:K8S-pass-0001@127.0.0.1:1/?token=K8S-token-0001
        headers: {Authorization: "Bearer K8S-bearer-0001"}
`
	if err := os.WriteFile(sc, []byte(scenario), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := runKnee(t, "k8s", "job", sc, "--image", "knee:test", "--runners", "2")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	docs := strings.Split(out, "\n---\n")
	if !strings.Contains(docs[0], "kind: Secret") {
		t.Fatalf("the first document is not the Secret:\n%s", docs[0])
	}
	for _, s := range []string{"K8S-pass-0001", "K8S-token-0001", "Bearer K8S-bearer-0001"} {
		if !strings.Contains(docs[0], s) {
			t.Errorf("the Secret lost %q:\n%s", s, docs[0])
		}
		for i, d := range docs[1:] {
			if strings.Contains(d, s) {
				t.Errorf("document %d inlines %q", i+2, s)
			}
		}
	}
	if strings.Contains(out, "REDACTED") {
		t.Errorf("the manifests were scrubbed:\n%s", out)
	}
}
