package runner

import (
	"time"

	"github.com/knee-dev/knee/record"
)

// RecordTrend passes a script's Trend value to the recorder (k6script
// finds this method on its load.ShardSink).
func (s shard) RecordTrend(scenario, name string, d time.Duration) {
	s.s.RecordTrend(scenario, name, d)
}

// trendOf gives a script's Trend from the run directory: its series merged
// over every interval and scenario, as every latency merges.
func trendOf(res *Result) func(name string) *record.Histogram {
	return func(name string) *record.Histogram {
		if res.Run == nil {
			return nil
		}
		return res.Run.Merged(func(k record.Key) bool { return k.Metric == record.Trend && k.Name == name }, 0, 0)
	}
}
