package k6script

import (
	"bytes"
	"encoding/csv"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

// vus and vus_max are Gauges sampled by the runner each second: each
// sample is one value of each, with options.tags only (k6's run tags: no
// scenario, no group), in the k6 block, handleSummary's data, the CSV
// output and the thresholds. By hand, for the samples (active,
// initialised) below: vus's last value is the last active, min and max
// over them; vus_max's the same over initialised.
func TestRecordVUs(t *testing.T) {
	for _, tt := range []struct {
		name        string
		samples     [][2]int64
		vus, vusMax [3]float64 // value, min, max
		thresholds  map[string][]string
		pass        map[string]bool // expression -> verdict
		refused     string          // a threshold k6 refuses before the start
	}{
		{"constant-vus, 3 VUs for 3 s: three samples of 3", [][2]int64{{3, 3}, {3, 3}, {3, 3}},
			[3]float64{3, 3, 3}, [3]float64{3, 3, 3},
			map[string][]string{"vus_max": {"value<2"}, "vus": {"value==3"}},
			map[string]bool{"vus_max: value<2": false, "vus: value==3": true}, ""},
		{"ramping-vus 0 to 4 over 2 s, 2 s at 4, then ended: 2, 4, 4, 0", [][2]int64{{2, 4}, {4, 4}, {4, 4}, {0, 4}},
			[3]float64{0, 0, 4}, [3]float64{4, 4, 4},
			map[string][]string{"vus_max": {"value==4"}, "vus": {"value==0"}},
			map[string]bool{"vus_max: value==4": true, "vus: value==0": true}, ""},
		{"an open model that grew from 1 pre-allocated VU to 3", [][2]int64{{1, 1}, {3, 3}, {2, 3}},
			[3]float64{2, 1, 3}, [3]float64{3, 1, 3}, nil, nil, ""},
		{"a gauge has only value in k6's thresholds", [][2]int64{{1, 1}},
			[3]float64{1, 1, 1}, [3]float64{1, 1, 1}, map[string][]string{"vus": {"max<5"}}, nil, `a gauge has no aggregate "max"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := loadScript(t, "export const options = { tags: { team: 'shop' } };\nexport default function () {}\n", nil)
			var buf bytes.Buffer
			o := NewCSVOutput(nopCloser{&buf})
			s.SetOutput(o)
			_, own, err := s.SplitThresholds(tt.thresholds)
			if tt.refused != "" {
				if err == nil || !strings.Contains(err.Error(), tt.refused) {
					t.Errorf("thresholds %v: error %v; want %q", tt.thresholds, err, tt.refused)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			for _, sm := range tt.samples {
				s.RecordVUs(sm[0], sm[1])
			}
			if err := o.Close(); err != nil {
				t.Fatal(err)
			}
			for name, want := range map[string][3]float64{"vus": tt.vus, "vus_max": tt.vusMax} {
				st, ok := s.k6.Stat(name)
				if got := [3]float64{st.Value, st.Min, st.Max}; !ok || st.Kind != KindGauge || got != want || st.Count != int64(len(tt.samples)) {
					t.Errorf("%s: %+v; want a gauge of %d values, value, min, max %v", name, st, len(tt.samples), want)
				}
				entry, _ := s.SummaryData(SummaryInput{Duration: 3 * time.Second})["metrics"].(map[string]any)[name].(map[string]any)
				wantEntry := map[string]float64{"value": want[0], "min": want[1], "max": want[2]}
				if entry["type"] != "gauge" || entry["contains"] != "default" || !reflect.DeepEqual(entry["values"], wantEntry) {
					t.Errorf("data.metrics.%s = %v; want a gauge, default, %v", name, entry, wantEntry)
				}
			}
			for _, r := range s.EvaluateOwn(own, 3*time.Second) {
				if want, ok := tt.pass[r.Expr]; !ok || r.Pass != want {
					t.Errorf("%s: pass %v; want %v (listed: %v)", r.Expr, r.Pass, want, ok)
				}
			}
			rows, err := csv.NewReader(&buf).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != 1+2*len(tt.samples) {
				t.Fatalf("%d rows; want the header and 2 per sample:\n%s", len(rows), buf.String())
			}
			for i, row := range rows[1:] {
				metric, v := "vus", tt.samples[i/2][0]
				if i%2 == 1 {
					metric, v = "vus_max", tt.samples[i/2][1]
				}
				// metric, timestamp, value, 14 empty tag columns, extra_tags, metadata
				want := append([]string{metric, row[1], strconv.FormatInt(v, 10) + ".000000"}, make([]string, 14)...)
				want = append(want, "team=shop", "")
				if !reflect.DeepEqual(row, want) {
					t.Errorf("row %d: %q; want %q", i+1, row, want)
				}
			}
		})
	}
}
