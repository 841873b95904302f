package probe

import (
	"github.com/knee-dev/knee/use"
	"strings"
	"testing"
)

// A family the target exports with no series matching yet (no 5xx so far)
// is a measured zero for a rate or a gauge, and still unmeasured for a
// quantile.
func TestPromFamilyWithoutMatchingSeries(t *testing.T) {
	text := `# TYPE http_requests_total counter
http_requests_total{code="200"} 10
# TYPE lat_seconds histogram
lat_seconds_bucket{code="200",le="0.1"} 10
lat_seconds_bucket{code="200",le="+Inf"} 10
lat_seconds_sum{code="200"} 0.5
lat_seconds_count{code="200"} 10
`
	fams, err := ParseMetrics(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	five := map[string]string{"code": "5.."}
	ms, err := compileMatchers([]use.Mapping{
		{Resource: use.HTTPServer, Metric: "5xx", Kind: use.Errors, Source: "http_requests_total", Op: use.OpRate, Labels: five},
		{Resource: use.HTTPServer, Metric: "5xx_now", Kind: use.Errors, Source: "http_requests_total", Op: use.OpGauge, Labels: five},
		{Resource: use.HTTPServer, Metric: "p99", Kind: use.Saturation, Source: "lat_seconds", Op: use.OpQuantile, Labels: five},
	})
	if err != nil {
		t.Fatal(err)
	}
	rate := evaluate(use.Mapping{Resource: use.HTTPServer, Metric: "5xx", Kind: use.Errors, Source: "http_requests_total", Op: use.OpRate, Labels: five}, ms[0], fams, fams, 1)
	gauge := evaluate(use.Mapping{Resource: use.HTTPServer, Metric: "5xx_now", Kind: use.Errors, Source: "http_requests_total", Op: use.OpGauge, Labels: five}, ms[1], fams, nil, 1)
	q := evaluate(use.Mapping{Resource: use.HTTPServer, Metric: "p99", Kind: use.Saturation, Source: "lat_seconds", Op: use.OpQuantile, Labels: five}, ms[2], fams, fams, 1)
	if !rate.Measured() || rate.Value != 0 || !gauge.Measured() || gauge.Value != 0 {
		t.Errorf("rate %+v, gauge %+v: want measured zeros", rate, gauge)
	}
	if q.Measured() {
		t.Errorf("quantile of no series measured as %v", q.Value)
	}
	missing := evaluate(use.Mapping{Resource: use.HTTPServer, Metric: "x", Kind: use.Errors, Source: "not_there_total", Op: use.OpRate}, nil, fams, fams, 1)
	if missing.Measured() {
		t.Errorf("a family the target does not export was measured: %+v", missing)
	}
}
