package importer

import (
	"compress/gzip"
	"encoding/csv"
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"
)

// refDir holds output of a real k6 run (see its script.js): the CSV, the
// JSON lines, summary.json and stdout.txt describe one run; rfc3339.csv.gz
// is another. Read in place, never copied.
const refDir = "../../shared/testdata/k6"

func refFile(t *testing.T, name string) string {
	t.Helper()
	p := filepath.Join(refDir, name)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("SKIP: interop file %s is missing: ../shared is not beside this checkout (%v)", p, err)
	}
	return p
}

// k6Durations reads every http_req_duration of a k6 CSV with encoding/csv
// and strconv: an oracle independent of the importer's own parser.
// It returns the values in ms, sorted, and their count per timestamp.
func k6Durations(t *testing.T, path string) ([]float64, map[string]int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var r io.Reader = f
	if filepath.Ext(path) == ".gz" {
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		r = zr
	}
	rows, err := csv.NewReader(r).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	var vals []float64
	perTime := map[string]int{}
	for _, row := range rows[1:] {
		if row[col["metric_name"]] != "http_req_duration" {
			continue
		}
		v, err := strconv.ParseFloat(row[col["metric_value"]], 64)
		if err != nil {
			t.Fatal(err)
		}
		vals = append(vals, v)
		perTime[row[col["timestamp"]]]++
	}
	slices.Sort(vals)
	return vals, perTime
}

// nearestRank is the smallest value with at least pct % of values at or below it.
func nearestRank(sorted []float64, pct float64) float64 {
	rank := int(math.Ceil(pct / 100 * float64(len(sorted))))
	return sorted[max(rank, 1)-1]
}

type k6Summary struct {
	Metrics map[string]map[string]float64 `json:"metrics"`
}

func readSummary(t *testing.T) k6Summary {
	t.Helper()
	b, err := os.ReadFile(refFile(t, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s k6Summary
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestK6Reference imports the CSV and the JSON lines of one k6 run: both must
// give summary.json's request count exactly, the CSV's own nearest-rank
// percentiles within HdrHistogram precision, and k6's interpolated
// p(90)/p(95) within 1 %.
func TestK6Reference(t *testing.T) {
	csvPath := refFile(t, "default-timeformat.csv")
	vals, perSecond := k6Durations(t, csvPath)
	sum := readSummary(t)
	wantReqs := int64(sum.Metrics["http_reqs"]["count"])
	if int64(len(vals)) != wantReqs {
		t.Fatalf("oracle: %d durations in the CSV, summary says %d", len(vals), wantReqs)
	}
	// k6's Trend percentile, as the README gives it: i = p·(N−1) into the
	// sorted samples, interpolated between v[⌊i⌋] and v[⌈i⌉]. It must give
	// summary.json's numbers (printed to the ns) from the CSV's samples.
	for key, p := range map[string]float64{"med": 0.5, "p(90)": 0.9, "p(95)": 0.95, "p(99)": 0.99} {
		i := p * float64(len(vals)-1)
		lo, hi := vals[int(math.Floor(i))], vals[int(math.Ceil(i))]
		if got, want := lo+(hi-lo)*(i-math.Floor(i)), sum.Metrics["http_req_duration"][key]; math.Abs(got-want) > 1e-6 {
			t.Errorf("oracle: k6's interpolation of the CSV gives %s = %v ms, summary.json %v ms", key, got, want)
		}
	}
	for _, file := range []string{"default-timeformat.csv", "results.json"} {
		t.Run(file, func(t *testing.T) {
			_, sink, err := importFile(t, refFile(t, file), Options{})
			if err != nil {
				t.Fatal(err)
			}
			c := sink.final.Counters
			if c.Requests != wantReqs || c.ByStatus["2xx"] != wantReqs {
				t.Errorf("requests %d (2xx %d), summary.json says %d", c.Requests, c.ByStatus["2xx"], wantReqs)
			}
			if fails := int64(sum.Metrics["http_req_failed"]["passes"]); c.Errors != fails {
				t.Errorf("errors %d, k6 http_req_failed %d", c.Errors, fails)
			}
			if got, want := c.BytesOut, int64(sum.Metrics["data_sent"]["count"]); got != want {
				t.Errorf("bytes out %d, summary %d", got, want)
			}
			// One interval per second of timestamps, each with the CSV's count.
			if len(sink.snaps) != len(perSecond) {
				t.Errorf("%d intervals, the CSV has %d distinct seconds", len(sink.snaps), len(perSecond))
			}
			start := sink.final.Started.Unix()
			for i, s := range sink.snaps {
				sec := strconv.FormatInt(start+int64(i), 10)
				if got := s.Counters["books"].Requests; got != int64(perSecond[sec]) {
					t.Errorf("second %s: %d requests, CSV has %d", sec, got, perSecond[sec])
				}
			}
			h := sink.merged(latencyOf("books", "GET /sleep"))
			for _, pct := range []float64{0, 50, 90, 95, 99, 99.9, 100} {
				want := ms(nearestRank(vals, pct))
				if pct == 0 {
					want = ms(vals[0])
				}
				if got := h.Percentile(pct); !near(got, want) {
					t.Errorf("p%v = %v, nearest rank of the CSV %v", pct, got, want)
				}
			}
			trend := sum.Metrics["http_req_duration"]
			for _, p := range []struct {
				pct float64
				key string
			}{{90, "p(90)"}, {95, "p(95)"}, {50, "med"}} {
				got, want := h.Percentile(p.pct), ms(trend[p.key])
				if math.Abs(float64(got-want)) > 0.01*float64(want) {
					t.Errorf("p%v = %v, k6 %s = %v", p.pct, got, p.key, want)
				}
			}
			if !near(h.Max(), ms(trend["max"])) || !near(h.Min(), ms(trend["min"])) {
				t.Errorf("min %v max %v, k6 %v %v", h.Min(), h.Max(), trend["min"], trend["max"])
			}
		})
	}
}

// TestK6ReferenceGzipRFC3339 imports the other run: gzip, rfc3339_nano.
func TestK6ReferenceGzipRFC3339(t *testing.T) {
	path := refFile(t, "rfc3339.csv.gz")
	vals, _ := k6Durations(t, path)
	res, sink, err := importFile(t, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Format != FormatK6CSV || sink.final.Counters.Requests != int64(len(vals)) {
		t.Errorf("format %q requests %d, want k6-csv %d", res.Format, sink.final.Counters.Requests, len(vals))
	}
	// The first row is stamped 2026-11-30T10:26:02.146245514Z.
	if want := time.Date(2026, 11, 30, 10, 26, 2, 0, time.UTC); !sink.final.Started.Equal(want) {
		t.Errorf("started %v, want %v", sink.final.Started, want)
	}
	h := sink.merged(latencyOf("", ""))
	for _, pct := range []float64{50, 90, 99} {
		if got, want := h.Percentile(pct), ms(nearestRank(vals, pct)); !near(got, want) {
			t.Errorf("p%v = %v, nearest rank %v", pct, got, want)
		}
	}
}
