package cli

import (
	"strings"
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
