package analyze_test

import (
	"encoding/json"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/knee-dev/knee/analyze"
	"github.com/knee-dev/knee/record"
	"github.com/knee-dev/knee/rundir"
)

// Two slow values chosen to be the highest value of their HdrHistogram
// bucket, so record reports them unchanged: above 2^21 µs buckets are
// 2048 µs wide (1464·2048 + 2047 = 3,000,319) and above 2^22 µs 4096 µs wide
// (1220·4096 + 4095 = 5,001,215).
const (
	slow3s = 3_000_319 * time.Microsecond
	slow5s = 5_001_215 * time.Microsecond
)

// articleWindowsRun is the article's shape: 7 windows of 10 s, each with
// 1,000 requests of 1 ms (100 per second); window 3 adds 3,000 requests of
// ~5 s and window 5 adds 1,000 of ~3 s, all in the window's last second.
func articleWindowsRun() *rundir.Dir {
	f := newFakeRun("open", 70, rundir.Scenario{Name: "open", Model: "open", TargetRate: 100})
	k := lat("open", "GET /api/books/{isbn}")
	for sec := range 70 {
		f.add(sec, k, time.Millisecond, 100)
		f.count(sec, "open", record.Counters{Requests: 100}, 100)
	}
	f.add(39, k, slow5s, 3000)
	f.add(59, k, slow3s, 1000)
	f.count(39, "open", record.Counters{DroppedIterations: 7}, 100)
	return f.r
}

func TestWindowsAveragedPercentiles(t *testing.T) {
	rep := analyze.Windows(articleWindowsRun(), 0, nil)
	// Window p99s by hand (rank = round(0.99·n)):
	//   5 windows of 1,000 × 1 ms: 1.0 ms.
	//   window 3, 1,000 × 1 ms + 3,000 × 5 s: rank 3,960 > 1,000 → 5001.215 ms.
	//   window 5, 1,000 × 1 ms + 1,000 × 3 s: rank 1,980 > 1,000 → 3000.319 ms.
	// Their mean: (5·1 + 5001.215 + 3000.319) / 7 = 1143.790571 ms.
	// Merged: 7,000 × 1 ms, 1,000 × 3 s, 3,000 × 5 s; rank round(0.99·11,000)
	// = 10,890 > 8,000 → 5001.215 ms.
	want := "p99 per 10s: [1.0, 1.0, 1.0, 5001.2, 1.0, 3000.3, 1.0] avg= 1143.8 overall= 5001.2"
	if got := rep.Line(); got != want {
		t.Errorf("Line() =\n %s\nwant\n %s", got, want)
	}
	all := rep.All
	if !closeTo(all.WindowP99MeanMS, 1143.790571, 1e-6) || all.MergedMS.P99 != 5001.215 {
		t.Errorf("window mean %v, merged %v; want 1143.790571 and 5001.215", all.WindowP99MeanMS, all.MergedMS.P99)
	}
	if !strings.Contains(all.Warning, "cannot be averaged") {
		t.Errorf("warning %q does not explain why percentiles cannot be averaged", all.Warning)
	}
	if len(all.Windows) != 7 || len(rep.ByTag) != 0 {
		t.Fatalf("%d windows, %d tags; want 7 and none (one tag is All)", len(all.Windows), len(rep.ByTag))
	}
	w3 := all.Windows[3]
	if w3.StartS != 30 || w3.EndS != 40 || w3.Requests != 4000 || w3.Rate != 400 || w3.Target != 100 || w3.Dropped != 7 {
		t.Errorf("window 3 = %+v; want 30-40 s, 4000 requests at 400/s, target 100, 7 dropped", w3)
	}
	if w3.LatencyMS.P50 != 5001.215 || w3.LatencyMS.Max != 5001.215 {
		t.Errorf("window 3 latency %+v; want p50 and max 5001.215 (3,000 of 4,000 are slow)", w3.LatencyMS)
	}
	if all.Windows[0].LatencyMS != (analyze.WindowLatencies{P50: 1, P95: 1, P99: 1, Max: 1}) {
		t.Errorf("window 0 latency %+v; want all 1 ms", all.Windows[0].LatencyMS)
	}
}

func TestWindowsPerTag(t *testing.T) {
	// 25 s, windows of 10 s: the last one is 5 s long. GET /a: 10/s at 1 ms,
	// GET /b: 10/s at 2 ms; dropped iterations are per scenario.
	f := newFakeRun("open", 25, rundir.Scenario{Name: "s", Model: "open", TargetRate: 20})
	for sec := range 25 {
		f.add(sec, lat("s", "GET /a"), time.Millisecond, 10)
		f.add(sec, lat("s", "GET /b"), 2*time.Millisecond, 10)
		f.count(sec, "s", record.Counters{Requests: 20, DroppedIterations: 1}, 20)
	}
	rep := analyze.Windows(f.r, 10*time.Second, nil)
	if len(rep.ByTag) != 2 || rep.ByTag[0].Name != "GET /a" || rep.ByTag[1].Name != "GET /b" {
		t.Fatalf("by_tag = %+v; want GET /a then GET /b", rep.ByTag)
	}
	last := rep.All.Windows[2]
	if last.StartS != 20 || last.EndS != 25 || last.Requests != 100 || last.Rate != 20 || last.Dropped != 5 {
		t.Errorf("last window %+v; want 20-25 s, 100 requests at 20/s, 5 dropped", last)
	}
	// All windows alike: mean of p99s equals the merged p99 (2 ms), no warning.
	if rep.All.WindowP99MeanMS != 2 || rep.All.MergedMS.P99 != 2 || rep.All.Warning != "" {
		t.Errorf("all: mean %v merged %v warning %q; want 2, 2, none",
			rep.All.WindowP99MeanMS, rep.All.MergedMS.P99, rep.All.Warning)
	}
	b := rep.ByTag[1]
	if b.Windows[0].Requests != 100 || b.MergedMS.P99 != 2 || b.Windows[0].Dropped != 0 {
		t.Errorf("GET /b = %+v; want 100 requests per window, p99 2 ms, no scenario-level dropped", b.Windows[0])
	}
	// Only GET /a: keep narrows All.
	onlyA := analyze.Windows(f.r, 10*time.Second, func(k record.Key) bool { return k.Name == "GET /a" })
	if onlyA.All.Windows[0].Requests != 100 || onlyA.All.MergedMS.Max != 1 {
		t.Errorf("keep GET /a: %+v", onlyA.All.Windows[0])
	}
}

func TestWindowSeriesJSON(t *testing.T) {
	rep := analyze.Windows(articleWindowsRun(), 10*time.Second, nil)
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	for _, field := range []string{`"window_s":10`, `"start_s":30`, `"window_p99_mean_ms":`, `"merged_ms":`, `"p99":5001.215`} {
		if !strings.Contains(string(b), field) {
			t.Errorf("JSON lacks %s", field)
		}
	}
	var back analyze.WindowReport
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Line() != rep.Line() {
		t.Errorf("Line after a JSON round trip = %q, want %q", back.Line(), rep.Line())
	}
}

// TestExtendWindowsEqualsWindows: a run growing one interval at a time, cut
// with ExtendWindows from the cut before, gives at every step exactly what
// Windows gives from scratch, also when a tag appears midway and when the
// slow requests land in a window's last second.
func TestExtendWindowsEqualsWindows(t *testing.T) {
	full := articleWindowsRun()
	kb := lat("open", "GET /b")
	for sec := 30; sec < 70; sec++ {
		iv := full.Intervals[sec]
		iv.Histograms[kb] = record.NewHistogram()
		iv.Histograms[kb].RecordN(2*time.Millisecond, 50)
	}
	var prev analyze.WindowReport
	for n := 1; n <= len(full.Intervals); n++ {
		part := *full
		part.Intervals = full.Intervals[:n]
		got := analyze.ExtendWindows(&part, 10*time.Second, nil, prev)
		want := analyze.Windows(&part, 10*time.Second, nil)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("after %d intervals ExtendWindows differs from Windows:\n got %+v\nwant %+v", n, got, want)
		}
		prev = got
	}
	if len(prev.ByTag) != 2 || len(prev.All.Windows) != 7 {
		t.Fatalf("end: %d tags, %d windows; want 2 tags, 7 windows", len(prev.ByTag), len(prev.All.Windows))
	}
}

// TestExtendWindowsKeepsCompleteWindows: the windows of prev but its last
// are taken as they are, not merged again; another window length recomputes.
func TestExtendWindowsKeepsCompleteWindows(t *testing.T) {
	r := articleWindowsRun()
	prev := analyze.Windows(r, 10*time.Second, nil)
	prev.All.Windows[0].Requests = -1 // a mark no merge can give
	prev.All.Windows[6].Requests = -1
	got := analyze.ExtendWindows(r, 10*time.Second, nil, prev)
	if got.All.Windows[0].Requests != -1 {
		t.Errorf("window 0 recomputed (%d requests): a complete window should be kept", got.All.Windows[0].Requests)
	}
	if got.All.Windows[6].Requests != 1000 {
		t.Errorf("last window has %d requests, want 1000 merged again", got.All.Windows[6].Requests)
	}
	if other := analyze.ExtendWindows(r, 5*time.Second, nil, prev); other.All.Windows[0].Requests != 500 {
		t.Errorf("5 s windows from a 10 s prev: window 0 has %d requests, want 500", other.All.Windows[0].Requests)
	}
}

// The windows of the whole run count every scenario's dropped iterations
// and target, including a scenario none of whose iterations was sent (it
// has no latency series at all): b dropped all of its 5 per second.
func TestWindowsCountScenariosWithoutRequests(t *testing.T) {
	f := newFakeRun("open", 20, rundir.Scenario{Name: "a", Model: "open", TargetRate: 10},
		rundir.Scenario{Name: "b", Model: "open", TargetRate: 5})
	for sec := range 20 {
		f.add(sec, lat("a", "GET /a"), time.Millisecond, 10)
		f.count(sec, "a", record.Counters{Requests: 10}, 10)
		f.count(sec, "b", record.Counters{DroppedIterations: 5}, 5)
	}
	w := analyze.Windows(f.r, 10*time.Second, nil).All.Windows[0]
	if w.Requests != 100 || w.Dropped != 50 || w.Target != 15 {
		t.Errorf("window 0 = %+v; want 100 requests, 50 dropped (all b's), target 15", w)
	}
}

// TestWindowsSparse: two intervals a year apart make two windows, not one
// per 10 s of the year between them, and each window holds its own request
// (hand-made: 1 request of 4 ms, then 3 of 8 ms). Before windows were sparse
// this built 3,153,601 windows, each scanning every interval.
func TestWindowsSparse(t *testing.T) {
	const year = 365 * 24 * time.Hour
	k := lat("s", "GET /")
	f := newFakeRun("open", 2, rundir.Scenario{Name: "s"})
	f.r.Intervals[1].Start, f.r.Intervals[1].End = year, year+time.Second
	f.add(0, k, 4*time.Millisecond, 1).add(1, k, 8*time.Millisecond, 3)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	rep := analyze.Windows(f.r, 0, nil)
	runtime.ReadMemStats(&after)
	w := rep.All.Windows
	if len(w) != 2 || w[0].Requests != 1 || w[1].Requests != 3 || w[1].StartS != year.Seconds() || w[1].EndS != year.Seconds()+1 {
		t.Fatalf("windows %+v, want 2: 1 request at 0 s, 3 at %v s", w, year.Seconds())
	}
	// Generous: two windows and their merged histograms take well under 8 MB.
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8<<20 {
		t.Errorf("Windows allocated %d bytes for 2 intervals, want < 8 MiB", alloc)
	}
}

// FuzzWindows: whatever the intervals' starts (gaps of years included), the
// windows are no more than the intervals, in time order, and hold every
// request once.
func FuzzWindows(f *testing.F) {
	f.Add(int64(0), int64(1e9), int64(365*24*3600e9), uint16(3))
	f.Add(int64(5e9), int64(5e9), int64(7), uint16(1))
	f.Fuzz(func(t *testing.T, a, b, c int64, n uint16) {
		k := lat("s", "x")
		f := newFakeRun("open", 3, rundir.Scenario{Name: "s"})
		var want int64
		for i, s := range []int64{a, b, c} {
			s = max(s, 0) % (100 * 365 * 24 * 3600e9) // within a century
			f.r.Intervals[i].Start, f.r.Intervals[i].End = time.Duration(s), time.Duration(s)+time.Second
			f.add(i, k, time.Millisecond, int64(n%100)+1)
			want += int64(n%100) + 1
		}
		rep := analyze.Windows(f.r, 0, nil)
		var got int64
		for i, w := range rep.All.Windows {
			got += w.Requests
			if i > 0 && w.StartS <= rep.All.Windows[i-1].StartS {
				t.Fatalf("windows out of order: %+v", rep.All.Windows)
			}
		}
		if len(rep.All.Windows) > 3 || got != want {
			t.Fatalf("%d windows with %d requests, want at most 3 with %d", len(rep.All.Windows), got, want)
		}
	})
}

// The flush after the load's end makes a short last interval with nothing
// in it: no window of its own. A window without requests inside the
// load's span (a freeze) stays. 1 s windows over a 3 s scenario: requests
// in seconds 0 and 2, none in second 1, then an empty 6 ms interval at 3 s.
func TestWindowsLeaveOutTheEmptyTail(t *testing.T) {
	k := lat("s", "GET /")
	f := newFakeRun("open", 4, rundir.Scenario{Name: "s", Model: "open", TargetRate: 10, Span: 3 * time.Second})
	f.r.Intervals[3].End = 3*time.Second + 6*time.Millisecond
	f.add(0, k, time.Millisecond, 10).count(0, "s", record.Counters{Requests: 10}, 10)
	f.count(1, "s", record.Counters{}, 10)
	f.add(2, k, time.Millisecond, 20).count(2, "s", record.Counters{Requests: 20}, 10)
	w := analyze.Windows(f.r, time.Second, nil).All.Windows
	var got []int64
	for _, x := range w {
		got = append(got, x.Requests)
	}
	if !reflect.DeepEqual(got, []int64{10, 0, 20}) {
		t.Errorf("windows' requests %v, want [10 0 20]: the freeze at 1 s kept, the empty tail at 3 s left out", got)
	}
}
