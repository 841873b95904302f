package analyze

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/knee-dev/knee/record"
	"github.com/knee-dev/knee/rundir"
)

// intervalRate is the number of requests that finished in one run interval
// (knee's intervals are 1 s) and its rate.
type intervalRate struct {
	startS, endS float64
	requests     int64
	rate         float64
	vus          float64 // the interval's weight: its VUs in the closed model, else 1
}

// stallSignal finds spells of intervals with far fewer requests than their
// neighbours and asks whether the missing requests came later. In an open
// run they do (requests that arrived during a stall finish right after it);
// in a closed run they were never sent: that is the omission. rates are the
// intervals in which the plan held the load steady (see unitRates), so a
// ramp, a step or a scenario that has not started is never a quiet spell.
func stallSignal(rates []intervalRate) (COSignal, bool) {
	if len(rates) < 3 {
		return COSignal{}, false
	}
	ref := referenceRates(rates)
	var stalls []Stall
	// The first and last intervals are ramp-up and graceful stop: never candidates.
	for i := 1; i < len(rates)-1; {
		if !quiet(rates[i], ref[i]) {
			i++
			continue
		}
		j := i
		for j+1 < len(rates)-1 && quiet(rates[j+1], ref[j+1]) {
			j++
		}
		stalls = append(stalls, measureStall(rates, ref, i, j))
		i = j + 1
	}
	s := COSignal{Name: SignalStall, Limit: COStallNotMadeUp, Unit: "requests", Stalls: stalls}
	if len(stalls) == 0 {
		s.Evidence = "no interval had far fewer requests than its neighbours"
		return s, true
	}
	var sentences []string
	for _, st := range stalls {
		s.Expected += st.Missing
		s.Observed += st.Missing - st.MadeUp
		sentences = append(sentences, fmt.Sprintf("%.0f–%.0f s: %d requests against %.0f req/s around it, "+
			"%.0f missing, %.0f made up after", st.StartS, st.EndS, st.Requests, st.ReferenceRate, st.Missing, st.MadeUp))
	}
	s.Ratio = s.Observed / s.Expected
	s.Fired = s.Ratio > COStallNotMadeUp
	s.Evidence = "quiet spells: " + strings.Join(sentences, "; ")
	if s.Fired {
		s.Evidence += fmt.Sprintf("; %.0f requests were never sent: the generator went quiet with the target", s.Observed)
	} else {
		s.Evidence += "; the requests came late rather than never (the target stalled, the generator kept sending)"
	}
	return s, true
}

// unitRates counts u's latencies per run interval, keeping only the
// intervals its plan held steady: inside [startTime, startTime+span] (so
// neither before the scenario starts nor in its graceful stop or a later
// scenario's time) and, when the counters give the VUs, with as many VUs at
// the interval's end as at the previous one's (no ramp, no step). vus
// weighs each interval: the closed model's rate follows its VU count.
func unitRates(r *rundir.Dir, u coUnit) []intervalRate {
	keep := u.sel.Of(record.Latency)
	var out []intervalRate
	prevVUs := 0
	nominal := nominalInterval(r)
	for _, iv := range r.Intervals {
		vus := iv.Counters[u.name].VUs
		if u.executor != "ramping-vus" {
			// Every other closed executor starts all its VUs at once and
			// keeps them: an interval whose line lacks them (the last one
			// of a script's scenario) had as many as the one before.
			if prevVUs == 0 {
				prevVUs = vus
			} else if vus == 0 {
				vus = prevVUs
			}
		}
		steady := !u.countedVUs || (vus > 0 && vus == prevVUs)
		prevVUs = vus
		// A short interval (the run's last, cut by its end) is left out:
		// its few requests say nothing of a rate.
		if !steady || iv.Start < u.from || (u.to > 0 && iv.End > u.to+coEdge) || iv.End-iv.Start < nominal*9/10 {
			continue
		}
		var n int64
		for k, h := range iv.Histograms {
			if keep(k) {
				n += h.Count()
			}
		}
		w := 1.0
		if u.countedVUs {
			w = float64(vus)
		}
		out = append(out, intervalRate{startS: iv.Start.Seconds(), endS: iv.End.Seconds(), requests: n,
			rate: float64(n) / (iv.End - iv.Start).Seconds(), vus: w})
	}
	if u.to == 0 {
		// No plan says when the scenario ran (an import): it ran from its
		// first request to its last, and silence outside is not a stall.
		for len(out) > 0 && out[0].requests == 0 {
			out = out[1:]
		}
		for len(out) > 0 && out[len(out)-1].requests == 0 {
			out = out[:len(out)-1]
		}
	}
	return out
}

// nominalInterval is the median length of r's intervals (1 s unless the
// run was given another --interval; a loaded machine rotates some late),
// and 1 s for a run with none. It is the one rule for a run's interval:
// coordinated omission, the charts' window (ChartWindow) and the steps'
// grain (inferPlan, StepsIn, FitJump) all take it. Not the most common
// length: lengths that jitter by a millisecond rarely repeat, and then the
// mode is whichever is shortest, often an import's partial last interval.
// These are interval lengths, not latencies.
func nominalInterval(r *rundir.Dir) time.Duration {
	if len(r.Intervals) == 0 {
		return time.Second
	}
	lengths := make([]float64, 0, len(r.Intervals))
	for _, iv := range r.Intervals {
		lengths = append(lengths, float64(iv.End-iv.Start))
	}
	return time.Duration(medianOf(lengths))
}

// referenceRates is, for each interval, the median rate per VU of itself
// and of the coNeighbourSpan nearest intervals on either side that had
// requests, times its own VUs: a spell of up to coNeighbourSpan slow
// intervals cannot drag its own reference down, and a spell without a
// single request cannot however long it is (a 15 s stall had a reference of
// 0 and went unseen). These are per-second request counts, not latencies.
func referenceRates(rates []intervalRate) []float64 {
	ref := make([]float64, len(rates))
	buf := make([]float64, 0, 2*coNeighbourSpan+1)
	// nearest adds the rates of the coNeighbourSpan intervals with requests
	// nearest to i on one side (step -1 or 1).
	nearest := func(i, step int) {
		for n, j := 0, i+step; n < coNeighbourSpan && j >= 0 && j < len(rates); j += step {
			if rates[j].requests > 0 {
				buf = append(buf, rates[j].rate/rates[j].vus)
				n++
			}
		}
	}
	for i := range rates {
		buf = append(buf[:0], rates[i].rate/rates[i].vus)
		nearest(i, -1)
		nearest(i, 1)
		ref[i] = medianOf(buf) * rates[i].vus
	}
	return ref
}

// quiet reports whether an interval had far fewer requests than its reference.
func quiet(ir intervalRate, ref float64) bool {
	expected := ref * (ir.endS - ir.startS)
	return expected >= COStallMinRequests && ir.rate < COStallFraction*ref
}

// measureStall sums what the quiet spell rates[i..j] lacks and what the
// intervals right after it (as many as the spell is long, plus two) bring
// in above their reference.
func measureStall(rates []intervalRate, ref []float64, i, j int) Stall {
	st := Stall{StartS: rates[i].startS, EndS: rates[j].endS}
	var refSum float64
	for k := i; k <= j; k++ {
		st.Requests += rates[k].requests
		st.Missing += ref[k]*(rates[k].endS-rates[k].startS) - float64(rates[k].requests)
		refSum += ref[k]
	}
	st.ReferenceRate = refSum / float64(j-i+1)
	for k := j + 1; k < len(rates) && k <= j+(j-i+1)+2; k++ {
		if extra := float64(rates[k].requests) - ref[k]*(rates[k].endS-rates[k].startS); extra > 0 {
			st.MadeUp += extra
		}
	}
	st.MadeUp = min(st.MadeUp, st.Missing)
	return st
}

// medianOf is the median of a few run-level numbers (rates, repetitions);
// it sorts a copy. Never use it on latencies: those go through record.
func medianOf(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
