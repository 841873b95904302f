package runner

import (
	"maps"
	"time"

	"github.com/knee-dev/knee/record"
	"github.com/knee-dev/knee/rundir"
)

// totals is the whole run merged into one interval, kept in memory so that
// a run whose directory could not be written whole still has its summary.
// Its size is one histogram per series, whatever the run's length.
type totals struct {
	seen       bool
	start, end time.Duration // the first interval's start, the last one's end
	hist       map[record.Key]*record.Histogram
	counters   map[string]rundir.IntervalCounters // TargetRate holds iterations due, until dir
}

func newTotals() *totals {
	return &totals{hist: map[record.Key]*record.Histogram{}, counters: map[string]rundir.IntervalCounters{}}
}

// add merges one interval; extra's TargetRate is per second over the interval.
func (t *totals) add(snap record.IntervalSnapshot, extra map[string]rundir.IntervalCounters) {
	if !t.seen {
		t.seen, t.start = true, snap.Start
	}
	t.end = snap.End
	for k, h := range snap.Histograms {
		have, ok := t.hist[k]
		if !ok {
			// Packed until a second interval adds to it: a name seen once
			// (a unique URL) keeps a few hundred bytes, not ~190 KB.
			t.hist[k] = h.Packed()
			continue
		}
		have.Merge(h)
	}
	secs := (snap.End - snap.Start).Seconds()
	for _, s := range scenariosOf(snap.Counters, extra) {
		ic := t.counters[s]
		ic.Scenario = s
		ic.Counters.Add(snap.Counters[s])
		ic.TargetRate += extra[s].TargetRate * secs
		t.counters[s] = ic
	}
}

// dir is the run as one interval, with meta as its run.json.
func (t *totals) dir(path string, meta rundir.Meta) *rundir.Dir {
	r := &rundir.Dir{Dir: path, Meta: meta}
	if !t.seen {
		return r
	}
	iv := rundir.Interval{Start: t.start, End: t.end, Histograms: maps.Clone(t.hist), Counters: map[string]rundir.IntervalCounters{}}
	secs := (iv.End - iv.Start).Seconds()
	for s, ic := range t.counters {
		ic.Start, ic.End = iv.Start.Seconds(), iv.End.Seconds()
		if secs > 0 {
			ic.TargetRate /= secs
		} else {
			ic.TargetRate = 0
		}
		iv.Counters[s] = ic
	}
	r.Intervals = []rundir.Interval{iv}
	return r
}

func scenariosOf(a map[string]record.Counters, b map[string]rundir.IntervalCounters) []string {
	var out []string
	for s := range a {
		out = append(out, s)
	}
	for s := range b {
		if _, ok := a[s]; !ok {
			out = append(out, s)
		}
	}
	return out
}
