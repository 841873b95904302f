// Package merge builds one run directory from the run directories of the
// runners of a split test (knee run --execution-segment): intervals are
// aligned on the wall clock, histograms added per interval and tag,
// counters summed. HdrHistograms add exactly, so the merge's percentiles
// are those of all the requests, not an average of the runners' percentiles.
package merge

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"slices"
	"strings"
	"time"

	"github.com/knee-dev/knee/analyze"
	"github.com/knee-dev/knee/internal/version"
	"github.com/knee-dev/knee/load/schedule"
	"github.com/knee-dev/knee/record"
	"github.com/knee-dev/knee/rundir"
)

// ErrRefused is wrapped by every error for parts that must not be merged.
var ErrRefused = errors.New("these run directories cannot be merged")

// PartFigures are one part's own figures, to show next to the merge's.
type PartFigures struct {
	Dir      string
	Name     string // the part's --runner-name; "" when not given
	Host     string
	Segment  string
	Requests int64
	P99      time.Duration
	// Interrupted: the part was stopped before its end (a signal, an
	// abort); Finished: it ran to its end and wrote everything.
	Interrupted, Finished bool
}

// Result is what Merge wrote and what it found.
type Result struct {
	Run        *rundir.Dir
	Parts      []PartFigures
	TrueP99    time.Duration // p99 of every request, from the added histograms
	MeanP99    time.Duration // the runners' p99s averaged: the wrong figure, for contrast
	Coverage   float64       // the share of the test the parts ran: 1 unless merged with Partial
	Thresholds []string      // the test's own thresholds, which its runners recorded and did not judge
	Warnings   []string
}

// Options change what a merge accepts.
type Options struct {
	// Partial merges parts that leave segments of the test missing; the
	// merge then says in its warnings which share of the test it covers.
	// Without it such a merge is refused: a partial result read as the
	// whole test would understate its load and its tail.
	Partial bool
}

// Merge checks that parts are the parts of one test, each once, writes
// their merge to the run directory out and reads it back. The parts are
// already in memory; MergeDirs reads them from disk as it goes.
func Merge(parts []*rundir.Dir, out string, opt Options) (*Result, error) {
	srcs := make([]source, len(parts))
	for i, p := range parts {
		srcs[i] = &memSource{ivs: p.Intervals}
	}
	return merge(parts, srcs, out, opt)
}

// MergeDirs is Merge of the run directories dirs, read interval by interval
// (rundir.Stream): it holds one interval of each part and one merged
// interval at a time, whatever the run's length. Reading the merge back for
// its summary (Result.Run) holds the merged run whole, as rundir.Open does.
func MergeDirs(dirs []string, out string, opt Options) (*Result, error) {
	parts := make([]*rundir.Dir, len(dirs))
	srcs := make([]source, len(dirs))
	for i, d := range dirs {
		s, err := rundir.OpenStream(d)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrRefused, err)
		}
		defer s.Close()
		parts[i] = &rundir.Dir{Dir: s.Dir, Meta: s.Meta} // no intervals: they stream
		srcs[i] = s
	}
	return merge(parts, srcs, out, opt)
}

// source yields one part's intervals in time order, then io.EOF.
type source interface {
	Next() (rundir.Interval, error)
}

// memSource is a source of a part read whole.
type memSource struct {
	ivs []rundir.Interval
	i   int
}

func (m *memSource) Next() (rundir.Interval, error) {
	if m.i >= len(m.ivs) {
		return rundir.Interval{}, io.EOF
	}
	m.i++
	return m.ivs[m.i-1], nil
}

// merge is Merge of parts (their Meta) whose intervals come from srcs.
func merge(parts []*rundir.Dir, srcs []source, out string, opt Options) (*Result, error) {
	if err := check(parts); err != nil {
		return nil, err
	}
	res := &Result{Thresholds: parts[0].Meta.Part.Thresholds}
	share, missing, err := coverage(parts)
	if err != nil {
		return nil, err
	}
	res.Coverage = share
	if len(missing) > 0 {
		seq := parts[0].Meta.Part.Sequence
		if !opt.Partial {
			return nil, fmt.Errorf("%w: segments %s of %s are missing, so the merge would cover %s of the test; wait for their parts, or merge what there is with --partial",
				ErrRefused, strings.Join(missing, ", "), seq, percent(share))
		}
		res.Warnings = append(res.Warnings, fmt.Sprintf("PARTIAL: this merge covers %s of the test (segments %s of %s are missing): its rates and counts are that share of the test's",
			percent(share), strings.Join(missing, ", "), seq))
	}
	iv, err := intervalOf(parts)
	if err != nil {
		return nil, err
	}
	t0 := parts[0].Meta.Part.T0
	var last time.Time
	for _, p := range parts {
		t0 = minTime(t0, p.Meta.Part.T0)
		last = maxTime(last, p.Meta.Part.T0)
	}
	if spread := last.Sub(t0); spread > iv {
		res.Warnings = append(res.Warnings, fmt.Sprintf(
			"the runners started %v apart, more than one interval (%v): intervals are aligned on each runner's clock, but the runners did not offer their load together; start them with --start-at", spread.Round(time.Millisecond), iv))
	}
	var unsynced []string
	for _, p := range parts {
		if !p.Meta.Part.ClockSynced {
			unsynced = append(unsynced, p.Meta.Part.Segment)
		}
	}
	if len(unsynced) > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf(
			"%d of %d runners (segments %s) had a clock the kernel reports unsynchronised: their intervals line up only as well as their clocks agree (run NTP or chrony on the runners' nodes)",
			len(unsynced), len(parts), strings.Join(unsynced, ", ")))
	}

	meta := mergedMeta(parts, t0)
	w, err := rundir.Create(out, meta)
	if err != nil {
		return nil, err
	}
	perPart := make([]*record.Histogram, len(parts)) // each runner's latencies, for its own p99
	for i := range perPart {
		perPart[i] = record.NewHistogram()
	}
	if err := align(parts, srcs, t0, iv, w.WriteInterval, perPart); err != nil {
		meta.Finished = false
		w.Close(meta)
		return nil, fmt.Errorf("%w (%s is left unfinished: delete it before merging again)", err, out)
	}
	if err := w.Close(meta); err != nil {
		return nil, err
	}
	r, err := rundir.Open(out)
	if err != nil {
		return nil, fmt.Errorf("reading back the merge: %w", err)
	}
	meta.Summary = analyze.Summarize(r, analyze.SummaryOptions{})
	meta.Summary.Warnings = append(meta.Summary.Warnings, res.Warnings...)
	r.Meta = meta
	if err := w.Close(meta); err != nil {
		return nil, err
	}
	res.Run = r

	isLatency := func(k record.Key) bool { return k.Metric == record.Latency }
	res.TrueP99 = r.Merged(isLatency, 0, 0).Percentile(99)
	var sum time.Duration
	for i, p := range parts {
		h := perPart[i]
		res.Parts = append(res.Parts, PartFigures{Dir: p.Dir, Name: p.Meta.Part.Runner, Host: p.Meta.Env.Host, Segment: p.Meta.Part.Segment,
			Requests: h.Count(), P99: h.Percentile(99), Interrupted: p.Meta.Interrupted, Finished: p.Meta.Finished})
		sum += h.Percentile(99)
	}
	res.MeanP99 = sum / time.Duration(len(parts))
	return res, nil
}

// check refuses what is not one test's parts, each once.
func check(parts []*rundir.Dir) error {
	if len(parts) == 0 {
		return fmt.Errorf("%w: no run directories given", ErrRefused)
	}
	for _, p := range parts {
		if p.Meta.Part == nil {
			return fmt.Errorf("%w: %s is not a part of a split test (it was not run with --execution-segment, --start-at or --test-id)", ErrRefused, p.Dir)
		}
		if p.Meta.Part.T0.IsZero() {
			return fmt.Errorf("%w: %s never started its schedule (no t0 in run.json)", ErrRefused, p.Dir)
		}
	}
	first := parts[0]
	fp := first.Meta.Part
	plan, _ := json.Marshal(fp.Plan)
	seen := map[string]string{}
	for _, p := range parts {
		pp := p.Meta.Part
		switch {
		case pp.TestID != fp.TestID:
			return fmt.Errorf("%w: %s is part of test %s, %s of test %s; merge the parts of one test", ErrRefused, p.Dir, pp.TestID, first.Dir, fp.TestID)
		case pp.Sequence != fp.Sequence:
			return fmt.Errorf("%w: %s split the test by %s, %s by %s; the parts only fit when every runner has the same --execution-segment-sequence", ErrRefused, p.Dir, pp.Sequence, first.Dir, fp.Sequence)
		}
		if !slices.Equal(pp.Thresholds, fp.Thresholds) {
			return fmt.Errorf("%w: %s and %s recorded different thresholds under one test id %s", ErrRefused, p.Dir, first.Dir, fp.TestID)
		}
		if b, _ := json.Marshal(pp.Plan); string(b) != string(plan) {
			return fmt.Errorf("%w: %s and %s ran different plans under one test id %s", ErrRefused, p.Dir, first.Dir, fp.TestID)
		}
		if other, dup := seen[pp.Segment]; dup {
			return fmt.Errorf("%w: %s and %s both ran segment %s; give each part once", ErrRefused, other, p.Dir, pp.Segment)
		}
		seen[pp.Segment] = p.Dir
	}
	return nil
}

// coverage is the share of the test the parts ran, and the segments of
// the sequence no part ran.
func coverage(parts []*rundir.Dir) (float64, []string, error) {
	seq, err := schedule.ParseSequence(parts[0].Meta.Part.Sequence)
	if err != nil {
		return 0, nil, fmt.Errorf("%w: %s: sequence %q unreadable: %w", ErrRefused, parts[0].Dir, parts[0].Meta.Part.Sequence, err)
	}
	have := map[string]bool{}
	for _, p := range parts {
		have[p.Meta.Part.Segment] = true
	}
	var missing []string
	share := new(big.Rat)
	for _, s := range seq {
		if !have[s.String()] {
			missing = append(missing, s.String())
			continue
		}
		share.Add(share, s.Length())
	}
	f, _ := share.Float64()
	return f, missing, nil
}

// percent prints a share as a percentage with one decimal.
func percent(share float64) string { return fmt.Sprintf("%.1f %%", share*100) }

// intervalOf is the parts' interval length, which must be the same.
func intervalOf(parts []*rundir.Dir) (time.Duration, error) {
	first := parts[0]
	iv := first.Meta.Part.Interval
	for _, p := range parts {
		if d := p.Meta.Part.Interval; d != iv {
			return 0, fmt.Errorf("%w: %s has %v intervals, %s %v; run every part with the same --interval", ErrRefused, first.Dir, iv, p.Dir, d)
		}
	}
	if iv <= 0 {
		return 0, fmt.Errorf("%w: %s records no interval length", ErrRefused, first.Dir)
	}
	return iv, nil
}

// align adds every part's intervals into the merged interval whose start
// is nearest on the wall clock, counted from t0 in steps of iv, and hands
// each merged interval to write in time order; it adds each part's latency
// histograms into perPart too. Every part's intervals come in time order, so
// a merged interval is complete once no part has one left that falls in it:
// only one interval of each part and one merged interval are held at a time.
// An unpacked HdrHistogram is some 180 kB, a packed one some 12 kB: holding
// a long run's would not fit in memory.
func align(parts []*rundir.Dir, srcs []source, t0 time.Time, iv time.Duration,
	write func(record.IntervalSnapshot, map[string]rundir.IntervalCounters) error, perPart []*record.Histogram) error {
	type head struct {
		in rundir.Interval
		k  int64 // the merged interval it falls in
		ok bool  // false once the part has no interval left
	}
	heads := make([]head, len(srcs))
	advance := func(pi int) error {
		in, err := srcs[pi].Next()
		if errors.Is(err, io.EOF) {
			heads[pi] = head{}
			return nil
		}
		if err != nil {
			return fmt.Errorf("%w: %w", ErrRefused, err)
		}
		shift := parts[pi].Meta.Part.T0.Sub(t0)
		heads[pi] = head{in: in, k: int64(math.Round(float64(shift+in.Start) / float64(iv))), ok: true}
		return nil
	}
	for pi := range srcs {
		if err := advance(pi); err != nil {
			return err
		}
	}
	for {
		k, found := int64(0), false
		for _, h := range heads {
			if h.ok && (!found || h.k < k) {
				k, found = h.k, true
			}
		}
		if !found {
			return nil
		}
		start := time.Duration(k) * iv
		s := record.IntervalSnapshot{Start: start, End: start,
			Histograms: map[record.Key]*record.Histogram{}, Counters: map[string]record.Counters{}}
		extra := map[string]rundir.IntervalCounters{}
		for pi := range heads {
			for heads[pi].ok && heads[pi].k == k {
				in := heads[pi].in
				s.End = max(s.End, s.Start+(in.End-in.Start))
				for key, h := range in.Histograms {
					if key.Metric == record.Latency {
						perPart[pi].Merge(h)
					}
				}
				record.Series(s.Histograms).Add(in.Histograms)
				for sc, c := range in.Counters {
					sum := s.Counters[sc]
					sum.Add(c.Counters)
					s.Counters[sc] = sum
					x := extra[sc]
					x.TargetRate += c.TargetRate
					x.BusyVUs += c.BusyVUs
					x.VUs += c.VUs
					extra[sc] = x
				}
				if err := advance(pi); err != nil {
					return err
				}
			}
		}
		if err := write(s, extra); err != nil {
			return err
		}
	}
}

// mergedMeta is the merge's run.json: the whole test's plan, and each
// part's environment note kept.
func mergedMeta(parts []*rundir.Dir, t0 time.Time) rundir.Meta {
	fp := parts[0].Meta.Part
	m := rundir.Meta{
		KneeVersion: version.String(),
		ID:          "merge-" + fp.TestID,
		Source:      "merge",
		Started:     t0,
		Model:       parts[0].Meta.Model,
		Scenarios:   fp.Plan,
		Finished:    true,
	}
	m.Env.KneeVersion = version.String()
	m.Env.Host = fmt.Sprintf("%d runners", len(parts))
	sorted := slices.Clone(parts)
	slices.SortFunc(sorted, func(a, b *rundir.Dir) int { return cmp.Compare(a.Meta.Part.Segment, b.Meta.Part.Segment) })
	for _, p := range sorted {
		m.Ended = maxTime(m.Ended, p.Meta.Ended)
		m.Interrupted = m.Interrupted || p.Meta.Interrupted
		m.Finished = m.Finished && p.Meta.Finished
		if m.FirstError == "" {
			m.FirstError = p.Meta.FirstError
		}
		m.Counters.Add(p.Meta.Counters)
		m.Env.Generator.CPUSeconds += p.Meta.Env.Generator.CPUSeconds
		m.Env.Generator.PeakRSSMB = max(m.Env.Generator.PeakRSSMB, p.Meta.Env.Generator.PeakRSSMB)
		if p.Meta.Model != m.Model {
			m.Model = "mixed"
		}
		for _, f := range p.Meta.Faults {
			f.Target = p.Meta.Part.Label() + ": " + f.Target
			m.Faults = append(m.Faults, f)
		}
		for _, n := range p.Meta.Notes {
			m.Notes = append(m.Notes, fmt.Sprintf("segment %s: %s", p.Meta.Part.Segment, n))
		}
		m.Parts = append(m.Parts, rundir.MergedPart{Dir: p.Dir, ID: p.Meta.ID, Part: *p.Meta.Part, Env: p.Meta.Env, Notes: p.Meta.Notes})
	}
	return m
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
