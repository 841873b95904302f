package analyze

import (
	"container/heap"
	"time"

	"github.com/knee-dev/knee/record"
	"github.com/knee-dev/knee/rundir"
)

// queueTarget is a simulated target: Workers servers, FIFO, each request
// taking Service, or Service*(1 + Slowdown*waiting) when Slowdown > 0 (a
// target that degrades as its queue grows: every waiting request costs the
// others time, as a thrashing pool does). An arrival that finds MaxVUs
// requests already in the system is dropped, as the open model does.
type queueTarget struct {
	Workers  int
	Service  time.Duration
	Slowdown float64
	MaxVUs   int
}

// completions is a min-heap of completion times of requests in the system.
type completions []time.Duration

func (c completions) Len() int           { return len(c) }
func (c completions) Less(i, j int) bool { return c[i] < c[j] }
func (c completions) Swap(i, j int)      { c[i], c[j] = c[j], c[i] }
func (c *completions) Push(x any)        { *c = append(*c, x.(time.Duration)) }
func (c *completions) Pop() any {
	old := *c
	x := old[len(old)-1]
	*c = old[:len(old)-1]
	return x
}

// simulate runs plan against q with deterministic arrivals at
// begin + k/rate within each step (the jump is simulated at the step's new
// rate; it is dropped by the warmup anyway) and returns a run of 1 s
// intervals: latencies recorded in the interval in which requests complete,
// dropped iterations in the interval in which they arrived, target_rate
// and busy VUs per interval.
func simulate(q queueTarget, plan StepPlan) *rundir.Dir {
	end := plan.Offset + time.Duration(plan.Steps)*plan.Period()
	n := int(end / time.Second)
	r := &rundir.Dir{Intervals: make([]rundir.Interval, n)}
	counters := make([]rundir.IntervalCounters, n)
	hists := make([]*record.Histogram, n)
	for i := range n {
		hists[i] = record.NewHistogram()
		counters[i] = rundir.IntervalCounters{
			Scenario: "steps", Start: float64(i), End: float64(i + 1),
			Counters: record.Counters{ByStatus: map[string]int64{}, ErrorsByClass: map[string]int64{}},
		}
	}
	free := make([]time.Duration, q.Workers) // when each worker is next free
	var inSystem completions
	for step := range plan.Steps {
		begin, _, stepEnd := plan.Window(step)
		rate := plan.Rate(step)
		for i := range n {
			if t := time.Duration(i) * time.Second; t >= begin && t < stepEnd {
				counters[i].TargetRate = rate
			}
		}
		for k := 0; ; k++ {
			a := begin + time.Duration(float64(k)*float64(time.Second)/rate)
			if a >= stepEnd {
				break
			}
			for inSystem.Len() > 0 && inSystem[0] <= a {
				heap.Pop(&inSystem)
			}
			slot := int(a / time.Second)
			counters[slot].BusyVUs = max(counters[slot].BusyVUs, inSystem.Len())
			if inSystem.Len() >= q.MaxVUs {
				counters[slot].Counters.DroppedIterations++
				continue
			}
			w := 0
			for j := range free {
				if free[j] < free[w] {
					w = j
				}
			}
			waiting := max(0, inSystem.Len()-q.Workers)
			service := time.Duration(float64(q.Service) * (1 + q.Slowdown*float64(waiting)))
			done := max(a, free[w]) + service
			free[w] = done
			heap.Push(&inSystem, done)
			if c := int(done / time.Second); c < n {
				hists[c].Record(done - a)
				counters[c].Counters.Requests++
				counters[c].Counters.ByStatus["2xx"]++
			}
		}
	}
	for i := range n {
		r.Intervals[i] = rundir.Interval{
			Start: time.Duration(i) * time.Second, End: time.Duration(i+1) * time.Second,
			Histograms: map[record.Key]*record.Histogram{{Metric: record.Latency, Scenario: "steps", Name: "GET /"}: hists[i]},
			Counters:   map[string]rundir.IntervalCounters{"steps": counters[i]},
		}
	}
	return r
}
