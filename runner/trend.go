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

// RecordCheck passes a script's check() outcome to the recorder (k6script
// finds this method on its load.ShardSink).
func (s shard) RecordCheck(scenario string, pass bool) { s.s.RecordCheck(scenario, pass) }

// RecordIteration passes a script's finished iteration to the recorder
// (k6script finds this method on its load.ShardSink).
func (s shard) RecordIteration(scenario string, d time.Duration) { s.s.RecordIteration(scenario, d) }

// RecordPhases passes the phases of a script's request to the recorder
// (k6script finds this method on its load.ShardSink).
func (s shard) RecordPhases(scenario string, p record.Phases) { s.s.RecordPhases(scenario, p) }

// trendOf gives a script's Trend from the run directory: its series merged
// over every interval and scenario, as every latency merges.
// Every Trend is merged in one pass, on the first call: a script with
// thousands of group names asks for each, and a pass per name made the end
// of such a run cost names × intervals (minutes).
func trendOf(res *Result) func(name string) *record.Histogram {
	var byName map[string]*record.Histogram
	return func(name string) *record.Histogram {
		if res.Run == nil {
			return nil
		}
		if byName == nil {
			byName = map[string]*record.Histogram{}
			for _, iv := range res.Run.Intervals {
				for k, h := range iv.Histograms {
					if k.Metric != record.Trend {
						continue
					}
					have := byName[k.Name]
					if have == nil {
						have = record.NewHistogram()
						byName[k.Name] = have
					}
					have.Merge(h)
				}
			}
		}
		return byName[name] // nil: no value of it was recorded
	}
}
