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
		{0, "0"}, {250 * time.Microsecond, "250µs"}, {1500 * time.Microsecond, "1.50ms"},
		{42350 * time.Microsecond, "42.4ms"}, {2800 * time.Millisecond, "2.80s"},
	} {
		if got := shortDuration(tc.d); got != tc.want {
			t.Errorf("shortDuration(%v) = %q, want %q", tc.d, got, tc.want)
		}
	}
}
