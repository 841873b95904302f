package cli

import (
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A k6 script's request URLs carry secrets (userinfo, a named query value):
// the run is made, and no byte of the run directory, the k6 CSV output or
// the terminal holds either secret, while the requests are named by their
// masked URL.
func TestScriptSecretsStayOut(t *testing.T) {
	var seen int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("token") == "SCRIPTQ-5ecret" {
			seen++
		}
	}))
	defer srv.Close()
	dir := t.TempDir()
	url := strings.Replace(srv.URL, "http://", "http://alice:PW-userinfo-77@", 1) + "/item?token=SCRIPTQ-5ecret&page=2"
	script := filepath.Join(dir, "s.js")
	body := "import http from 'k6/http';\nexport const options = { vus: 1, iterations: 3 };\n" +
		"export default function () { http.get('" + url + "'); }\n"
	if err := os.WriteFile(script, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	csv := filepath.Join(dir, "out.csv")
	code, stdout, stderr := runKnee(t, "run", script, "--redact-query", "token", "--out", filepath.Join(dir, "runs"), "--out", "csv="+csv, "--quiet")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if seen != 3 {
		t.Errorf("the server saw the real token %d times, want 3: what is sent is unchanged", seen)
	}
	written := stdout + stderr
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || p == script {
			return err
		}
		b, err := os.ReadFile(p)
		written += string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"PW-userinfo-77", "SCRIPTQ-5ecret"} {
		if strings.Contains(written, secret) {
			t.Errorf("secret %q was written", secret)
		}
	}
	if !strings.Contains(written, "token=REDACTED&page=2") {
		t.Errorf("no request named by its masked URL (token=REDACTED&page=2) in the outputs")
	}
}
