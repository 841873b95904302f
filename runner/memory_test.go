package runner

import (
	"runtime/metrics"
	"testing"
	"time"
)

// forcedGCs is the process's count of forced GC cycles (debug.FreeOSMemory
// forces one).
func forcedGCs() uint64 {
	s := []metrics.Sample{{Name: "/gc/cycles/forced:gc-cycles"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// returnMemory gives the heap back at the first stall's end, not again
// within returnGap, and again after it.
func TestReturnMemoryAtMostOncePerGap(t *testing.T) {
	e := &engine{}
	before := forcedGCs()
	e.returnMemory()
	e.returnMemory() // within the gap: nothing
	if got := forcedGCs() - before; got != 1 {
		t.Fatalf("two calls in a row forced %d GCs, want 1", got)
	}
	e.returned.Store(time.Now().Add(-returnGap - time.Second).UnixNano())
	e.returnMemory()
	if got := forcedGCs() - before; got != 2 {
		t.Errorf("a call after the gap: %d forced GCs in all, want 2", got)
	}
}
