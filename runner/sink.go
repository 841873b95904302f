package runner

import (
	"github.com/knee-dev/knee/load"
	"github.com/knee-dev/knee/record"
)

// sinkAdapter adapts record.Recorder to load.Recorder, so load never imports record.
type sinkAdapter struct{ r *record.Recorder }

var _ load.Sink = sinkAdapter{}

func (a sinkAdapter) Shard() load.ShardSink { return shard{a.r.Shard()} }

func (a sinkAdapter) Dropped(scenario string, n int64) { a.r.Dropped(scenario, n) }

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
	})
}
