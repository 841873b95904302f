package merge

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/knee-dev/knee/record"
	"github.com/knee-dev/knee/rundir"
)

// alignWhole is the merge as it was before it streamed, kept as the
// reference: every part's intervals grouped by the merged interval they
// fall in, all in memory, then added in part order.
func alignWhole(parts []*rundir.Dir, t0 time.Time, iv time.Duration, write func(record.IntervalSnapshot, map[string]rundir.IntervalCounters) error) error {
	type ref struct{ part, interval int }
	byIndex := map[int64][]ref{}
	for pi, p := range parts {
		shift := p.Meta.Part.T0.Sub(t0)
		for ii, in := range p.Intervals {
			k := int64(math.Round(float64(shift+in.Start) / float64(iv)))
			byIndex[k] = append(byIndex[k], ref{pi, ii})
		}
	}
	for _, k := range slices.Sorted(maps.Keys(byIndex)) {
		start := time.Duration(k) * iv
		s := record.IntervalSnapshot{Start: start, End: start,
			Histograms: map[record.Key]*record.Histogram{}, Counters: map[string]record.Counters{}}
		extra := map[string]rundir.IntervalCounters{}
		for _, r := range byIndex[k] {
			in := parts[r.part].Intervals[r.interval]
			s.End = max(s.End, s.Start+(in.End-in.Start))
			for key, h := range in.Histograms {
				if have, ok := s.Histograms[key]; ok {
					have.Merge(h)
				} else {
					s.Histograms[key] = h.Clone()
				}
			}
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
		}
		if err := write(s, extra); err != nil {
			return err
		}
	}
	return nil
}

// spec is one synthetic part: its start on the wall clock, how many whole
// intervals it ran and how long its last, partial, one was.
type spec struct {
	seg      string
	offset   time.Duration
	whole    int
	lastPart time.Duration // 0: no partial last interval
}

// writeMultiPart writes a part with three request names in two scenarios,
// random latencies (seeded), an interval where one name saw no request,
// and per-scenario target rates and VUs. It returns the number of latencies written.
func writeMultiPart(t *testing.T, dir string, i int, sp spec, t0 time.Time) int64 {
	t.Helper()
	start := t0.Add(sp.offset)
	meta := rundir.Meta{ID: sp.seg, KneeVersion: "test", Source: "knee", Started: start, Ended: start.Add(time.Duration(sp.whole+1) * time.Second),
		Model: "open", Finished: true, Part: &rundir.Part{TestID: "multi", Segment: sp.seg, Sequence: "0,1/3,2/3,1",
			Runner: fmt.Sprintf("r%d", i), Interval: time.Second, T0: start, ClockSynced: true}}
	w, err := rundir.Create(dir, meta)
	if err != nil {
		t.Fatal(err)
	}
	keys := []record.Key{
		{Metric: record.Latency, Scenario: "browse", Name: "GET /a"},
		{Metric: record.Latency, Scenario: "browse", Name: "GET /b"},
		{Metric: record.Latency, Scenario: "buy", Name: "POST /c"},
		{Metric: record.Service, Scenario: "buy", Name: "POST /c"},
	}
	rng := rand.New(rand.NewPCG(uint64(i), 42))
	var n int64
	for k := 0; k <= sp.whole; k++ {
		end := time.Duration(k+1) * time.Second
		if k == sp.whole {
			if sp.lastPart == 0 {
				break
			}
			end = time.Duration(k)*time.Second + sp.lastPart
		}
		snap := record.IntervalSnapshot{Start: time.Duration(k) * time.Second, End: end,
			Histograms: map[record.Key]*record.Histogram{}, Counters: map[string]record.Counters{}}
		reqs := map[string]int64{}
		for ki, key := range keys {
			if ki == 1 && k%3 == 2 { // GET /b idle in every third interval
				continue
			}
			h := record.NewHistogram()
			m := 20 + rng.IntN(30)
			for range m {
				h.Record(time.Duration(float64(5*time.Millisecond) * math.Exp(rng.NormFloat64())))
			}
			snap.Histograms[key] = h
			if key.Metric == record.Latency {
				reqs[key.Scenario] += int64(m)
				n += int64(m)
			}
		}
		extra := map[string]rundir.IntervalCounters{}
		for sc, r := range reqs {
			snap.Counters[sc] = record.Counters{Requests: r, DroppedIterations: int64(k % 2), ByStatus: map[string]int64{"2xx": r}}
			extra[sc] = rundir.IntervalCounters{TargetRate: 50 + float64(i), VUs: 4 + i, BusyVUs: 1 + k%3}
		}
		if err := w.WriteInterval(snap, extra); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(meta); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestStreamedMergeIsTheWholeMerge(t *testing.T) {
	tmp := t.TempDir()
	t0 := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)
	specs := []spec{
		{"0:1/3", 0, 7, 400 * time.Millisecond},                       // 7 s and a partial 8th
		{"1/3:2/3", 300 * time.Millisecond, 5, 0},                     // 300 ms late: same intervals
		{"2/3:1", 1700 * time.Millisecond, 9, 900 * time.Millisecond}, // 1.7 s late: one interval on, longer
	}
	var dirs []string
	var written int64
	for i, sp := range specs {
		d := filepath.Join(tmp, fmt.Sprintf("part-%d", i))
		written += writeMultiPart(t, d, i, sp, t0)
		dirs = append(dirs, d)
	}
	var whole []*rundir.Dir
	for _, d := range dirs {
		p, err := rundir.Open(d)
		if err != nil {
			t.Fatal(err)
		}
		whole = append(whole, p)
	}

	// The reference: the in-memory merge, written through the same Writer.
	ref := filepath.Join(tmp, "ref")
	meta := mergedMeta(whole, t0)
	w, err := rundir.Create(ref, meta)
	if err != nil {
		t.Fatal(err)
	}
	if err := alignWhole(whole, t0, time.Second, w.WriteInterval); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(meta); err != nil {
		t.Fatal(err)
	}

	streamed, err := MergeDirs(dirs, filepath.Join(tmp, "streamed"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	inMemory, err := Merge(whole, filepath.Join(tmp, "in-memory"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{rundir.LatencyFile, rundir.CountersFile} {
		want, _ := os.ReadFile(filepath.Join(ref, f))
		for _, got := range []string{"streamed", "in-memory"} {
			b, err := os.ReadFile(filepath.Join(tmp, got, f))
			if err != nil {
				t.Fatal(err)
			}
			if len(want) == 0 || !bytes.Equal(b, want) {
				t.Errorf("%s %s differs from the in-memory merge's (%d bytes, want %d)", got, f, len(b), len(want))
			}
		}
	}
	// run.json, summary and per-runner figures included, is the same both ways.
	a, _ := os.ReadFile(filepath.Join(tmp, "streamed", rundir.MetaFile))
	b, _ := os.ReadFile(filepath.Join(tmp, "in-memory", rundir.MetaFile))
	if !bytes.Equal(a, b) {
		t.Errorf("run.json differs:\n%s\n----\n%s", a, b)
	}
	if fmt.Sprint(streamed.Parts, streamed.TrueP99, streamed.MeanP99) != fmt.Sprint(inMemory.Parts, inMemory.TrueP99, inMemory.MeanP99) {
		t.Errorf("figures differ: streamed %+v %v %v, in memory %+v %v %v", streamed.Parts, streamed.TrueP99, streamed.MeanP99,
			inMemory.Parts, inMemory.TrueP99, inMemory.MeanP99)
	}

	// And by hand: every latency written is in the merge once; part 2's
	// intervals land two on (1.7 s rounds to 2 s), so its partial tenth, at
	// 9 s, is the merge's last, at 11 s: twelve intervals.
	m := streamed.Run
	lat := func(k record.Key) bool { return k.Metric == record.Latency }
	if c := m.Merged(lat, 0, 0).Count(); c != written {
		t.Errorf("merge holds %d latencies, the parts %d", c, written)
	}
	if n := len(m.Intervals); n != 12 {
		t.Errorf("%d merged intervals, want 12 (0 s .. 11 s)", n)
	}
	for _, r := range streamed.Parts {
		if r.Requests == 0 {
			t.Errorf("runner %s: no requests", r.Segment)
		}
	}
	if got := m.Intervals[len(m.Intervals)-1]; got.Start != 11*time.Second || got.End != 11*time.Second+900*time.Millisecond {
		t.Errorf("last interval [%v, %v), want [11s, 11.9s)", got.Start, got.End)
	}
	// Interval 1 holds parts 0 and 1 (their second) and part 2 nothing yet:
	// target rates 50 + 51 and 4 + 5 VUs.
	if c := m.Intervals[1].Counters["browse"]; c.TargetRate != 101 || c.VUs != 9 {
		t.Errorf("interval 1 browse: target rate %v, %d VUs; want 101 and 9", c.TargetRate, c.VUs)
	}
}

func TestMergeDirsRefusesABrokenPart(t *testing.T) {
	tmp := t.TempDir()
	t0 := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)
	a := filepath.Join(tmp, "a")
	b := filepath.Join(tmp, "b")
	writeMultiPart(t, a, 0, spec{"0:1/3", 0, 3, 0}, t0)
	writeMultiPart(t, b, 1, spec{"1/3:2/3", 0, 3, 0}, t0)
	f, err := os.OpenFile(filepath.Join(b, rundir.CountersFile), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("{not json\n")
	f.Close()
	out := filepath.Join(tmp, "m")
	_, err = MergeDirs([]string{a, b}, out, Options{Partial: true}) // two of three: the broken part is what is refused
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "counters.jsonl:7") || !strings.Contains(err.Error(), "left unfinished") {
		t.Fatalf("err %v, want a refusal naming counters.jsonl:7 and the unfinished output", err)
	}
	if r, err := rundir.Open(out); err != nil || r.Meta.Finished {
		t.Errorf("the unfinished merge reads back %v, finished %v; want it marked unfinished", err, r != nil && r.Meta.Finished)
	}
	if _, err := MergeDirs([]string{a, filepath.Join(tmp, "nothing")}, filepath.Join(tmp, "m2"), Options{}); !errors.Is(err, ErrRefused) {
		t.Errorf("a missing part: %v, want a refusal", err)
	}
}
