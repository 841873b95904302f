package runner

import (
	"sync"
	"time"

	"github.com/knee-dev/knee/load"
	"github.com/knee-dev/knee/record"
)

// sinkAdapter adapts record.Recorder to load.Sink, so load never imports
// record. It notes when each scenario first dropped an iteration (drops may
// be nil), for the summary's account of the drops.
type sinkAdapter struct {
	r     *record.Recorder
	drops *firstDrops
}

var _ load.Sink = sinkAdapter{}

func (a sinkAdapter) Shard() load.ShardSink { return shard{a.r.Shard()} }

func (a sinkAdapter) Dropped(scenario string, n int64) {
	a.r.Dropped(scenario, n)
	if a.drops != nil {
		a.drops.note(scenario, time.Now())
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

type shard struct{ s *record.Shard }

func (s shard) Record(x load.Sample) {
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
