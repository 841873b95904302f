package rundir

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/knee-dev/knee/record"
)

var (
	getLat = record.Key{Metric: record.Latency, Scenario: "s", Name: "get"}
	getSvc = record.Key{Metric: record.Service, Scenario: "s", Name: "get"}
	odd    = record.Key{Metric: record.Latency, Scenario: "a b", Name: "x,y"}
)

// snapshot i holds 100 latencies (i*100+1 .. i*100+100 ms), 10 service
// times, and counters worked out from them.
func snapshot(i int) record.IntervalSnapshot {
	lat, svc, o := record.NewHistogram(), record.NewHistogram(), record.NewHistogram()
	for v := 1; v <= 100; v++ {
		lat.Record(time.Duration(i*100+v) * time.Millisecond)
	}
	for v := 1; v <= 10; v++ {
		svc.Record(time.Duration(v) * time.Millisecond)
	}
	o.Record(time.Second)
	return record.IntervalSnapshot{
		Start:      time.Duration(i) * time.Second,
		End:        time.Duration(i+1) * time.Second,
		Histograms: map[record.Key]*record.Histogram{getLat: lat, getSvc: svc, odd: o},
		Counters: map[string]record.Counters{"s": {
			Requests: 100, Errors: 3, ByStatus: map[string]int64{"2xx": 97, "5xx": 3},
			ErrorsByClass: map[string]int64{}, DroppedIterations: int64(i), BytesIn: 1000,
		}},
	}
}

func writeRun(t *testing.T, dir string, n int, close bool) Meta {
	t.Helper()
	meta := Meta{KneeVersion: "test", ID: "r1", Source: "knee", Model: "open", Started: time.UnixMilli(1700000000123).UTC()}
	w, err := Create(dir, meta)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		extra := map[string]IntervalCounters{"s": {TargetRate: 100, VUs: 4, BusyVUs: 2}}
		if err := w.WriteInterval(snapshot(i), extra); err != nil {
			t.Fatal(err)
		}
	}
	if close {
		meta.Finished = true
		if err := w.Close(meta); err != nil {
			t.Fatal(err)
		}
	}
	return meta
}

func TestWriteOpenRoundTrip(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "nested", "run")
	writeRun(t, dir, 3, true)
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Meta.Finished || r.Meta.FormatVersion != FormatVersion || r.Meta.ID != "r1" || !r.Meta.Started.Equal(time.UnixMilli(1700000000123)) {
		t.Errorf("meta = %+v", r.Meta)
	}
	if len(r.Intervals) != 3 || r.Duration() != 3*time.Second {
		t.Fatalf("%d intervals, duration %v; want 3, 3s", len(r.Intervals), r.Duration())
	}
	for i, iv := range r.Intervals {
		want := snapshot(i)
		if iv.Start != want.Start || iv.End != want.End || len(iv.Histograms) != 3 {
			t.Errorf("interval %d: [%v,%v) with %d histograms", i, iv.Start, iv.End, len(iv.Histograms))
		}
		for k, h := range want.Histograms {
			got := iv.Histograms[k]
			if got == nil || got.Count() != h.Count() || got.Percentile(99) != h.Percentile(99) || got.Max() != h.Max() {
				t.Errorf("interval %d %+v: histogram differs", i, k)
			}
		}
		wantIC := IntervalCounters{Scenario: "s", Start: float64(i), End: float64(i + 1), Counters: want.Counters["s"], TargetRate: 100, VUs: 4, BusyVUs: 2}
		wantIC.Counters.ErrorsByClass = nil // an empty map reads back as empty, not nil: compare without it
		got := iv.Counters["s"]
		got.Counters.ErrorsByClass = nil
		if !reflect.DeepEqual(got, wantIC) {
			t.Errorf("interval %d counters = %+v\nwant %+v", i, got, wantIC)
		}
	}
	// Latencies 1..300 ms, one each: p50 is the 150th value, 150 ms, in
	// [149952, 150015] µs (bucket width 64).
	all := r.Merged(func(k record.Key) bool { return k == getLat }, 0, 0)
	if all.Count() != 300 || all.Percentile(50) != 150015*time.Microsecond {
		t.Errorf("merged: count %d p50 %v; want 300, 150.015ms", all.Count(), all.Percentile(50))
	}
	// [1s, 2s): latencies 101..200 ms; p99 is the 99th, 199 ms in [198912, 199039].
	mid := r.Merged(func(k record.Key) bool { return k.Metric == record.Latency && k.Name == "get" }, time.Second, 2*time.Second)
	if mid.Count() != 100 || mid.Percentile(99) != 199039*time.Microsecond {
		t.Errorf("window: count %d p99 %v; want 100, 199.039ms", mid.Count(), mid.Percentile(99))
	}
	if n := r.Merged(nil, 0, 0).Count(); n != 3*111 {
		t.Errorf("merge of everything: %d, want 333", n)
	}
	c := r.Counters(time.Second, 0)
	if c.Requests != 200 || c.Errors != 6 || c.DroppedIterations != 1+2 || c.ByStatus["2xx"] != 194 || c.BytesIn != 2000 {
		t.Errorf("counters from 1s = %+v", c)
	}
}

// A writer abandoned without Close (a killed run) leaves a directory that
// opens, with every interval written so far.
func TestInterruptedRunReadable(t *testing.T) {
	dir := t.TempDir()
	writeRun(t, dir, 2, false)
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if r.Meta.Finished || len(r.Intervals) != 2 || r.Counters(0, 0).Requests != 200 {
		t.Errorf("finished %v, %d intervals, %d requests; want false, 2, 200", r.Meta.Finished, len(r.Intervals), r.Counters(0, 0).Requests)
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	writeRun(t, dir, 1, true)
	meta := filepath.Join(dir, MetaFile)

	if _, err := Open(filepath.Join(dir, "missing")); err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing directory: %v", err)
	}

	data, _ := os.ReadFile(meta)
	other := strings.Replace(string(data), `"format_version": 1`, `"format_version": 2`, 1)
	os.WriteFile(meta, []byte(other), 0o644)
	if _, err := Open(dir); !errors.Is(err, ErrFormatVersion) || !strings.Contains(err.Error(), "run.json") {
		t.Errorf("format version 2: %v", err)
	}

	os.WriteFile(meta, []byte("{\n  \"format_version\": 1,\n  \"id\": 7\n}\n"), 0o644)
	if _, err := Open(dir); err == nil || !strings.Contains(err.Error(), "run.json:3:") {
		t.Errorf("bad run.json: %v, want it to name line 3", err)
	}
	os.WriteFile(meta, data, 0o644)

	cnt := filepath.Join(dir, CountersFile)
	good, _ := os.ReadFile(cnt)
	os.WriteFile(cnt, append(good, []byte("{\"scenario\": \"s\", \"start_s\": 1, \"end_s\": \n")...), 0o644)
	if _, err := Open(dir); err == nil || !strings.Contains(err.Error(), "counters.jsonl:2:") {
		t.Errorf("bad counters line: %v, want counters.jsonl:2", err)
	}
	os.WriteFile(cnt, good, 0o644)

	// A count no writer makes (a hostile or hand-edited directory) is refused
	// by name and line, not summed into a wrapped total.
	os.WriteFile(cnt, append(good, []byte("{\"scenario\": \"s\", \"start_s\": 1, \"end_s\": 2, \"counters\": {\"requests\": 5, \"by_status\": {\"2xx\": -9}}}\n")...), 0o644)
	if _, err := Open(dir); err == nil || !strings.Contains(err.Error(), "counters.jsonl:2: 2xx is -9; a count is never negative") {
		t.Errorf("negative count: %v, want counters.jsonl:2 naming 2xx", err)
	}
	os.WriteFile(cnt, good, 0o644)

	hl := filepath.Join(dir, LatencyFile)
	lat, _ := os.ReadFile(hl)
	os.WriteFile(hl, append(lat, []byte("Tag=latency|s|get,1.000,1.000,1.0,HISTbroken\n")...), 0o644)
	_, err := Open(dir)
	var le *record.LineError
	if !errors.As(err, &le) || le.File != "latency.hlog" || le.Line < 6 {
		t.Errorf("bad hlog line: %v", err)
	}
}

func FuzzParsers(f *testing.F) {
	f.Add([]byte(`{"format_version":1,"id":"x"}`), []byte(`{"scenario":"s","start_s":0,"end_s":1,"counters":{"requests":3}}`+"\n"))
	f.Add([]byte(`{"format_version":2}`), []byte("{}\n{\"start_s\":1e300}\n"))
	f.Fuzz(func(t *testing.T, meta, counters []byte) {
		if m, err := parseMeta("run.json", meta); err == nil && m.FormatVersion != FormatVersion {
			t.Fatalf("accepted format version %d", m.FormatVersion)
		}
		byStart := map[int64]*Interval{}
		if _, err := readCounters("counters.jsonl", strings.NewReader(string(counters)), byStart); err == nil {
			for _, iv := range byStart {
				if iv.End < iv.Start {
					t.Fatalf("interval ends before it starts: %+v", iv)
				}
			}
		}
		_, _ = readLatency("latency.hlog", strings.NewReader(string(counters)), byStart)
	})
}

// NewInterval is the interval as Open reads it back: one counters entry per
// scenario of the snapshot or of extra, with extra's offered rate and VUs.
func TestNewIntervalAsReadBack(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	w, err := Create(dir, Meta{ID: "x"})
	if err != nil {
		t.Fatal(err)
	}
	h := record.NewHistogram()
	h.Record(3 * time.Millisecond)
	snap := record.IntervalSnapshot{Start: 0, End: time.Second, Histograms: map[record.Key]*record.Histogram{getLat: h},
		Counters: map[string]record.Counters{"s": {Requests: 1}, "only-counted": {Requests: 4, Errors: 1}}}
	extra := map[string]IntervalCounters{"s": {TargetRate: 50, BusyVUs: 2, VUs: 8}, "only-extra": {VUs: 3}}
	if err := w.WriteInterval(snap, extra); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(Meta{ID: "x"}); err != nil {
		t.Fatal(err)
	}
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := NewInterval(snap, extra)
	if !reflect.DeepEqual(got.Counters, r.Intervals[0].Counters) {
		t.Errorf("NewInterval counters %+v\nread back          %+v", got.Counters, r.Intervals[0].Counters)
	}
	want := IntervalCounters{Scenario: "s", Start: 0, End: 1, Counters: record.Counters{Requests: 1}, TargetRate: 50, BusyVUs: 2, VUs: 8}
	if !reflect.DeepEqual(got.Counters["s"], want) || len(got.Counters) != 3 || got.Histograms[getLat] != h {
		t.Errorf("NewInterval = %+v; want s = %+v, three scenarios, the snapshot's own histogram", got, want)
	}
}

// latency.hlog's StartTime and BaseTime: t0 once Begin has given it, else
// the run's Started, also for a run closed before any interval, whose log
// must still read as a log.
func TestLogHeaderStart(t *testing.T) {
	started := time.UnixMilli(1700000000123).UTC()
	t0 := time.UnixMilli(1700000002456).UTC()
	for _, tc := range []struct {
		name      string
		begin     bool
		intervals int
		want      time.Time
	}{
		{"begun", true, 2, t0},
		{"begun, no interval", true, 0, t0},
		{"never begun", false, 2, started},
		{"closed at once", false, 0, started},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			meta := Meta{KneeVersion: "test", ID: "r1", Source: "knee", Started: started}
			w, err := Create(dir, meta)
			if err != nil {
				t.Fatal(err)
			}
			if tc.begin {
				if err := w.Begin(t0); err != nil {
					t.Fatal(err)
				}
				if err := w.Begin(started); err != nil { // a second call changes nothing
					t.Fatal(err)
				}
			}
			for i := range tc.intervals {
				if err := w.WriteInterval(snapshot(i), nil); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Close(meta); err != nil {
				t.Fatal(err)
			}
			f, err := os.Open(filepath.Join(dir, LatencyFile))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			lr := record.NewLogReader(f, LatencyFile, 1000)
			n := 0
			for ; ; n++ {
				if _, err := lr.Next(); err == io.EOF {
					break
				} else if err != nil {
					t.Fatal(err)
				}
			}
			h := lr.Header()
			if !h.StartTime.Equal(tc.want) || !h.BaseTime.Equal(tc.want) || h.Version != record.LogFormatVersion {
				t.Errorf("StartTime %v, BaseTime %v, version %q; want %v, %v, %q", h.StartTime, h.BaseTime, h.Version, tc.want, tc.want, record.LogFormatVersion)
			}
			if want := 3 * tc.intervals; n != want { // three histograms per snapshot
				t.Errorf("%d intervals read, want %d", n, want)
			}
		})
	}
}
