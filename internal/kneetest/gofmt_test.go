package kneetest

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Every Go file of the repository is as gofmt writes it.
func TestGofmt(t *testing.T) {
	gofmt := filepath.Join(strings.TrimSpace(goEnv(t, "GOROOT")), "bin", "gofmt")
	out, err := exec.Command(gofmt, "-l", "../..").CombinedOutput()
	if err != nil {
		t.Fatalf("gofmt -l: %v: %s", err, out)
	}
	if files := strings.Fields(string(out)); len(files) > 0 {
		t.Errorf("not gofmt-clean (run gofmt -w): %s", strings.Join(files, " "))
	}
}

func goEnv(t *testing.T, name string) string {
	t.Helper()
	out, err := exec.Command("go", "env", name).Output()
	if err != nil {
		t.Fatalf("go env %s: %v", name, err)
	}
	return string(out)
}
