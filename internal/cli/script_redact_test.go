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

// -e values are secrets when their name says so (API_TOKEN) or when
// --secret-env names them (PLAIN): an exception that carries them reaches
// neither the terminal nor the run directory, while the script still got
// the real values (it threw them). A value whose name says nothing (REGION)
// is not masked.
func TestScriptSecretEnvMasked(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "s.js")
	body := "export const options = { vus: 1, iterations: 2 };\n" +
		"export default function () { throw new Error('token ' + __ENV.API_TOKEN + ' plain ' + __ENV.PLAIN + ' region ' + __ENV.REGION); }\n"
	if err := os.WriteFile(script, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runKnee(t, "run", script, "-e", "API_TOKEN=tok-3x4mpl3-99", "-e", "PLAIN=plain-s3cr3t-42", "-e", "REGION=eu-west-3a",
		"--secret-env", "PLAIN", "--out", filepath.Join(dir, "runs"), "--quiet")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	written := stdout + stderr
	if err := filepath.WalkDir(filepath.Join(dir, "runs"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		written += string(b)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"tok-3x4mpl3-99", "plain-s3cr3t-42"} {
		if strings.Contains(written, secret) {
			t.Errorf("secret %q was written", secret)
		}
	}
	if !strings.Contains(written, "token REDACTED plain REDACTED region eu-west-3a") {
		t.Errorf("the exception is not reported with its secrets masked:\n%s", written)
	}
}
