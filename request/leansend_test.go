package request

import (
	"strings"
	"testing"
	"time"
)

// arrivedAt carries the kernel's receive time onto the monotonic clock
// through the read's time, and keeps the read's time when there is no
// receive time or a step of the wall clock put it outside the exchange.
func TestArrivedAt(t *testing.T) {
	now := time.Now() // with a monotonic reading, as the callers' are
	sent := now.Add(-10 * time.Millisecond)
	wall := now.UnixNano()
	for _, tt := range []struct {
		name string
		rx   int64
		want time.Duration // before now
	}{
		{"no receive time", 0, 0},
		{"3 ms before the read", wall - int64(3*time.Millisecond), 3 * time.Millisecond},
		{"as the request was sent", wall - int64(10*time.Millisecond), 10 * time.Millisecond},
		{"at the read", wall, 0},
		{"before the send (wall clock stepped back)", wall - int64(11*time.Millisecond), 0},
		{"after the read (wall clock stepped ahead)", wall + 1, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := arrivedAt(tt.rx, sent, now)
			if d := now.Sub(got); d != tt.want {
				t.Errorf("arrived %v before the read, want %v", d, tt.want)
			}
			if !strings.Contains(got.String(), " m=") { // String shows a monotonic reading as m=±…
				t.Error("the time lost its monotonic reading")
			}
		})
	}
}
