package runner

import (
	"testing"
	"time"
)

// k6 judges thresholds on a 2 s ticker: the next tick after any elapsed
// time is the next multiple of 2 s, whatever the interval's lateness.
func TestNextJudgement(t *testing.T) {
	for _, tc := range []struct {
		elapsed, want time.Duration
	}{
		{0, 2 * time.Second},                                  // before the first tick
		{1001 * time.Millisecond, 2 * time.Second},            // the first 1 s interval: not judged yet
		{2 * time.Second, 4 * time.Second},                    // on the tick
		{2002 * time.Millisecond, 4 * time.Second},            // a little late: the same tick
		{5 * time.Second, 6 * time.Second},                    // a 5 s interval: the tick at 6 s is next
		{3999 * time.Millisecond, 4 * time.Second},            // just before a tick
		{59*time.Second + time.Millisecond, 60 * time.Second}, // late in a run
	} {
		if got := nextJudgement(tc.elapsed); got != tc.want {
			t.Errorf("nextJudgement(%v) = %v, want %v", tc.elapsed, got, tc.want)
		}
	}
}
