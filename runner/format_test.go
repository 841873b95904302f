package runner

import (
	"testing"
	"time"
)

func TestShortDuration(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{0, "-"}, {250 * time.Microsecond, "250µs"}, {1500 * time.Microsecond, "1.50ms"},
		{42350 * time.Microsecond, "42.4ms"}, {2800 * time.Millisecond, "2.80s"},
	} {
		if got := shortDuration(tc.d); got != tc.want {
			t.Errorf("shortDuration(%v) = %q, want %q", tc.d, got, tc.want)
		}
	}
}

// A scenario from a file is fixed in the file, not by a flag; the second is
// the first drop's, truncated to tenths (a drop at 10.19 s is "from 10.1 s").
func TestDropNoticeFromFile(t *testing.T) {
	got := DropNotice("open", 497, 12500, 1000, 10190*time.Millisecond, "s.yaml")
	want := "DROPPED 497 of 12500 iterations (scenario open): all 1000 VUs (maxVUs) were busy from 10.1 s, " +
		"so these were never sent and no latency below includes them; to send them, set maxVUs: 1497 in scenario open of s.yaml"
	if got != want {
		t.Errorf("got\n %s\nwant\n %s", got, want)
	}
}
