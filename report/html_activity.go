package report

import (
	"github.com/knee-dev/knee/rundir"
)

// Activity is one interval of a run with every scenario's counters added:
// what the over-time charts draw beside the latency windows.
type Activity struct {
	StartS  float64 `json:"start_s"`
	EndS    float64 `json:"end_s"`
	Errors  int64   `json:"errors"`
	Dropped int64   `json:"dropped"`
	BusyVUs int     `json:"busy_vus"`
	VUs     int     `json:"vus"`
}

// ActivityOf adds up each interval's counters across scenarios, in time order.
func ActivityOf(r *rundir.Dir) []Activity {
	out := make([]Activity, 0, len(r.Intervals))
	for _, iv := range r.Intervals {
		a := Activity{StartS: iv.Start.Seconds(), EndS: iv.End.Seconds()}
		for _, name := range sortedKeys(iv.Counters) {
			c := iv.Counters[name]
			a.Errors += c.Counters.Errors
			a.Dropped += c.Counters.DroppedIterations
			a.BusyVUs += c.BusyVUs
			a.VUs += c.VUs
		}
		out = append(out, a)
	}
	return out
}
