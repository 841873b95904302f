package request

import (
	"context"
	"sync/atomic"
	"testing"
)

// BenchmarkDo measures the generator's own cost per request (ns and
// allocations) through each client against a loopback server that
// allocates nothing (fixedServer), so the allocations reported are the
// client's: every µs here is taken from the target when both share a
// machine. Each parallel goroutine is a VU of its own, with its own
// keep-alive connection, as in a run.
func BenchmarkDo(b *testing.B) {
	url := fixedServer(b)
	for _, cl := range []client{{"lean", false, false}, {"net/http", true, false}} {
		for _, c := range allocCases(url) {
			b.Run(cl.name+"/"+c.name, func(b *testing.B) {
				s := cl.sender(b, []Spec{c.spec}, Options{Vars: allocVars})
				var vus atomic.Uint64
				b.ReportAllocs()
				b.ResetTimer()
				b.RunParallel(func(pb *testing.PB) {
					vu := vus.Add(1)
					for iter := uint64(0); pb.Next(); iter++ {
						if res := s.Do(context.Background(), vu, iter); res.Err != nil || res.Status != 200 {
							b.Fatalf("status %d, err %v", res.Status, res.Err)
						}
					}
				})
			})
		}
	}
}
