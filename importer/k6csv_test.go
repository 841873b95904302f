package importer

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/knee-dev/knee/record"
)

// The hand-made files testdata/k6-<timeFormat>.csv hold the same 14
// requests in three seconds, in each of k6's timeFormats:
//
//	s1 "GET /a"          1..5 ms in second 0, 6..10 ms in second 1, all 200
//	s1 "GET /b"          100 ms 500 (expected_response false) in second 1,
//	                     0.5 ms status 0 error_code 1212 (refused) in second 2
//	s1 "GET /c?a=1,b=2"  7 ms 200 in second 2 (quoted: the name holds a comma)
//	s1 http://x/d        3 ms 404 with expected_response true (no name tag: the url)
//	vus 3 in second 0, 5 in second 1; dropped_iterations 2 in second 2
//
// All 14 sorted: 0.5 1 2 3 3 4 5 6 7 7 8 9 10 100 (ms), so nearest rank
// gives p50 = 5 (rank 7), p90 = 10 (rank 13), p99 = 100 (rank 14).
func TestK6CSVTimeFormats(t *testing.T) {
	for _, format := range []string{"unix", "unix_milli", "unix_micro", "unix_nano", "rfc3339_nano"} {
		t.Run(format, func(t *testing.T) {
			res, sink, err := importFile(t, "testdata/k6-"+format+".csv", Options{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Format != FormatK6CSV {
				t.Errorf("format = %q", res.Format)
			}
			wantStart := time.Unix(1700000000, 0).UTC()
			if !sink.final.Started.Equal(wantStart) || !sink.final.Ended.Equal(wantStart.Add(3*time.Second)) {
				t.Errorf("run %v .. %v, want %v + 3s", sink.final.Started, sink.final.Ended, wantStart)
			}
			c := sink.final.Counters
			if c.Requests != 14 || c.Errors != 2 || c.DroppedIterations != 2 {
				t.Errorf("requests %d errors %d dropped %d, want 14 2 2", c.Requests, c.Errors, c.DroppedIterations)
			}
			wantStatus := map[string]int64{"2xx": 11, "4xx": 1, "5xx": 1}
			for k, v := range wantStatus {
				if c.ByStatus[k] != v {
					t.Errorf("by status %v, want %v", c.ByStatus, wantStatus)
				}
			}
			if c.ErrorsByClass["refused"] != 1 || len(nonZero(c.ErrorsByClass)) != 1 {
				t.Errorf("errors by class %v, want refused 1", c.ErrorsByClass)
			}
			checkIntervals(t, sink)
			all := sink.merged(latencyOf("", ""))
			for _, p := range []struct {
				pct  float64
				want time.Duration
			}{{50, ms(5)}, {90, ms(10)}, {99, ms(100)}, {100, ms(100)}, {0, ms(0.5)}} {
				if got := all.Percentile(p.pct); !near(got, p.want) {
					t.Errorf("p%v = %v, want %v", p.pct, got, p.want)
				}
			}
			a := sink.merged(latencyOf("s1", "GET /a"))
			if a.Count() != 10 || !near(a.Percentile(50), ms(5)) || !near(a.Percentile(90), ms(9)) {
				t.Errorf("GET /a: n %d p50 %v p90 %v, want 10 5ms 9ms", a.Count(), a.Percentile(50), a.Percentile(90))
			}
			for _, name := range []string{"GET /c?a=1,b=2", "http://x/d"} {
				if n := sink.merged(latencyOf("s1", name)).Count(); n != 1 {
					t.Errorf("%q: %d latencies, want 1", name, n)
				}
			}
		})
	}
}

// checkIntervals checks the per-second split of the hand-made files.
func checkIntervals(t *testing.T, sink *memSink) {
	t.Helper()
	if len(sink.snaps) != 3 {
		t.Fatalf("%d intervals, want 3", len(sink.snaps))
	}
	for i, want := range []struct {
		requests, errors int64
		vus              int
	}{{5, 0, 3}, {6, 1, 5}, {3, 1, 0}} {
		s := sink.snaps[i]
		if s.Start != time.Duration(i)*time.Second || s.End != time.Duration(i+1)*time.Second {
			t.Errorf("interval %d: %v..%v", i, s.Start, s.End)
		}
		c := s.Counters["s1"]
		if c.Requests != want.requests || c.Errors != want.errors {
			t.Errorf("interval %d: requests %d errors %d, want %d %d", i, c.Requests, c.Errors, want.requests, want.errors)
		}
		if got := sink.extras[i]["s1"].VUs; got != want.vus {
			t.Errorf("interval %d: vus %d, want %d", i, got, want.vus)
		}
	}
}

func nonZero(m map[string]int64) map[string]int64 {
	out := map[string]int64{}
	for k, v := range m {
		if v != 0 {
			out[k] = v
		}
	}
	return out
}

// TestK6CSVColumnsByHeader: another column order and set, a BOM, CRLF line ends,
// no expected_response (k6's default rule: status 0 or >= 400 fails).
func TestK6CSVColumnsByHeader(t *testing.T) {
	in := "\ufefftimestamp,status,metric_value,metric_name,name\r\n" +
		"1700000000,200,2.500000,http_req_duration,x\r\n" +
		"1700000000,404,4.000000,http_req_duration,x\r\n" +
		"1700000001,0,1.000000,http_req_duration,x\r\n" +
		"1700000001,399,3.000000,http_req_duration,\r\n"
	_, sink, err := importString(t, "t.csv", in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := sink.final.Counters
	if c.Requests != 4 || c.Errors != 2 || c.ErrorsByClass["other"] != 1 {
		t.Errorf("requests %d errors %d by class %v, want 4 2 other:1", c.Requests, c.Errors, c.ErrorsByClass)
	}
	if n := sink.merged(latencyOf("default", "x")).Count(); n != 3 {
		t.Errorf("default/x holds %d latencies, want 3", n)
	}
}

func TestK6CSVOverridesAndModel(t *testing.T) {
	_, sink, err := importFile(t, "testdata/k6-unix.csv", Options{Scenario: "books", Name: "all", Model: "closed", TargetRate: 5})
	if err != nil {
		t.Fatal(err)
	}
	if n := sink.merged(latencyOf("books", "all")).Count(); n != 14 {
		t.Errorf("books/all holds %d latencies, want 14", n)
	}
	// closed model: iteration_duration (1.2 .. 5.2 ms, second 0) becomes the Interval series.
	iv := sink.merged(func(k record.Key) bool { return k.Metric == record.Interval })
	if iv.Count() != 5 || !near(iv.Max(), ms(5.2)) {
		t.Errorf("interval series: n %d max %v, want 5 5.2ms", iv.Count(), iv.Max())
	}
	if sink.final.Model != "closed" || sink.extras[0]["books"].TargetRate != 5 {
		t.Errorf("model %q target %v", sink.final.Model, sink.extras[0]["books"].TargetRate)
	}
}

const k6Header = "metric_name,timestamp,metric_value,status,name\n"

func TestK6CSVBadInput(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		line     int64
		msg      string
	}{
		{"non-numeric value", k6Header + "http_req_duration,1700000000,1.5,200,a\nhttp_req_duration,1700000000,abc,200,a\n", 3, `metric_value "abc" is not a duration`},
		{"negative value", k6Header + "http_req_duration,1700000000,-1,200,a\n", 2, "is not a duration"},
		{"missing column", k6Header + "http_req_duration,1700000000,1.5,200\n", 2, "4 fields where the header has 5: missing or extra columns"},
		{"truncated last line", k6Header + "http_req_duration,1700000000,1.5,200,a\nhttp_req_dur", 3, "truncated last line"},
		{"bad timestamp", k6Header + "http_req_duration,yesterday,1.5,200,a\n", 2, `timestamp "yesterday" is not a time`},
		{"bad status", k6Header + "http_req_duration,1700000000,1.5,2xx,a\n", 2, `status "2xx"`},
		{"bad counter", k6Header + "http_req_duration,1700000000,1.5,200,a\ndropped_iterations,1700000000,x,,\n", 3, `metric_value "x" is not a number`},
		{"open quote", k6Header + "http_req_duration,1700000000,1.5,200,\"a\n", 2, "quoted field never closes"},
		{"time jump", k6Header + "http_req_duration,1700000000,1.5,200,a\nhttp_req_duration,1800000000,1.5,200,a\n", 3, "jumps more than"},
		{"header lacks columns", "metric_name,metric_value\nhttp_req_duration,1\n", 1, "header lacks [timestamp]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := importString(t, "bad.csv", tc.in, Options{Format: FormatK6CSV})
			var pe *ParseError
			if !errors.As(err, &pe) || !errors.Is(err, ErrBadRow) {
				t.Fatalf("err = %v, want a ParseError", err)
			}
			if pe.File != "bad.csv" || pe.Line != tc.line || !strings.Contains(pe.Msg, tc.msg) {
				t.Errorf("got %s:%d %q, want bad.csv:%d containing %q", pe.File, pe.Line, pe.Msg, tc.line, tc.msg)
			}
		})
	}
}

func TestK6CSVLenient(t *testing.T) {
	in := k6Header +
		"http_req_duration,1700000000,1.0,200,a\n" +
		"http_req_duration,1700000000,oops,200,a\n" + // line 3
		"http_req_duration,1700000000\n" +
		"http_req_duration,1700000000,3.0,200,a\n"
	res, sink, err := importString(t, "l.csv", in, Options{Lenient: true})
	if err != nil {
		t.Fatal(err)
	}
	var pe *ParseError
	if res.Skipped != 2 || !errors.As(res.FirstBad, &pe) || pe.Line != 3 {
		t.Errorf("skipped %d first %v, want 2 at line 3", res.Skipped, res.FirstBad)
	}
	if sink.final.Counters.Requests != 2 || !strings.Contains(strings.Join(sink.final.Notes, "\n"), "skipped 2 bad rows") {
		t.Errorf("requests %d notes %q", sink.final.Counters.Requests, sink.final.Notes)
	}
}

func TestK6CSVNothingToImport(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     error
	}{
		{"empty file", "", ErrEmpty},
		{"blank file", "\n\n  \n", ErrEmpty},
		{"header only", k6Header, ErrNoData},
		{"no http rows", k6Header + "vus,1700000000,3,,\n", ErrNoData},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := importString(t, "e.csv", tc.in, Options{})
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), "e.csv") {
				t.Errorf("err = %v, want %v naming e.csv", err, tc.want)
			}
		})
	}
}

// TestWindowLateRows: with a window of 2 intervals, second 0 is written
// when second 2 opens, before the input ends, and a row for second 0 that
// comes after that is counted late into the oldest open interval.
func TestWindowLateRows(t *testing.T) {
	in := k6Header +
		"http_req_duration,1700000000,1,200,a\n" +
		"http_req_duration,1700000001,1,200,a\n" +
		"http_req_duration,1700000000,1,200,a\n" + // early enough: second 0 is still open
		"http_req_duration,1700000002,1,200,a\n" + // second 0 written here
		"http_req_duration,1700000000,1,200,a\n" // late: lands in second 1
	res, sink, err := importString(t, "w.csv", in, Options{Window: 2})
	if err != nil {
		t.Fatal(err)
	}
	var got []int64
	for _, s := range sink.snaps {
		got = append(got, s.Counters["default"].Requests)
	}
	if res.Late != 1 || len(got) != 3 || got[0] != 2 || got[1] != 2 || got[2] != 1 {
		t.Errorf("late %d, requests per interval %v; want 1, [2 2 1]", res.Late, got)
	}
}

// TestEarlyRowsGrowWindowBackwards: rows slightly before the first one open
// earlier intervals as long as nothing was written yet.
func TestEarlyRowsGrowWindowBackwards(t *testing.T) {
	in := k6Header +
		"http_req_duration,1700000002,1,200,a\n" +
		"http_req_duration,1700000000,2,200,a\n"
	_, sink, err := importString(t, "b.csv", in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Seconds 0, 1 and 2 are written; second 1 saw no row and is written
	// empty: it lies between rows, inside the window.
	if len(sink.snaps) != 3 || !sink.final.Started.Equal(time.Unix(1700000000, 0)) || sink.snaps[2].Start != 2*time.Second {
		t.Errorf("%d intervals from %v, want 3 from 1700000000", len(sink.snaps), sink.final.Started)
	}
}

// TestSparseIntervals: 5 rows 6 h apart (the longest pause taken as a pause)
// write 5 intervals, not one per second of the 24 h between the first and the
// last, so the import costs what its rows do, not what its span does.
func TestSparseIntervals(t *testing.T) {
	var in strings.Builder
	in.WriteString(k6Header)
	for i := range 5 {
		fmt.Fprintf(&in, "http_req_duration,%d,12,200,a\n", 1700000000+i*6*3600)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	res, sink, err := importString(t, "span.csv", in.String(), Options{})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if len(sink.snaps) != 5 || res.Meta.Summary.Requests != 5 {
		t.Fatalf("%d intervals, %d requests; want 5 and 5", len(sink.snaps), res.Meta.Summary.Requests)
	}
	for i, s := range sink.snaps {
		if want := time.Duration(i) * 6 * time.Hour; s.Start != want || s.End != want+time.Second {
			t.Errorf("interval %d: %v..%v, want %v..%v", i, s.Start, s.End, want, want+time.Second)
		}
	}
	if got := res.Meta.Summary.DurationS; got != 24*3600 {
		t.Errorf("duration %v s, want %d (the first stamp to the last)", got, 24*3600)
	}
	// Generous: five intervals take well under 16 MiB (86,401 took hundreds).
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
		t.Errorf("import allocated %d bytes for 5 rows, want < 16 MiB", alloc)
	}
}

// TestLineLimit: a line past limits.Line (1 MiB) stops the import at that
// line, having read little more than the limit (a 16 MiB line of commas took
// 1.8 GB before).
func TestLineLimit(t *testing.T) {
	in := k6Header + strings.Repeat(",", 16<<20) + "\n"
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, _, err := importString(t, "commas.csv", in, Options{})
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "commas.csv:2: line longer than 1 MiB") || !errors.Is(err, ErrBadRow) {
		t.Errorf("error %v, want line 2 longer than 1 MiB", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
		t.Errorf("import allocated %d bytes before refusing the line, want < 64 MiB", alloc)
	}
}

// iteration_duration and the six phases become the scenario's Trend series
// (what a live knee run of the script records for the charts), in every
// model; the closed model also keeps iterations as its Interval series.
// Hand-made: two iterations of 100 and 300 ms in second 0, one of 200 ms in
// second 1; waiting 4 and 6 ms, blocked 1 ms.
func TestK6CSVIterationsAndPhasesAsTrends(t *testing.T) {
	const csv = "metric_name,timestamp,metric_value,status,name,scenario\n" +
		"http_req_duration,100,10,200,x,s\n" +
		"http_req_waiting,100,4,200,x,s\n" +
		"http_req_blocked,100,1,200,x,s\n" +
		"iteration_duration,100,100,,,s\n" +
		"iteration_duration,100,300,,,s\n" +
		"http_req_waiting,101,6,200,x,s\n" +
		"iteration_duration,101,200,,,s\n"
	for _, model := range []string{"", "open", "closed"} {
		t.Run("model "+model, func(t *testing.T) {
			_, sink, err := importString(t, "k6.csv", csv, Options{Model: model})
			if err != nil {
				t.Fatal(err)
			}
			trend := func(name string) *record.Histogram {
				return sink.merged(func(k record.Key) bool { return k.Metric == record.Trend && k.Scenario == "s" && k.Name == name })
			}
			it := trend(record.IterationDuration)
			if it.Count() != 3 || !near(it.Max(), ms(300)) || !near(it.Min(), ms(100)) {
				t.Errorf("iterations: n %d min %v max %v, want 3 100ms 300ms", it.Count(), it.Min(), it.Max())
			}
			if n := sink.snaps[0].Histograms[record.Key{Metric: record.Trend, Scenario: "s", Name: record.IterationDuration}].Count(); n != 2 {
				t.Errorf("second 0 holds %d iterations, want 2", n)
			}
			if w := trend("http_req_waiting"); w.Count() != 2 || !near(w.Max(), ms(6)) {
				t.Errorf("waiting: n %d max %v, want 2 6ms", w.Count(), w.Max())
			}
			if b := trend("http_req_blocked"); b.Count() != 1 || !near(b.Max(), ms(1)) {
				t.Errorf("blocked: n %d max %v, want 1 1ms", b.Count(), b.Max())
			}
			iv := sink.merged(func(k record.Key) bool { return k.Metric == record.Interval })
			if want := map[string]int64{"closed": 3}[model]; iv.Count() != want {
				t.Errorf("interval series holds %d, want %d", iv.Count(), want)
			}
		})
	}
}

// A steady 100 requests a second for 15 s, stamped in whole seconds as
// k6's CSV is by default, starting 0.4 s into a second: 60 requests in the
// first second, 100 in each of the next 14, 40 in the last. The rate is
// 1,500 / 15 s = 100/s; counting whole intervals (16 of them) gave 93.75.
func TestRateOverWholeSecondStamps(t *testing.T) {
	var in strings.Builder
	in.WriteString(k6Header)
	for i := range 1500 {
		at := 0.4 + float64(i)/100 // seconds after 1700000000
		fmt.Fprintf(&in, "http_req_duration,%d,12,200,a\n", 1700000000+int(at))
	}
	res, _, err := importString(t, "steady.csv", in.String(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s := res.Meta.Summary; s.Requests != 1500 || s.DurationS != 15 || s.Rate != 100 {
		t.Errorf("%d requests in %v s = %v/s; want 1500 in 15 s = 100/s", s.Requests, s.DurationS, s.Rate)
	}
}

// k6's ws_* time Trends become the scenario's Trend series, as a live
// knee run of a WebSocket script records them; its ws counters have no
// series and are skipped without complaint. Hand-made: two sessions
// connecting in 2 and 4 ms, one lasting 150 ms, one ping of 3 ms.
func TestK6CSVWebSocketTrends(t *testing.T) {
	const csv = "metric_name,timestamp,metric_value,status,name,scenario\n" +
		"http_req_duration,100,10,200,x,s\n" +
		"ws_sessions,100,1,101,ws://h/,s\n" +
		"ws_connecting,100,2,101,ws://h/,s\n" +
		"ws_sessions,100,1,101,ws://h/,s\n" +
		"ws_connecting,100,4,101,ws://h/,s\n" +
		"ws_msgs_sent,100,1,101,ws://h/,s\n" +
		"ws_ping,101,3,101,ws://h/,s\n" +
		"ws_session_duration,101,150,101,ws://h/,s\n"
	_, sink, err := importString(t, "k6.csv", csv, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name     string
		n        int64
		min, max time.Duration
	}{
		{"ws_connecting", 2, ms(2), ms(4)},
		{"ws_ping", 1, ms(3), ms(3)},
		{"ws_session_duration", 1, ms(150), ms(150)},
	} {
		h := sink.merged(func(k record.Key) bool { return k.Metric == record.Trend && k.Scenario == "s" && k.Name == c.name })
		if h.Count() != c.n || !near(h.Min(), c.min) || !near(h.Max(), c.max) {
			t.Errorf("%s: n %d min %v max %v, want %d %v %v", c.name, h.Count(), h.Min(), h.Max(), c.n, c.min, c.max)
		}
	}
}
