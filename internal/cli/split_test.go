package cli

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestSplitFlags(t *testing.T) {
	tests := []struct {
		name    string
		f       splitFlags
		segment string
		err     string
	}{
		{"index picks the segment", splitFlags{sequence: "0,1/3,2/3,1", index: "2"}, "2/3:1", ""},
		{"segment in sequence", splitFlags{sequence: "0,1/4,2/4,3/4,1", segment: "1/4:2/4"}, "1/4:1/2", ""},
		{"segment alone", splitFlags{segment: "50%:1"}, "1/2:1", ""},
		{"index out of range", splitFlags{sequence: "0,1/2,1", index: "2"}, "", "want 0 to 1"},
		{"both", splitFlags{sequence: "0,1/2,1", index: "0", segment: "0:1/2"}, "", "not both"},
		{"not in sequence", splitFlags{sequence: "0,1/2,1", segment: "0:1/4"}, "", "not one of the sequence"},
		{"bad start", splitFlags{startAt: "tomorrow"}, "", "RFC 3339"},
	}
	for _, tt := range tests {
		sp, err := tt.f.parse()
		switch {
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("%s: error %v, want %q", tt.name, err, tt.err)
		case tt.err == "" && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.err == "" && sp.Share.Segment().String() != tt.segment:
			t.Errorf("%s: segment %s, want %s", tt.name, sp.Share.Segment(), tt.segment)
		}
	}
	sp, err := splitFlags{startAt: "2026-12-01T03:00:00.5Z"}.parse()
	if err != nil || !sp.StartAt.Equal(time.Date(2026, 12, 1, 3, 0, 0, 5e8, time.UTC)) {
		t.Errorf("start-at: %v, %v", sp.StartAt, err)
	}
}

// TestNewRunDirIsExclusive starts 20 runs' directories under one --out at
// once, as runners sharing a volume do within one second: each must get a
// directory of its own, made by the call, never one another call returned.
func TestNewRunDirIsExclusive(t *testing.T) {
	base := filepath.Join(t.TempDir(), "same")
	const n = 20
	dirs := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { dirs[i], errs[i] = newRunDir(base) })
	}
	wg.Wait()
	seen := map[string]bool{}
	for i, d := range dirs {
		if errs[i] != nil {
			t.Fatalf("call %d: %v", i, errs[i])
		}
		if seen[d] {
			t.Errorf("%s returned twice", d)
		}
		seen[d] = true
		if st, err := os.Stat(d); err != nil || !st.IsDir() {
			t.Errorf("%s: not made by newRunDir (%v)", d, err)
		}
	}
	entries, err := os.ReadDir(base)
	if err != nil || len(entries) != n {
		t.Errorf("%d directories under --out, want %d (%v)", len(entries), n, err)
	}
}
