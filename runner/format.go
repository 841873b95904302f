package runner

import (
	"fmt"
	"time"
)

// shortDuration formats d with 3-4 significant digits and a unit, as the
// reports do, for the progress line: runner does not import report.
func shortDuration(d time.Duration) string {
	ms := float64(d) / float64(time.Millisecond)
	switch {
	case d == 0: // an interval with no response: there is no p99, not a p99 of 0
		return "-"
	case ms < 1:
		return fmt.Sprintf("%.0fµs", ms*1000)
	case ms < 10:
		return fmt.Sprintf("%.2fms", ms)
	case ms < 1000:
		return fmt.Sprintf("%.1fms", ms)
	default:
		return fmt.Sprintf("%.2fs", ms/1000)
	}
}
