package gen

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// The committed schemas are what the Go types generate today: a changed
// type without `go generate ./internal/cli` fails here.
func TestCommittedSchemasUpToDate(t *testing.T) {
	files, err := Generate()
	if err != nil {
		t.Fatal(err)
	}
	const dir = "../../../../schema"
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Errorf("schema/%s: %v (run go generate ./internal/cli)", name, err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("schema/%s is out of date: run go generate ./internal/cli", name)
		}
	}
	committed, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	for _, p := range committed {
		if _, ok := files[filepath.Base(p)]; !ok {
			t.Errorf("schema/%s describes no output any more: run go generate ./internal/cli", filepath.Base(p))
		}
	}
}

// Generation is deterministic: two runs give the same bytes.
func TestGenerateDeterministic(t *testing.T) {
	a, err := Generate()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Generate()
	for name := range a {
		if !bytes.Equal(a[name], b[name]) {
			t.Errorf("%s differs between two generations", name)
		}
	}
}
