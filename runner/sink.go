package runner

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/knee-dev/knee/load"
	"github.com/knee-dev/knee/record"
)

// sinkAdapter adapts record.Recorder to load.Sink, so load never imports
// record. It notes when each scenario first dropped an iteration (drops may
// be nil), for the summary's account of the drops.
type sinkAdapter struct {
	r      *record.Recorder
	drops  *firstDrops
	fail   *firstFailure                  // may be nil
	onDrop func(scenario string, n int64) // Options.OnDropped; may be nil
}

var (
	_ load.Sink     = sinkAdapter{}
	_ load.LateSink = sinkAdapter{}
)

func (a sinkAdapter) Shard() load.ShardSink { return shard{a.r.Shard(), a.fail} }

func (a sinkAdapter) Dropped(scenario string, n int64) {
	a.r.Dropped(scenario, n)
	if a.drops != nil {
		a.drops.note(scenario, time.Now())
	}
	if a.onDrop != nil {
		a.onDrop(scenario, n)
	}
}

// DroppedLate counts drops of a generator behind its schedule; they say
// nothing of when the VUs ran out, so they leave firstDrops alone.
func (a sinkAdapter) DroppedLate(scenario string, n int64) {
	a.r.DroppedLate(scenario, n)
	if a.onDrop != nil {
		a.onDrop(scenario, n)
	}
}

// firstDrops is when each scenario first dropped an iteration. Drops come
// from load's scheduler goroutines, only when every VU is busy.
type firstDrops struct {
	mu sync.Mutex
	at map[string]time.Time
}

func (f *firstDrops) note(scenario string, now time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.at[scenario]; !ok {
		if f.at == nil {
			f.at = map[string]time.Time{}
		}
		f.at[scenario] = now
	}
}

func (f *firstDrops) first(scenario string) (time.Time, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	t, ok := f.at[scenario]
	return t, ok
}

// firstFailure is the first failed request's error (or status), for the
// summary's headline when every request failed. The flag keeps the
// recording path to one atomic load once it is set.
type firstFailure struct {
	set atomic.Bool
	mu  sync.Mutex
	msg string
}

func (f *firstFailure) note(x load.Sample) {
	if f == nil || f.set.Load() {
		return
	}
	var msg string
	switch {
	case x.Err != nil:
		msg = x.Err.Error()
	case x.Status == 0:
		msg = "no response (" + x.ErrClass + ")"
	case x.Expected < 0 || (x.Expected == 0 && x.Status >= 400):
		msg = fmt.Sprintf("HTTP status %d", x.Status)
	default:
		return
	}
	f.mu.Lock()
	if f.msg == "" {
		f.msg = msg
		f.set.Store(true)
	}
	f.mu.Unlock()
}

func (f *firstFailure) get() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.msg
}

type shard struct {
	s    *record.Shard
	fail *firstFailure
}

func (s shard) Record(x load.Sample) {
	s.fail.note(x)
	s.s.Record(record.Sample{
		Key:      record.Key{Scenario: x.Scenario, Name: x.Name},
		Latency:  x.Latency,
		Service:  x.Service,
		SendLag:  x.SendLag,
		Interval: x.Interval,
		Status:   x.Status,
		ErrClass: x.ErrClass,
		BytesIn:  x.BytesIn,
		BytesOut: x.BytesOut,
		Expected: x.Expected,
	})
}
