package hostinfo

import (
	"time"

	"github.com/knee-dev/knee/record"
	"github.com/knee-dev/knee/rundir"
)

// FloorBesideMaxRate is the highest rate, in starts per second, of an open
// scenario whose floor is measured beside it (FloorBeside). On some machines
// (a virtual machine's kvm-clock) a thread wakes later from a longer wait:
// a bare 1 s wait ~1.2 ms late where a 1 ms one is ~45 µs late. So the
// floor measured before the run, with 1 ms waits, is the floor of runs
// whose starts come often, and below a run whose starts are 10 ms or more
// apart it is too low: knee, idle, would be blamed for the machine's
// lateness. At these rates the probe's one wake per start costs nothing
// the generator's CPU figures could show (bench/cost.sh measures from 300/s).
const FloorBesideMaxRate = 100.0

// Starts is the schedule of one open scenario's intended starts, as
// offsets since its first possible start (load/schedule.Schedule has both
// methods).
type Starts interface {
	// Offset is the intended start of iteration i; false past the end.
	Offset(i int64) (time.Duration, bool)
	// Duration is how long the schedule lasts.
	Duration() time.Duration
}

// fewLate is how many lateness values a probe keeps as they are before it
// moves them into a full histogram (~190 KB): the 200 waits before a run
// never need one, nor a run's of up to 34 minutes at 1 start/s.
const fewLate = 2048

// lateness is a probe's record of how late it woke: its values while they
// are few, a full histogram past fewLate of them.
type lateness struct {
	few  []time.Duration
	full *record.Histogram
}

func (l *lateness) add(d time.Duration) {
	if l.full == nil && len(l.few) < fewLate {
		l.few = append(l.few, d)
		return
	}
	if l.full == nil {
		l.full = record.HistogramOf(l.few)
		l.few = nil
	}
	l.full.Record(d)
}

// histogram holds every value added.
func (l *lateness) histogram() *record.Histogram {
	if l.full != nil {
		return l.full
	}
	return record.HistogramOf(l.few)
}

// floorOf is the floor a histogram of lateness holds.
func floorOf(late *record.Histogram, waits int, period time.Duration) *rundir.WakeFloor {
	return &rundir.WakeFloor{Waits: waits, Period: period,
		P50MS: late.Percentile(50).Seconds() * 1000, P99MS: late.Percentile(99).Seconds() * 1000}
}

// due is one wake of the probe beside a run: at, on CLOCK_MONOTONIC
// nanoseconds, half-way through the gap between two starts.
type due struct {
	at  int64
	gap time.Duration
}

// dues are the probe's wakes beside starts, whose offsets count from base:
// half-way between each start and the next, or the schedule's end after the
// last start. They stop where the schedule does.
func dues(starts Starts, base int64) func(yield func(due) bool) {
	return func(yield func(due) bool) {
		for i := int64(0); ; i++ {
			at, ok := starts.Offset(i)
			if !ok {
				return
			}
			next, ok := starts.Offset(i + 1)
			if !ok {
				next = starts.Duration()
			}
			if next <= at {
				return
			}
			if !yield(due{at: base + int64(at+(next-at)/2), gap: next - at}) {
				return
			}
		}
	}
}
