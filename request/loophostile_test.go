package request

import (
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/knee-dev/knee/internal/hostile"
)

// Against each of internal/hostile's misbehaving servers the loop ends
// every request in the class Do ends it in, on time, and keeps nothing of a
// response it could not hold (a 1 GB body, a 20 MB header line): those go
// to the blocking parser, whose memory is Do's.
func TestLoopHostileTargets(t *testing.T) {
	if !loopPlatform {
		t.Skip("no event loop on this platform")
	}
	tests := []struct {
		name    string
		serve   hostile.Behavior
		timeout time.Duration
		class   string // of every request, through Do and the loop ("" for none)
		heavy   bool   // skipped by -short
	}{
		{"never answers", hostile.Silent, 200 * time.Millisecond, ClassTimeout, false},
		{"accepts, never reads", hostile.NoRead, 200 * time.Millisecond, ClassTimeout, false},
		{"a byte a second", hostile.Trickle, 300 * time.Millisecond, ClassTimeout, false},
		{"1 GB body", hostile.HugeBody(1 << 30), 300 * time.Millisecond, ClassTimeout, true},
		{"100,000 headers, 11 MB", hostile.ManyHeaders(100_000, 110), 5 * time.Second, ClassOther, true},
		{"100,000 headers, 2 MB", hostile.ManyHeaders(100_000, 20), 5 * time.Second, "", false},
		{"20 MB header line", hostile.LongHeader(20 << 20), 5 * time.Second, ClassOther, true},
		{"invalid chunked framing", hostile.BadChunked, time.Second, ClassOther, false},
		{"reset mid-response", hostile.Reset, time.Second, ClassReset, false},
		{"half-close mid-response", hostile.HalfClose, time.Second, ClassReset, false},
		{"redirect loop", hostile.RedirectLoop, time.Second, "", false},
	}
	const vus, iters = 3, 2
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.heavy && testing.Short() {
				t.Skip("moves hundreds of MB")
			}
			srv, err := hostile.Start(tt.serve)
			if err != nil {
				t.Fatal(err)
			}
			var closeOnce sync.Once
			stop := func() { closeOnce.Do(srv.Close) }
			defer stop()
			specs := []Spec{{URL: fmt.Sprintf("http://%s/", srv.Addr()), Timeout: tt.timeout}}
			want := runDo(newSender(t, specs, Options{}), vus, iters)
			var before runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			got := runLoop(t, newTestLoop(t, newSender(t, specs, Options{})), vus, iters)
			stop() // its handlers hold what they write
			var after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&after)
			for k, g := range got {
				w := want[k]
				if g.ErrClass != w.ErrClass || g.ErrClass != tt.class || g.Status != w.Status {
					t.Errorf("vu %d iter %d: loop %d %q (%v), Do %d %q (%v); want class %q", k.vu, k.iter, g.Status, g.ErrClass, g.Err, w.Status, w.ErrClass, w.Err, tt.class)
				}
				if d := g.Done.Sub(g.Sent); d > tt.timeout+time.Second {
					t.Errorf("vu %d iter %d: took %v, timeout %v", k.vu, k.iter, d, tt.timeout)
				}
			}
			if grew := int64(after.HeapAlloc) - int64(before.HeapAlloc); grew > 8<<20 {
				t.Errorf("the loop kept %d MB after its requests", grew>>20)
			}
		})
	}
}
