package importer

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/knee-dev/knee/record"
)

// writeLog writes an interval log whose intervals hold the given values (ms).
func writeLog(t testing.TB, comment string, start time.Time, ivs []logIv) string {
	t.Helper()
	var buf bytes.Buffer
	lw, err := record.NewLogWriter(&buf, start, comment)
	if err != nil {
		t.Fatal(err)
	}
	for _, iv := range ivs {
		h := record.NewHistogram()
		for _, v := range iv.ms {
			h.Record(ms(v))
		}
		if err := lw.WriteInterval(iv.tag, iv.start, time.Second, h); err != nil {
			t.Fatal(err)
		}
	}
	return buf.String()
}

type logIv struct {
	tag   string
	start time.Duration
	ms    []float64
}

func TestHlogKneeLog(t *testing.T) {
	a := record.Key{Metric: record.Latency, Scenario: "s1", Name: "GET /a b"}.Tag()
	svc := record.Key{Metric: record.Service, Scenario: "s1", Name: "GET /a b"}.Tag()
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	log := writeLog(t, "knee 0.1.0 run, values in µs", start, []logIv{
		{a, 0, []float64{1, 2, 3, 4, 5}},
		{svc, 0, []float64{1, 1}},
		{a, time.Second, []float64{6, 7, 8, 9, 10}},
		{"", 2 * time.Second, []float64{100}}, // untagged: the default scenario
	})
	res, sink, err := importString(t, "k.hlog", log, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Format != FormatHlog || len(sink.snaps) != 3 || !sink.final.Started.Equal(start) {
		t.Fatalf("format %q, %d intervals from %v; want hlog, 3 from %v", res.Format, len(sink.snaps), sink.final.Started, start)
	}
	for i, s := range sink.snaps {
		if s.Start != time.Duration(i)*time.Second || s.End != s.Start+time.Second {
			t.Errorf("interval %d: %v..%v", i, s.Start, s.End)
		}
	}
	if len(sink.snaps[0].Histograms) != 2 || sink.snaps[0].Counters["s1"].Requests != 5 {
		t.Errorf("first interval: %d series, %d requests; want 2 and 5 (service samples are no requests)",
			len(sink.snaps[0].Histograms), sink.snaps[0].Counters["s1"].Requests)
	}
	h := sink.merged(latencyOf("s1", "GET /a b"))
	// 1..10 ms: nearest rank p50 = 5 ms, p90 = 9 ms.
	if h.Count() != 10 || !near(h.Percentile(50), ms(5)) || !near(h.Percentile(90), ms(9)) {
		t.Errorf("n %d p50 %v p90 %v; want 10 5ms 9ms", h.Count(), h.Percentile(50), h.Percentile(90))
	}
	if n := sink.merged(latencyOf(defaultScenario, "")).Count(); n != 1 || sink.final.Counters.Requests != 11 {
		t.Errorf("untagged %d, requests %d; want 1 and 11", n, sink.final.Counters.Requests)
	}
}

// TestHlogUnits: a foreign log (jHiccup's comment) holds nanoseconds unless --unit says otherwise.
func TestHlogUnits(t *testing.T) {
	// The raw values written are 5000 and 8000 (the writer stores µs).
	log := writeLog(t, "[Logged with jHiccup version 2.0.10]", time.Unix(1e9, 0), []logIv{{"", 0, []float64{5, 8}}})
	for _, tc := range []struct {
		unit Unit
		max  time.Duration
	}{{"", 8 * time.Microsecond}, {UnitMicros, 8 * time.Millisecond}, {UnitMillis, 8 * time.Second}} {
		_, sink, err := importString(t, "j.hlog", log, Options{Unit: tc.unit})
		if err != nil {
			t.Fatal(err)
		}
		if got := sink.merged(latencyOf("", "")).Max(); !near(got, tc.max) {
			t.Errorf("unit %q: max %v, want %v", tc.unit, got, tc.max)
		}
	}
}

func TestHlogBadInput(t *testing.T) {
	in := "#[Histogram log format version 1.3]\n0.000,1.000,2.0,HISTnotbase64!!\n"
	_, _, err := importString(t, "bad.hlog", in, Options{})
	var le *record.LineError
	if !errors.As(err, &le) || le.Line != 2 || !strings.Contains(err.Error(), "bad.hlog") {
		t.Errorf("err = %v, want a LineError at bad.hlog:2", err)
	}
	_, _, err = importString(t, "empty.hlog", "#[Histogram log format version 1.3]\n", Options{Format: FormatHlog})
	if !errors.Is(err, ErrNoData) {
		t.Errorf("err = %v, want ErrNoData", err)
	}
}
