package load

import (
	"context"
	"slices"
	"sync"
	"time"
)

// fakeRecorder keeps every sample and drop; test only.
type fakeRecorder struct {
	mu      sync.Mutex
	samples []Sample
	dropped map[string]int64
	shards  int
}

func (f *fakeRecorder) Shard() ShardSink {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.shards++
	return fakeShard{f}
}

func (f *fakeRecorder) Dropped(scenario string, n int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.dropped == nil {
		f.dropped = map[string]int64{}
	}
	f.dropped[scenario] += n
}

func (f *fakeRecorder) all() []Sample {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.samples)
}

type fakeShard struct{ f *fakeRecorder }

func (s fakeShard) Record(smp Sample) {
	s.f.mu.Lock()
	defer s.f.mu.Unlock()
	s.f.samples = append(s.f.samples, smp)
}

// target is a fake Iteration: it answers after service, except that a call
// made during [stallFrom, stallTo) waits until stallTo (a stalled server).
// It stamps Sent after sendDelay (a slow generator) and logs call times.
type target struct {
	service            time.Duration
	sendDelay          time.Duration
	stallFrom, stallTo time.Time
	mu                 sync.Mutex
	calls              []time.Time
}

func (tg *target) Do(ctx context.Context, vu, iter uint64) Result {
	called := time.Now()
	tg.mu.Lock()
	tg.calls = append(tg.calls, called)
	tg.mu.Unlock()
	if tg.sendDelay > 0 && !sleep(ctx, tg.sendDelay) {
		return Result{Err: ctx.Err(), Sent: time.Now(), Done: time.Now()}
	}
	sent := time.Now()
	wait := tg.service
	if !sent.Before(tg.stallFrom) && sent.Before(tg.stallTo) {
		wait = tg.stallTo.Sub(sent)
	}
	if !sleep(ctx, wait) {
		return Result{Err: ctx.Err(), Sent: sent, Done: time.Now()}
	}
	return Result{Status: 200, Sent: sent, Done: time.Now()}
}

// callOffsets returns the call times since t0, sorted.
func (tg *target) callOffsets(t0 time.Time) []time.Duration {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	out := make([]time.Duration, len(tg.calls))
	for n, c := range tg.calls {
		out[n] = c.Sub(t0)
	}
	slices.Sort(out)
	return out
}

// sleep waits d or until ctx is done; false when ctx ended it.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
