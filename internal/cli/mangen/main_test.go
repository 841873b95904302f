package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/knee-dev/knee/internal/cli"
)

// Every command gets a page that names it, shows its example and, for the
// root, the KNEE_ variables and exit codes; groff renders each without a
// warning when it is installed.
func TestManPages(t *testing.T) {
	dir := t.TempDir()
	if err := run(dir, "1764547200"); err != nil {
		t.Fatal(err)
	}
	var want []string
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if !c.IsAvailableCommand() && c.HasParent() {
			return
		}
		want = append(want, strings.ReplaceAll(c.CommandPath(), " ", "-")+".1")
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(cli.Command(cli.Env{Getenv: func(string) string { return "" }}))
	if len(want) < 15 {
		t.Fatalf("only %d commands: %v", len(want), want)
	}
	_, groffErr := exec.LookPath("groff")
	if groffErr != nil {
		t.Log("groff not installed: pages are not rendered")
	}
	for _, name := range want {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Errorf("no page for %s: %v", name, err)
			continue
		}
		page := string(b)
		if !strings.Contains(page, `.TH "KNEE" "1" "Dec 2025"`) {
			t.Errorf("%s: header not dated from SOURCE_DATE_EPOCH:\n%.200s", name, page)
		}
		if !strings.Contains(page, ".SH EXAMPLE") {
			t.Errorf("%s: no EXAMPLE section", name)
		}
		if groffErr == nil { // -k: preconv, as man-db renders UTF-8 pages
			cmd := exec.Command("groff", "-k", "-man", "-Tutf8", "-ww", "-z", filepath.Join(dir, name))
			if out, err := cmd.CombinedOutput(); err != nil || len(out) > 0 {
				t.Errorf("groff %s: %v: %s", name, err, out)
			}
		}
	}
	root, _ := os.ReadFile(filepath.Join(dir, "knee.1"))
	for _, s := range []string{"KNEE_MAX_VUS", "Exit codes"} {
		if !strings.Contains(string(root), s) {
			t.Errorf("knee.1 does not mention %s", s)
		}
	}
}
