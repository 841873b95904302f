package hostinfo

import (
	"context"
	"testing"
	"time"
)

// The floor is a distribution of real waits: as many as asked, p50 at most
// p99, neither negative; a context already ended measures nothing.
func TestWakeFloor(t *testing.T) {
	f := WakeFloor(context.Background(), 20, time.Millisecond)
	if f == nil {
		t.Fatal("no floor measured")
	}
	if f.Waits != 20 || f.Period != time.Millisecond || f.P50MS < 0 || f.P99MS < f.P50MS {
		t.Errorf("floor %+v: want 20 waits of 1 ms, 0 <= p50 <= p99", f)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if f := WakeFloor(ctx, 20, time.Millisecond); f != nil {
		t.Errorf("an ended context measured %+v", f)
	}
}
