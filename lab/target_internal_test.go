package lab

import (
	"bytes"
	"strings"
	"testing"
)

// The child's lines are marked, across writes, and its blank lines dropped.
func TestPrefixWriter(t *testing.T) {
	var out bytes.Buffer
	w := &prefixWriter{w: &out, prefix: "bookstore: "}
	for _, s := range []string{"\nfirst ", "line\n", "second\n\n", "third"} {
		if n, err := w.Write([]byte(s)); n != len(s) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", s, n, err)
		}
	}
	want := "bookstore: first line\nbookstore: second\nbookstore: third"
	if out.String() != want {
		t.Errorf("got %q, want %q", out.String(), want)
	}
}

func TestChildEnvDropsKneeFlags(t *testing.T) {
	got := childEnv([]string{"PATH=/bin", "KNEE_CPUS=0.1", "KNEE_TEST_AS_KNEE=1", "HOME=/root", "KNEE_OUT=x"})
	want := []string{"PATH=/bin", "KNEE_TEST_AS_KNEE=1", "HOME=/root"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("childEnv = %q, want %q", got, want)
	}
}
