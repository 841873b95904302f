// Package load generates load: executors with k6's names and semantics
// (constant-arrival-rate, ramping-arrival-rate, constant-vus, ramping-vus),
// the VU pool, dropped iterations and graceful stop.
//
// It knows nothing of HTTP, histograms or reports: an Iteration does the work
// and a Sink receives Samples. Open-model executors count latency from the
// intended start (t0 + schedule offset, monotonic clock) and drop an iteration
// that finds no free VU when MaxVUs are busy; they never send it late.
// Their VU pool grows as fast as the schedule demands and shrinks again:
// a VU beyond the pre-allocated ones that sits idle (Options.RetireIdle)
// retires, and the Iteration releases what it held for it (VUReleaser).
//
// An Iteration that can run many iterations at once on one goroutine, over
// non-blocking I/O (LoopIteration: request.Sender for plain http://), runs
// on the event-loop engine: one goroutine per scenario starts iterations on
// its Loop and waits on the Loop; a VU is then an id and its iteration
// count, not a goroutine. In the open model (loopopen.go) it starts each due
// iteration and waits until the next start or until iterations end; in the
// closed model (loopclosed.go) a VU's next iteration starts when its last
// one ends (after its think time), so the Loop returns on every end. Every
// other Iteration runs a goroutine per VU. Both engines share the schedule
// and the rules: same starts, drops, pool growth, retirement, ramp-downs and
// stops (the tests of both models run on both). The VU pool's rules (which VU takes a
// start, a new VU or a drop, retirement, the parked identities of retired
// VUs) are one type both engines call (pool.go); an engine adds only how
// its VUs wait and run.
//
// Entry points: Generate, or NewGenerator then Generator.Run with Generator.Stats for a
// live progress line. The arrival-time maths is in package load/schedule.
//
// Concurrency: Iteration.Do is called from many VU goroutines at once; each
// VU goroutine takes one Sink.Shard (on the loop engine, each scenario's
// goroutine takes one and is the only caller of its Loop); Sink.Dropped is
// called from the scheduler goroutines. Generator.Stats is lock-free and may be called anytime.
package load

import (
	"context"
	"time"

	"github.com/knee-dev/knee/load/schedule"
)

// Result is what one iteration did. Sent and Done are stamped by the Iteration
// around the request itself.
type Result struct {
	Name     string // request name tag
	Status   int    // HTTP status; 0 when the request failed
	ErrClass string // "" or timeout, refused, reset, dns, tls, other
	Err      error
	// Expected is a k6 script's response callback's verdict: 1 the
	// response was expected, -1 it was not; 0 when no callback decided,
	// and k6's default rule holds (failed: a transport error or a status
	// of 400 or more).
	Expected int8
	BytesIn  int64
	BytesOut int64
	Sent     time.Time
	Done     time.Time
}

// Iteration is one unit of work of a VU. Do must be safe for concurrent use
// by many VUs and must return when ctx is done.
type Iteration interface {
	Do(ctx context.Context, vu, iter uint64) Result
}

// Sample is one finished iteration, with its durations already worked out.
type Sample struct {
	Scenario string
	Result
	Latency  time.Duration // Done - intended (open) or Done - Sent (closed)
	Service  time.Duration // Done - Sent
	SendLag  time.Duration // Sent - intended (open model), else 0
	Interval time.Duration // closed model: time since this VU's previous iteration start (response + think); service + think for its first; else 0
}

// Sink receives Samples. It must be safe for concurrent use; each VU
// goroutine calls Shard once and records only through its own shard.
type Sink interface {
	Shard() ShardSink
	Dropped(scenario string, n int64)
}

// LateSink is a Sink told which drops are the generator's: iterations an
// open scenario, behind its schedule, had not started by its grace
// deadline. A Sink without it gets them through Dropped.
type LateSink interface {
	DroppedLate(scenario string, n int64)
}

// ShardSink records the samples of one goroutine.
type ShardSink interface {
	Record(Sample)
}

// Stage is one linear ramp of a ramping executor: to Target over Duration.
// Target is iterations per TimeUnit (arrival rate) or VUs (ramping-vus).
// It is schedule.Stage, so stages pass to the schedule maths unconverted.
type Stage = schedule.Stage

// ConstantArrivalRate starts Rate iterations per TimeUnit for Duration.
type ConstantArrivalRate struct {
	Rate            float64
	TimeUnit        time.Duration // default 1s
	Duration        time.Duration
	PreAllocatedVUs int
	MaxVUs          int            // default PreAllocatedVUs... see Validate
	Share           schedule.Share // this runner's part of the test (Segment); zero is the whole
}

// RampingArrivalRate ramps the arrival rate linearly through Stages from StartRate.
type RampingArrivalRate struct {
	StartRate       float64
	TimeUnit        time.Duration
	Stages          []Stage
	PreAllocatedVUs int
	MaxVUs          int
	Share           schedule.Share // this runner's part of the test (Segment); zero is the whole
}

// ConstantVUs runs VUs closed-model loops (request, then Think) for Duration.
type ConstantVUs struct {
	VUs      int
	Duration time.Duration
	Think    time.Duration
}

// RampingVUs ramps the number of looping VUs through Stages from StartVUs.
type RampingVUs struct {
	StartVUs int
	Stages   []Stage
	Think    time.Duration
}
