package load

import "time"

// LoopIteration is an Iteration that can also run many iterations at once
// on one goroutine, as an event loop over non-blocking I/O. For the open
// model, load then drives a scenario from one goroutine and no VU is a
// goroutine: a VU is an id, its iteration count and what the Loop keeps
// for it (its connection). A waiting VU costs a few hundred bytes rather
// than a goroutine, and a start costs no hand-off between goroutines: the
// goroutine that wakes at the intended time is the one that sends.
//
// NewLoop may return an error (the platform or the requests need the
// goroutine engine); load then runs the scenario with goroutine VUs.
type LoopIteration interface {
	Iteration
	NewLoop() (Loop, error)
}

// Loop runs iterations started on it. It is not safe for concurrent use:
// every method but Wake is called by one goroutine at a time (load makes
// it, and warms it, while preparing the scenario, and runs it on the
// scenario's goroutine).
type Loop interface {
	// Start begins iteration iter of VU vu and returns at once; the
	// iteration ends in a later Wait. A VU runs one iteration at a time.
	Start(vu, iter uint64)
	// Wait blocks until at least one started iteration has ended, until
	// the clock reaches until, or until Wake is called, whichever is first,
	// and appends the iterations that have ended to ended. Each Result has
	// Sent and Done stamped. A zero until waits without a time limit.
	Wait(until time.Time, ended []Ended) []Ended
	// Wake makes a blocked Wait return, or the next one return at once.
	// Any goroutine may call it.
	Wake()
	// Cancel ends every started iteration now, as interrupted (the run
	// stopped); the next Waits return them.
	Cancel()
	// Release frees what VU vu holds (its connection): it has retired, or
	// the scenario has ended.
	Release(vu uint64)
	// Close releases everything; no iteration may be in flight.
	Close() error
}

// LoopWarmer is a Loop that can make ready, before the schedule starts,
// what a VU's iteration will need (the lean client opens its connection).
// load warms each pre-allocated VU's first iteration: a pre-allocated VU
// then holds its connection from the start, as a k6 VU holds one after
// its first iteration, and the first starts do not each wait for a
// connect. Warm is called before the scenario's clock starts, so it may
// block (for a name lookup); it reports nothing: what it could not make
// ready is made, and its error counted, at the start.
type LoopWarmer interface {
	Warm(vu, iter uint64)
}

// Ended is one iteration that has ended on a Loop.
type Ended struct {
	VU uint64
	Result
}
