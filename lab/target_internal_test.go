package lab

import (
	"bytes"
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
