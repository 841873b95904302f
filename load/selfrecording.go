package load

import (
	"context"
	"time"
)

// SelfRecording is an Iteration that records its own Samples, because one
// iteration may send several requests (a k6 script's default function).
// The executors check for it once per VU; they then call DoRecord instead
// of Do and record nothing themselves for that iteration. They still keep
// the iteration counts, busy VUs and dropped iterations.
//
// Honest timing is the implementation's duty: in the open model every
// request counts its latency from Start.Intended plus its offset from
// Start.Called; in the closed model it records Start.Interval (or, for a
// VU's first iteration, the iteration's own duration) once per iteration.
type SelfRecording interface {
	Iteration
	DoRecord(ctx context.Context, st Start, shard ShardSink)
}

// Start is when and how one iteration started.
type Start struct {
	Scenario string
	VU, Iter uint64
	// Intended is when the schedule meant it to start (open model); zero in
	// the closed model.
	Intended time.Time
	// Called is when the executor called DoRecord.
	Called time.Time
	// Interval is, in the closed model, the time since this VU's previous
	// iteration started; 0 for its first iteration and in the open model.
	Interval time.Duration
}
