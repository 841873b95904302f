package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// knee run takes the scenario path as the shell gives it: a file with a
// mistake read through ./ or ../ is reported at its line (exit 2), never
// "invalid argument", and - reads the scenario from standard input.
func TestRunScenarioPathForms(t *testing.T) {
	root := t.TempDir()
	sub := filepath.Join(root, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	bad := "scenarios:\n  a:\n    executor: constant-vus\n    vus: -1\n    duration: 1s\n    requests: [{url: 'http://127.0.0.1:1/'}]\n"
	for _, dir := range []string{root, sub} {
		if err := os.WriteFile(filepath.Join(dir, "bad.yaml"), []byte(bad), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(sub)
	for _, tc := range []struct {
		path, want string
	}{
		{"./bad.yaml", "./bad.yaml:4"},
		{"../bad.yaml", "../bad.yaml:4"},
		{filepath.Join(root, "bad.yaml"), filepath.Join(root, "bad.yaml") + ":4"},
		{"-", "<stdin>:4"},
	} {
		var out, errb strings.Builder
		code := Main(Env{Args: []string{"run", tc.path}, Stdin: strings.NewReader(bad), Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }})
		if code != ExitUsage || !strings.Contains(errb.String(), tc.want) || strings.Contains(errb.String(), "invalid argument") {
			t.Errorf("knee run %s: exit %d, stderr %q; want exit 2 naming %q", tc.path, code, errb.String(), tc.want)
		}
	}
}
