package k6script

import (
	"math"
	"testing"
)

// k6's Trend percentile (v1.8.1 metrics/sink.go TrendSink.P): sorted
// values, rank p*(n-1), linear interpolation; 0 with no values. Expected
// values by hand.
func TestK6PercentileInterpolates(t *testing.T) {
	for _, tt := range []struct {
		values  []float64
		p, want float64
	}{
		{nil, 0.95, 0},
		{[]float64{7}, 0.95, 7},
		{[]float64{1, 2, 3, 4}, 0.5, 2.5}, // rank 1.5
		{[]float64{10, 20, 30, 40, 50, 60, 70, 80, 90, 100}, 0.95, 95.5}, // rank 8.55: 90 + 0.55*10
		{[]float64{100, 90, 80, 70, 60, 50, 40, 30, 20, 10}, 0.9, 91},    // unsorted input; rank 8.1
		{[]float64{3, 1, 2}, 1, 3},
		{[]float64{3, 1, 2}, 0, 1},
	} {
		m := newK6Metrics()
		for _, v := range tt.values {
			m.add("", nil, k6Point{"iteration_duration", v})
		}
		got, _ := m.percentile("iteration_duration", tt.p*100)
		if math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("%v p%g: %g; want %g", tt.values, tt.p*100, got, tt.want)
		}
	}
}

// A submetric counts the values whose tags include all of its filter,
// from the first value on; a group's series is made at its first value.
func TestK6SubmetricsFilterByTags(t *testing.T) {
	m := newK6Metrics()
	m.want("http_reqs", map[string]string{"status": "200", "method": "GET"})
	add := func(group, status, method string) {
		m.add(group, func() map[string]string { return map[string]string{"group": group, "status": status, "method": method} },
			k6Point{"http_reqs", 1}, k6Point{"http_req_duration", 5})
	}
	add("", "200", "GET")
	add("", "200", "POST")
	add("::g", "200", "GET")
	add("::g", "404", "GET")
	for name, want := range map[string]float64{"http_reqs": 4, "http_reqs{method:GET,status:200}": 2} {
		if st, _ := m.Stat(name); st.Sum != want {
			t.Errorf("%s = %g; want %g", name, st.Sum, want)
		}
	}
	if st, _ := m.Stat("http_req_duration{group:::g}"); st.Count != 2 {
		t.Errorf("http_req_duration{group:::g} has %d values; want 2", st.Count)
	}
}

// Beyond keep values a Trend keeps a uniform sample: count, sum, min, max
// stay exact, the sample stays keep long, and the stat says Sampled.
func TestK6TrendKeepsBoundedSample(t *testing.T) {
	m := newK6Metrics()
	m.keep = 100
	for i := 1; i <= 1000; i++ {
		m.add("", nil, k6Point{"iteration_duration", float64(i)})
	}
	st, _ := m.Stat("iteration_duration")
	if st.Count != 1000 || st.Sum != 500500 || st.Min != 1 || st.Max != 1000 || !st.Sampled || len(m.sinkOf("iteration_duration").values) != 100 {
		t.Errorf("%+v, %d kept; want count 1000, sum 500500, min 1, max 1000, sampled, 100 kept", st, len(m.sinkOf("iteration_duration").values))
	}
}

// A submetric's tag of empty value selects the samples that have the tag
// with that value, as k6's TagSet.Contains: not those without it (vus and
// vus_max carry no group tag; a request at the top level has group "").
func TestK6SubmetricEmptyValueNeedsTheTag(t *testing.T) {
	for _, tt := range []struct {
		name   string
		filter map[string]string
		want   float64
	}{
		{"empty group", map[string]string{"group": ""}, 1},
		{"empty custom tag", map[string]string{"team": ""}, 1},
		{"a tag no sample has", map[string]string{"nope": ""}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := newK6Metrics()
			m.declare("c", KindCounter, false)
			m.want("c", tt.filter)
			m.add("", func() map[string]string { return map[string]string{"group": "", "team": ""} }, k6Point{"c", 1})
			m.add("", func() map[string]string { return map[string]string{} }, k6Point{"c", 2})
			if st, _ := m.Stat(SubmetricName("c", tt.filter)); st.Sum != tt.want {
				t.Errorf("sum %g; want %g", st.Sum, tt.want)
			}
		})
	}
}

// A Trend keeps its values sparse while they are mostly 0 (a reused
// connection's blocked time): the same percentiles, by hand, as every
// value sorted; and, past the point where it turns dense or starts
// sampling, the same kept values, in the same places, as a sink that was
// dense from its first value.
func TestK6TrendSparseZeros(t *testing.T) {
	zeros := func(n int, then ...float64) []float64 { return append(make([]float64, n), then...) }
	for _, tt := range []struct {
		name   string
		values []float64
		keep   int
		pcts   map[float64]float64 // p -> want, by hand
		dense  bool                // at the end
	}{
		{"all 0", zeros(1000), 1 << 20, map[float64]float64{0: 0, 0.5: 0, 1: 0}, false},
		{"a dial, then 0", append([]float64{3}, zeros(99)...), 1 << 20,
			map[float64]float64{0.99: 0.03, 1: 3}, false}, // rank 98.01: 0 + 0.01*3
		{"below 0 first", zeros(8, -2, 4, -1), 1 << 20,
			map[float64]float64{0: -2, 0.1: -1, 0.5: 0, 1: 4}, false}, // 11 values: -2, -1, 0 x8, 4; rank 1 is -1
		{"to dense", append(zeros(100), seq(1, 200)...), 1 << 20,
			map[float64]float64{0: 0, 0.5: 50.5, 1: 200}, true}, // 300 values: rank 149.5 is 49 + 50 over 2
		{"sampled", append(zeros(50, 7), seq(1, 500)...), 100, nil, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := &k6Sink{kind: KindTrend, keep: tt.keep}
			ref := &k6Sink{kind: KindTrend, keep: tt.keep, dense: true}
			for i, v := range tt.values {
				s.add(v)
				ref.add(v)
				if i == len(tt.values)/2 { // sorted half-way: the values after it go on in place
					s.pct(0.5)
					ref.pct(0.5)
				}
			}
			for p, want := range tt.pcts {
				ref.pct(p) // sorted alike
				if got := s.pct(p); math.Abs(got-want) > 1e-9 {
					t.Errorf("p%g = %g; want %g", p*100, got, want)
				}
			}
			if s.dense != tt.dense {
				t.Errorf("dense %v; want %v", s.dense, tt.dense)
			}
			if s.kept() != ref.kept() {
				t.Fatalf("%d kept; want %d", s.kept(), ref.kept())
			}
			for i := range ref.kept() {
				if s.at(i) != ref.at(i) {
					t.Fatalf("kept value %d is %g; want %g", i, s.at(i), ref.at(i))
				}
			}
		})
	}
}

// seq is from, from+1, ..., to.
func seq(from, to int) []float64 {
	var out []float64
	for v := from; v <= to; v++ {
		out = append(out, float64(v))
	}
	return out
}
