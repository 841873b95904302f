// Package kneetest holds helpers shared by knee's tests. Only test files
// import it.
package kneetest

import (
	"os"
	"path/filepath"
	"testing"
)

// WriteFiles writes files (path relative to root → content) under root,
// making parent directories: fake /proc and cgroup trees for the probes.
func WriteFiles(t testing.TB, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
