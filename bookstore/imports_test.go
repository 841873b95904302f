package bookstore

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImportsNoKneePackage holds the design's line: the sample target
// depends on nothing of knee, so it can be measured like any other service.
func TestImportsNoKneePackage(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go tool not on PATH")
	}
	out, err := exec.Command(goTool, "list", "-deps", "-f", "{{.ImportPath}}", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	const self = "github.com/knee-dev/knee/bookstore"
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasPrefix(pkg, "github.com/knee-dev/knee") && pkg != self {
			t.Errorf("bookstore imports %s", pkg)
		}
	}
}
