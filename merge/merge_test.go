package merge

import (
	"errors"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/knee-dev/knee/record"
	"github.com/knee-dev/knee/rundir"
)

// part writes a run directory of one part: per interval i, values[i] recorded
// into latency|s|GET, and values' count as requests, plus dropped[i].
func part(t *testing.T, dir, testID, seg string, t0 time.Time, values [][]time.Duration, dropped []int64) *rundir.Dir {
	t.Helper()
	meta := rundir.Meta{ID: seg, Source: "knee", Started: t0, Model: "open", Finished: true,
		Part: &rundir.Part{TestID: testID, Segment: seg, Sequence: "0,1/2,1", Interval: time.Second, T0: t0, ClockSynced: true}}
	w, err := rundir.Create(dir, meta)
	if err != nil {
		t.Fatal(err)
	}
	for i, vs := range values {
		h := record.NewHistogram()
		for _, v := range vs {
			h.Record(v)
		}
		snap := record.IntervalSnapshot{Start: time.Duration(i) * time.Second, End: time.Duration(i+1) * time.Second,
			Histograms: map[record.Key]*record.Histogram{{Metric: record.Latency, Scenario: "s", Name: "GET"}: h},
			Counters:   map[string]record.Counters{"s": {Requests: int64(len(vs)), DroppedIterations: dropped[i], ByStatus: map[string]int64{"2xx": int64(len(vs))}}}}
		if err := w.WriteInterval(snap, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(meta); err != nil {
		t.Fatal(err)
	}
	r, err := rundir.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

func TestMergeAlignsOnTheWallClock(t *testing.T) {
	tmp := t.TempDir()
	t0 := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)
	// B started 300 ms after A: its interval 0 is A's interval 0 on the wall clock.
	a := part(t, filepath.Join(tmp, "a"), "x", "0:1/2", t0, [][]time.Duration{{ms(10), ms(10), ms(10)}, {ms(20)}}, []int64{0, 1})
	b := part(t, filepath.Join(tmp, "b"), "x", "1/2:1", t0.Add(300*time.Millisecond), [][]time.Duration{{ms(100)}, {ms(30), ms(30)}}, []int64{2, 0})
	res, err := Merge([]*rundir.Dir{a, b}, filepath.Join(tmp, "m"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	m := res.Run
	if len(m.Intervals) != 2 {
		t.Fatalf("%d intervals, want 2", len(m.Intervals))
	}
	lat := func(k record.Key) bool { return k.Metric == record.Latency }
	// Interval 0: A's three 10 ms and B's 100 ms; interval 1: A's 20 ms and B's two 30 ms.
	if c := m.Merged(lat, 0, time.Second).Count(); c != 4 {
		t.Errorf("interval 0 holds %d values, want 4", c)
	}
	if mx := m.Merged(lat, 0, time.Second).Max(); mx < ms(100) || mx > ms(101) {
		t.Errorf("interval 0 max %v, want 100 ms", mx)
	}
	c := m.Counters(0, 0)
	if c.Requests != 7 || c.DroppedIterations != 3 || c.ByStatus["2xx"] != 7 {
		t.Errorf("counters %+v, want 7 requests, 3 dropped, 7 2xx", c)
	}
	// Seven values: 10,10,10,20,30,30,100 ms. p99 is the largest; the p99s
	// of A (20 ms) and B (100 ms) average to 60 ms.
	if res.TrueP99 < ms(100) || res.TrueP99 > ms(101) {
		t.Errorf("true p99 %v, want 100 ms", res.TrueP99)
	}
	if res.MeanP99 < ms(60) || res.MeanP99 > ms(61) {
		t.Errorf("mean of p99s %v, want 60 ms", res.MeanP99)
	}
	if len(m.Meta.Parts) != 2 || m.Meta.Source != "merge" {
		t.Errorf("merge meta: source %q, %d parts", m.Meta.Source, len(m.Meta.Parts))
	}
	if len(res.Warnings) != 0 {
		t.Errorf("unexpected warnings %v", res.Warnings)
	}
}

func TestMergeRefuses(t *testing.T) {
	tmp := t.TempDir()
	t0 := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)
	one := [][]time.Duration{{ms(1)}}
	a := part(t, filepath.Join(tmp, "a"), "x", "0:1/2", t0, one, []int64{0})
	a2 := part(t, filepath.Join(tmp, "a2"), "x", "0:1/2", t0, one, []int64{0})
	other := part(t, filepath.Join(tmp, "o"), "y", "1/2:1", t0, one, []int64{0})
	late := part(t, filepath.Join(tmp, "late"), "x", "1/2:1", t0.Add(5*time.Second), one, []int64{0})
	tests := []struct {
		name  string
		parts []*rundir.Dir
		want  string
	}{
		{"a segment twice", []*rundir.Dir{a, a2}, "both ran segment 0:1/2"},
		{"another test", []*rundir.Dir{a, other}, "is part of test y"},
		{"nothing", nil, "no run directories"},
	}
	for i, tt := range tests {
		_, err := Merge(tt.parts, filepath.Join(tmp, "m", string(rune('a'+i))), Options{})
		if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want refusal with %q", tt.name, err, tt.want)
		}
	}
	// A missing segment is refused, unless asked for; runners 5 s apart are
	// merged with a warning.
	_, err := Merge([]*rundir.Dir{late}, filepath.Join(tmp, "m", "missing"), Options{})
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "segments 0:1/2 of 0,1/2,1 are missing") || !strings.Contains(err.Error(), "--partial") {
		t.Errorf("missing segment: %v, want a refusal naming segment 0:1/2 and --partial", err)
	}
	res, err := Merge([]*rundir.Dir{a, late}, filepath.Join(tmp, "m", "apart"), Options{})
	if err != nil || len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "5s apart") {
		t.Errorf("runners apart: %v, warnings %q", err, res.Warnings)
	}
	b := part(t, filepath.Join(tmp, "b"), "x", "1/2:1", t0, one, []int64{0})
	b.Meta.Part.Thresholds = []string{"p(99)<1ms"}
	if _, err := Merge([]*rundir.Dir{a, b}, filepath.Join(tmp, "m", "ts"), Options{}); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "different thresholds") {
		t.Errorf("thresholds that differ: %v, want a refusal", err)
	}
}

// TestPartialMergeSaysHowMuch merges segments 0 and 2 of three runners, the
// middle one missing: refused by default, and with Partial a merge of two
// thirds of the test (1/3 + 1/3 = 66.7 %), said in its summary's warnings.
func TestPartialMergeSaysHowMuch(t *testing.T) {
	tmp := t.TempDir()
	t0 := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)
	mk := func(name, seg string) *rundir.Dir {
		meta := rundir.Meta{ID: seg, Source: "knee", Started: t0, Model: "open", Finished: true,
			Part: &rundir.Part{TestID: "x", Segment: seg, Sequence: "0,1/3,2/3,1", Interval: time.Second, T0: t0, ClockSynced: true}}
		w, err := rundir.Create(filepath.Join(tmp, name), meta)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Close(meta); err != nil {
			t.Fatal(err)
		}
		r, err := rundir.Open(filepath.Join(tmp, name))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	first, last := mk("a", "0:1/3"), mk("c", "2/3:1")
	_, err := Merge([]*rundir.Dir{first, last}, filepath.Join(tmp, "refused"), Options{})
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "66.7 %") {
		t.Fatalf("merge of two of three: %v, want a refusal that says 66.7 %%", err)
	}
	res, err := Merge([]*rundir.Dir{first, last}, filepath.Join(tmp, "partial"), Options{Partial: true})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(res.Coverage-2.0/3) > 1e-12 {
		t.Errorf("coverage %v, want 2/3", res.Coverage)
	}
	want := "PARTIAL: this merge covers 66.7 % of the test (segments 1/3:2/3 of 0,1/3,2/3,1 are missing)"
	if !slices.ContainsFunc(res.Run.Meta.Summary.Warnings, func(w string) bool { return strings.HasPrefix(w, want) }) {
		t.Errorf("summary warnings %q, want one starting %q", res.Run.Meta.Summary.Warnings, want)
	}
}
