package importer

import (
	"errors"
	"os"
	"testing"
	"time"
)

// fuzzImport imports arbitrary bytes as format: it must not panic, and
// when it succeeds the counters must agree with the histograms.
func fuzzImport(f *testing.F, format Format, seeds ...string) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		for _, lenient := range []bool{false, true} {
			res, sink, err := importString(t, "fuzz", string(in), Options{Format: format, Lenient: lenient, MaxSeries: 8})
			if err != nil {
				var pe *ParseError
				if errors.As(err, &pe) && pe.Line < 1 {
					t.Fatalf("line %d in %v", pe.Line, err)
				}
				continue
			}
			h := sink.merged(latencyOf("", ""))
			if h.Count() != sink.final.Counters.Requests {
				t.Fatalf("%d latencies but %d requests", h.Count(), sink.final.Counters.Requests)
			}
			if res.Skipped > 0 && !lenient {
				t.Fatalf("skipped %d rows without Lenient", res.Skipped)
			}
		}
	})
}

func seedFile(f *testing.F, path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	return string(b)
}

func FuzzK6CSV(f *testing.F) {
	fuzzImport(f, FormatK6CSV, seedFile(f, "testdata/k6-unix.csv"), seedFile(f, "testdata/k6-rfc3339_nano.csv"),
		k6Header+"http_req_duration,1700000000,1.5,200,\"a,\"\"b\"\"\"\n")
}

func FuzzK6JSON(f *testing.F) {
	fuzzImport(f, FormatK6JSON, point("http_req_duration", "2026-01-01T00:00:00Z", "2.5", `"name":"a","status":"0","error_code":"1212"`),
		`{"type":"Metric","metric":"vus"}`)
}

func FuzzHlog(f *testing.F) {
	fuzzImport(f, FormatHlog, writeLog(f, "knee", time.Unix(1e9, 0), []logIv{{"latency|s|a", 0, []float64{1, 2}}, {"", time.Second, []float64{3}}}),
		writeLog(f, "", time.Time{}, []logIv{{"x", 0, []float64{0.5}}}))
}

func FuzzList(f *testing.F) {
	fuzzImport(f, FormatList, "# ms\n1.5\n2\n\n3e2\n", "1 1700000000\n2 1700000001.5\n", "1,2026-01-01T00:00:00Z\n")
}
