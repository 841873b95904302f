package probe

import (
	"context"
	"fmt"
	"github.com/knee-dev/knee/use"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
)

// promTarget is a loopback server exporting one histogram "lat_seconds"
// through client_golang (which picks the format from the Accept header);
// observe adds observations between scrapes. It records the Content-Type
// of every answer.
type promTarget struct {
	srv      *httptest.Server
	hist     prometheus.Histogram
	lastType atomic.Value
}

func newPromTarget(t *testing.T, opts prometheus.HistogramOpts) *promTarget {
	t.Helper()
	reg := prometheus.NewRegistry()
	opts.Name, opts.Help = "lat_seconds", "request latency"
	pt := &promTarget{hist: prometheus.NewHistogram(opts)}
	reg.MustRegister(pt.hist)
	h := promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	pt.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r)
		pt.lastType.Store(w.Header().Get("Content-Type"))
	}))
	t.Cleanup(pt.srv.Close)
	return pt
}

func (pt *promTarget) observe(v float64, n int) {
	for range n {
		pt.hist.Observe(v)
	}
}

func quantileMappings() []use.Mapping {
	return []use.Mapping{
		{Resource: use.HTTPServer, Metric: "p50", Kind: use.Saturation, Source: "lat_seconds", Op: use.OpQuantile, Q: 0.5, Unit: "s"},
		{Resource: use.HTTPServer, Metric: "p99", Kind: use.Saturation, Source: "lat_seconds", Op: use.OpQuantile, Q: 0.99, Unit: "s"},
		{Resource: use.HTTPServer, Metric: "rate", Kind: use.Info, Source: "lat_seconds", Op: use.OpRate, Unit: "req/s"},
	}
}

// scrapeTwice samples p, adds the observations, and samples again 2 s later.
func scrapeTwice(t *testing.T, p *Prom, observe func()) map[string]use.Reading {
	t.Helper()
	t0 := time.Unix(1000, 0)
	if _, err := p.Sample(context.Background(), t0); err != nil {
		t.Fatal(err)
	}
	observe()
	rs, err := p.Sample(context.Background(), t0.Add(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]use.Reading{}
	for _, r := range rs {
		out[r.Metric] = r
	}
	return out
}

func near(got, want float64) bool { return math.Abs(got-want) <= 1e-9*math.Max(1, math.Abs(want)) }

// TestPromProbeNativeHistogram: a target exporting only a native histogram
// (schema 3: bucket factor 2^(1/8)) is read over protobuf. 900 observations
// of 10 ms and 100 of 1 s, worked by hand:
//
//	10 ms = 2^-6.644: bucket index ceil(8·-6.644) = -53, (2^-6.75, 2^-6.625]
//	p50: rank 500 of 1000, 500/900 of that bucket:
//	     2^-6.75 · (2^(1/8))^(5/9) = 2^(-6.75 + 0.125·5/9) = 0.0097496...
//	1 s = 2^0: bucket index 0, (2^-0.125, 1]
//	p99: rank 990, (990-900)/100 = 0.9 of that bucket: 2^(-0.125·0.1) = 0.99137...
//
// Over text the same target has no buckets: the old probe's "not a histogram".
func TestPromProbeNativeHistogram(t *testing.T) {
	pt := newPromTarget(t, prometheus.HistogramOpts{NativeHistogramBucketFactor: 1.1, NativeHistogramZeroThreshold: 1e-9})
	p := &Prom{URL: pt.srv.URL, Mappings: quantileMappings()}
	got := scrapeTwice(t, p, func() { pt.observe(0.010, 900); pt.observe(1.0, 100) })
	if ct, _ := pt.lastType.Load().(string); !strings.Contains(ct, "protobuf") {
		t.Errorf("the target answered %q: the probe did not get protobuf", ct)
	}
	for metric, want := range map[string]float64{
		"p50":  math.Pow(2, -6.75+0.125*5.0/9.0),
		"p99":  math.Pow(2, -0.125*0.1),
		"rate": 500, // 1000 observations in 2 s
	} {
		r := got[metric]
		if !r.Measured() || !near(r.Value, want) {
			t.Errorf("%s = %v (%s), want %.9g", metric, r.Value, r.NotMeasured, want)
		}
	}

	// The same target asked for text only, as the probe did before.
	text := &Prom{URL: pt.srv.URL, Mappings: quantileMappings(), Client: &http.Client{Transport: textOnly{}}}
	if r := scrapeTwice(t, text, func() { pt.observe(0.010, 10) })["p99"]; r.Measured() || !strings.Contains(r.NotMeasured, "not a histogram") {
		t.Errorf("over text a native-only histogram reads %v %q, want not a histogram", r.Value, r.NotMeasured)
	}
}

// textOnly sends every request asking for the text format only.
type textOnly struct{}

func (textOnly) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Accept", "text/plain;version=0.0.4")
	return http.DefaultTransport.RoundTrip(r)
}

// TestPromProbeClassicOverProtobuf: a classic histogram arrives over
// protobuf too and is read from its buckets as before. Buckets 0.01, 0.1, 1;
// 90 observations of 5 ms and 10 of 50 ms: p99 rank 99 is 9/10 into
// (0.01, 0.1]: 0.01 + 0.09·0.9 = 0.091; p50 rank 50 is 50/90 into (0, 0.01]: 0.0055...
func TestPromProbeClassicOverProtobuf(t *testing.T) {
	pt := newPromTarget(t, prometheus.HistogramOpts{Buckets: []float64{0.01, 0.1, 1}})
	p := &Prom{URL: pt.srv.URL, Mappings: quantileMappings()}
	got := scrapeTwice(t, p, func() { pt.observe(0.005, 90); pt.observe(0.05, 10) })
	if ct, _ := pt.lastType.Load().(string); !strings.Contains(ct, "protobuf") {
		t.Errorf("the target answered %q: the probe did not get protobuf", ct)
	}
	for metric, want := range map[string]float64{"p50": 0.01 * 50 / 90, "p99": 0.01 + 0.09*0.9, "rate": 50} {
		if r := got[metric]; !r.Measured() || !near(r.Value, want) {
			t.Errorf("%s = %v (%s), want %.9g", metric, r.Value, r.NotMeasured, want)
		}
	}
}

// TestPromProbeTextFallback: a target that only speaks the text format
// (whatever the Accept header) is still read.
func TestPromProbeTextFallback(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		c := 100 * int(n.Add(1)-1) // 0, then 100 observations all in (0, 0.01]
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		fmt.Fprintf(w, "# TYPE lat_seconds histogram\nlat_seconds_bucket{le=\"0.01\"} %d\nlat_seconds_bucket{le=\"+Inf\"} %d\nlat_seconds_count %d\nlat_seconds_sum 0\n", c, c, c)
	}))
	defer srv.Close()
	got := scrapeTwice(t, &Prom{URL: srv.URL, Mappings: quantileMappings()}, func() {})
	// rank 99 of 100 in (0, 0.01]: 0.0099.
	if r := got["p99"]; !r.Measured() || !near(r.Value, 0.0099) {
		t.Errorf("p99 = %v (%s), want 0.0099", r.Value, r.NotMeasured)
	}
}

func ptr[T any](v T) *T { return &v }

// TestNativeQuantileDelta: hand-made native histograms with negative,
// zero and positive buckets, and two schemas merged at the coarser one.
//
// Schema 0 (factor 2), zero bucket [-0.5, 0.5] holding 10, positive
// buckets 1 (1, 2] and 2 (2, 4] holding 10 each, negative bucket 1
// [-2, -1) holding 10: 40 in ascending order
//
//	q 0.125 rank 5: half into [-2, -1): -(1·2^0.5) = -1.41421...
//	q 0.375 rank 15: half into [-0.5, 0.5]: 0
//	q 0.625 rank 25: half into (1, 2]: 2^0.5
//	q 1     rank 40: the top of (2, 4]: 4
//
// A second series at schema 1 with 20 in bucket 3, (2^1, 2^1.5], lands in
// schema 0's bucket ceil(3/2) = 2, (2, 4]: then 60 in all, q 0.75 is rank
// 45, 15 into the 30 of (2, 4]: 2·2^0.5.
func TestNativeQuantileDelta(t *testing.T) {
	base := &dto.Metric{Histogram: &dto.Histogram{
		Schema: ptr(int32(0)), ZeroThreshold: ptr(0.5), ZeroCount: ptr(uint64(10)),
		PositiveSpan:  []*dto.BucketSpan{{Offset: ptr(int32(1)), Length: ptr(uint32(2))}},
		PositiveDelta: []int64{10, 0},
		NegativeSpan:  []*dto.BucketSpan{{Offset: ptr(int32(1)), Length: ptr(uint32(1))}},
		NegativeDelta: []int64{10},
	}}
	fine := &dto.Metric{Histogram: &dto.Histogram{
		Schema: ptr(int32(1)), ZeroThreshold: ptr(0.5),
		PositiveSpan:  []*dto.BucketSpan{{Offset: ptr(int32(3)), Length: ptr(uint32(1))}},
		PositiveCount: []float64{20},
	}}
	for _, tc := range []struct {
		now  []*dto.Metric
		q    float64
		want float64
	}{
		{[]*dto.Metric{base}, 0.125, -math.Sqrt2},
		{[]*dto.Metric{base}, 0.375, 0},
		{[]*dto.Metric{base}, 0.625, math.Sqrt2},
		{[]*dto.Metric{base}, 1, 4},
		{[]*dto.Metric{base, fine}, 0.75, 2 * math.Sqrt2},
	} {
		if !isNative(tc.now) {
			t.Fatal("hand-made native histogram not recognised")
		}
		got, why := quantileDelta(tc.now, nil, tc.q)
		if why != "" || !near(got, tc.want) {
			t.Errorf("%d series, q %g: %v %q, want %v", len(tc.now), tc.q, got, why, tc.want)
		}
	}
	if _, why := quantileDelta([]*dto.Metric{base}, []*dto.Metric{base}, 0.5); why != "no observations since the previous scrape" {
		t.Errorf("no change between scrapes: %q", why)
	}
}

// FuzzParseDelimited: any bytes offered as protobuf either parse or give an
// error; a histogram that parses never panics the quantile.
func FuzzParseDelimited(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0x05, 0x0a, 0x03, 'l', 'a', 't'})
	f.Fuzz(func(t *testing.T, b []byte) {
		fams, err := parseDelimited(b)
		if err != nil {
			return
		}
		for _, mf := range fams {
			quantileDelta(mf.GetMetric(), nil, 0.99)
		}
	})
}
