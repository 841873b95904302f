package importer

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestListUntimed(t *testing.T) {
	in := "# latencies of one run\n\n1.5\n2.5 # inline comment\n\t3.5\n0.0001\n7200000\n"
	for _, tc := range []struct {
		unit     Unit
		p50, max time.Duration
	}{
		// sorted 0.0001 1.5 2.5 3.5 7200000: p50 is rank 3 = 2.5; 7200000 ms (2 h) is clamped to 1 h.
		{"", ms(2.5), time.Hour},
		{UnitMicros, 2500 * time.Nanosecond, 7200 * time.Millisecond},
		{UnitSecs, 2500 * time.Millisecond, time.Hour},
	} {
		res, sink, err := importString(t, "l.txt", in, Options{Unit: tc.unit, Duration: 10 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		h := sink.merged(latencyOf(defaultScenario, ""))
		if res.Format != FormatList || h.Count() != 5 || !near(h.Percentile(50), tc.p50) || !near(h.Max(), tc.max) {
			t.Errorf("unit %q: format %q n %d p50 %v max %v", tc.unit, res.Format, h.Count(), h.Percentile(50), h.Max())
		}
		if len(sink.snaps) != 1 || sink.snaps[0].End != 10*time.Second || sink.final.Summary.Rate != 0.5 {
			t.Errorf("unit %q: %d intervals, end %v, rate %v; want 1, 10s, 0.5/s", tc.unit, len(sink.snaps), sink.snaps[0].End, sink.final.Summary.Rate)
		}
		// Above 1 h: 2 h (ms), 7200000 s; 0.0001 ms and 0.0001 µs are
		// under the 1 µs resolution, counted as 1 µs and not clamped.
		if wantClamped := map[Unit]int64{"": 1, UnitMicros: 0, UnitSecs: 1}[tc.unit]; res.Clamped != wantClamped {
			t.Errorf("unit %q: clamped %d, want %d", tc.unit, res.Clamped, wantClamped)
		}
	}
}

// Without timestamps and without a duration, nothing says how long the
// list took: no rate and no duration, not one invented from the interval.
func TestListUntimedNoDuration(t *testing.T) {
	_, sink, err := importString(t, "l.txt", "1\n2\n3\n4\n", Options{})
	if err != nil {
		t.Fatal(err)
	}
	m := sink.final
	if !m.NoTimestamps || !m.Summary.NoTimestamps || m.Summary.Rate != 0 || m.Summary.DurationS != 0 || m.Summary.Requests != 4 {
		t.Errorf("no_timestamps %v/%v, rate %v, duration %v, requests %d; want true, 0, 0, 4",
			m.NoTimestamps, m.Summary.NoTimestamps, m.Summary.Rate, m.Summary.DurationS, m.Summary.Requests)
	}
}

func TestListTimed(t *testing.T) {
	in := "5,0.2\n6 0.7\n7\t1.1\n8;2.9\n"
	_, sink, err := importString(t, "t.list", in, Options{Scenario: "s", Name: "n"})
	if err != nil {
		t.Fatal(err)
	}
	var got []int64
	for _, s := range sink.snaps {
		got = append(got, s.Counters["s"].Requests)
	}
	if len(got) != 3 || got[0] != 2 || got[1] != 1 || got[2] != 1 {
		t.Errorf("requests per second %v, want [2 1 1]", got)
	}
}

func TestListBadInput(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		line     int64
		msg      string
	}{
		{"word", "1\n2\nfast\n", 3, `"fast" is not a latency`},
		{"mixed timestamps", "1 0.5\n2\n", 2, "timestamp column appears or disappears"},
		{"bad timestamp", "1 noon\n", 1, `timestamp "noon" is not a time`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := importString(t, "bad.txt", tc.in, Options{Format: FormatList})
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Line != tc.line || !strings.Contains(pe.Msg, tc.msg) {
				t.Errorf("err = %v, want line %d containing %q", err, tc.line, tc.msg)
			}
		})
	}
	res, sink, err := importString(t, "bad.txt", "1\nx\n2\n", Options{Lenient: true})
	if err != nil || res.Skipped != 1 || sink.final.Counters.Requests != 2 {
		t.Errorf("lenient: err %v skipped %d requests %d; want nil 1 2", err, res.Skipped, sink.final.Counters.Requests)
	}
}

func TestDetect(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     Format
		err      error
	}{
		{"x.dat", k6Header, FormatK6CSV, nil},
		{"x.txt", `{"type":"Metric"}`, FormatK6JSON, nil},
		{"x", "#[Histogram log format version 1.3]\n", FormatHlog, nil},
		{"x", "Tag=a,0.1,1.0,2.0,HISTFAAAA\n", FormatHlog, nil},
		{"x", "# comment\n12.5\n", FormatList, nil},
		{"x.csv", "hello,world\n", FormatK6CSV, nil}, // the content is unsure: the extension decides
		{"x", "hello,world\n", "", ErrUnknownFormat},
		{"x.csv", "", "", ErrEmpty},
	} {
		_, format, err := openInput(strings.NewReader(tc.in), tc.name, FormatAuto)
		if format != tc.want || !errors.Is(err, tc.err) {
			t.Errorf("%s %q: %q %v, want %q %v", tc.name, tc.in, format, err, tc.want, tc.err)
		}
	}
}

func TestOptionErrors(t *testing.T) {
	for _, o := range []Options{{Format: "xml"}, {Unit: "fortnight"}, {Interval: time.Microsecond}, {Window: -1}, {Model: "half-open"}} {
		if _, err := o.withDefaults(); !errors.Is(err, ErrOption) {
			t.Errorf("%+v: err %v, want ErrOption", o, err)
		}
	}
}

// TestListQuietSpells: seconds without rows between rows are written as
// intervals of 0 requests, so a closed-model stall is time the rate and the
// stall signal see, inside the window of late rows (10 intervals) or past
// it. By hand, from the rows' seconds: rows in seconds 0, 1, 5, 6 give 7
// intervals [1 1 0 0 0 1 1]; rows in seconds 0 and 10 give 11; rows in
// seconds 0 and 11 (a jump past the window) give 12; rows in seconds 0 and
// 40 give 41, 39 of them empty; rows two hours apart (past maxQuiet, a
// pause) give 2.
func TestListQuietSpells(t *testing.T) {
	for _, tt := range []struct {
		name string
		in   string
		want []int64 // requests per written interval
	}{
		{"a 3 s quiet spell", "5,0.5\n5,1.5\n5,5.5\n5,6.5\n", []int64{1, 1, 0, 0, 0, 1, 1}},
		{"9 quiet seconds: inside the window", "5,0.5\n5,10.5\n", []int64{1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}},
		{"10 quiet seconds: past the window", "5,0.5\n5,11.5\n", []int64{1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}},
		{"39 quiet seconds", "5,0.5\n5,40.5\n", append(append([]int64{1}, make([]int64, 39)...), 1)},
		{"two hours apart: a pause between tests", "5,0.5\n5,7200.5\n", []int64{1, 1}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, sink, err := importString(t, "q.list", tt.in, Options{Scenario: "s"})
			if err != nil {
				t.Fatal(err)
			}
			var got []int64
			for _, s := range sink.snaps {
				got = append(got, s.Counters["s"].Requests)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("requests per interval %v, want %v", got, tt.want)
			}
		})
	}
}
