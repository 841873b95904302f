package load

import "time"

// LoopIteration is an Iteration that can also run many iterations at once
// on one goroutine, as an event loop over non-blocking I/O. For the open
// model and the closed one, load then drives a scenario from one
// goroutine and no VU is a goroutine: a VU is an id, its iteration count
// and what the Loop keeps for it (its connection). A waiting VU costs a few hundred bytes rather
// than a goroutine, and a start costs no hand-off between goroutines: the
// goroutine that wakes at the intended time is the one that sends.
//
// NewLoop may return an error (the platform or the requests need the
// goroutine engine); load then runs the scenario with goroutine VUs.
type LoopIteration interface {
	Iteration
	NewLoop() (Loop, error)
}

// Loop runs iterations started on it. Every method but Wake must be called
// from the goroutine that called NewLoop; the Loop may lock that goroutine
// to its thread until Close.
type Loop interface {
	// Start begins iteration iter of VU vu and returns at once; the
	// iteration ends in a later Wait. A VU runs one iteration at a time.
	Start(vu, iter uint64)
	// Wait blocks until at least one started iteration has ended, until
	// the clock reaches until, or until Wake is called, whichever is first,
	// and appends the iterations that have ended to ended. Each Result has
	// Sent and Done stamped. A zero until waits without a time limit. When
	// until is a few milliseconds away, a Loop may sleep through the ends
	// of iterations to wake once, at until, and return then without them,
	// for the caller's starts to go first; the next Wait returns them, each
	// Done when it ended, not when Wait saw it.
	Wait(until time.Time, ended []Ended) []Ended
	// WakeOnEnds makes every later Wait return as soon as an iteration
	// has ended, never sleeping through ends: the closed model starts a
	// VU's next iteration when its last one ends.
	WakeOnEnds()
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

// Ended is one iteration that has ended on a Loop.
type Ended struct {
	VU uint64
	Result
}
