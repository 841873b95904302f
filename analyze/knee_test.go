package analyze

import (
	"strings"
	"testing"
	"time"

	"github.com/knee-dev/knee/record"
)

// st is a step offering offered req/s that completes rate req/s with the given p95.
func st(offered, rate, p95ms float64) Step {
	return Step{OfferedRate: offered, Rate: rate, LatencyMS: record.Latencies{P95: p95ms}}
}

func rates(steps []Step) []float64 {
	out := make([]float64, len(steps))
	for i, s := range steps {
		out[i] = s.OfferedRate
	}
	return out
}

// The article's curve (its figure, read off): flat up to 300 req/s, 252 req/s
// and a 1.6 s p95 at 400, then collapse towards zero at 500 and 600.
var articleSteps = []Step{
	st(100, 100, 4), st(200, 200, 7), st(300, 300, 5),
	withDropped(st(400, 252, 1600), 1094, 1094.0/(400*14)),
	st(500, 40, 20000), st(600, 10, 34000),
}

func withDropped(s Step, n int64, frac float64) Step {
	s.DroppedIterations, s.DroppedRate = n, frac
	return s
}

func withErrors(s Step, n int64, frac float64) Step {
	s.Errors, s.ErrorRate = n, frac
	return s
}

func TestFindKnee(t *testing.T) {
	tests := []struct {
		name        string
		steps       []Step
		health      Health
		last, first float64
		reasonHas   string
		kneedle     float64
	}{
		{"article", articleSteps, Health{}, 300, 400, "achieved 252 req/s (63.0 % of offered, needs 97 %)", 300},
		// 97 % of 400 is 388: 388 passes, 387 does not.
		{"achieved at the bound", []Step{st(100, 100, 5), st(200, 200, 5), st(400, 388, 5)}, Health{}, 400, 0, "every step was healthy", 0},
		{"achieved below the bound", []Step{st(100, 100, 5), st(200, 200, 5), st(400, 387, 5)}, Health{}, 200, 400, "achieved 387 req/s (96.8 % of offered, needs 97 %)", 0},
		// p95 bound is 5 x the first step's 4 ms = 20 ms.
		{"p95 above 5x the first", []Step{st(100, 100, 4), st(200, 200, 20), st(300, 300, 21)}, Health{}, 200, 300, "p95 21ms above 20ms", 0},
		{"p95 above an SLO", []Step{st(100, 100, 4), st(200, 200, 9), st(300, 300, 11)}, Health{MaxP95: 10 * time.Millisecond}, 200, 300, "above 10ms", 0},
		{"dropped 1 %", []Step{st(100, 100, 5), withDropped(st(200, 200, 5), 20, 0.01)}, Health{}, 100, 200, "20 dropped iterations (1.0 %)", 0},
		{"errors 1 %", []Step{st(100, 100, 5), withErrors(st(200, 200, 5), 20, 0.01)}, Health{}, 100, 200, "20 errors (1.0 %)", 0},
		{"errors under 1 %", []Step{st(100, 100, 5), withErrors(st(200, 200, 5), 19, 0.0099)}, Health{}, 200, 0, "every step", 0},
		{"unhealthy from the start", []Step{withErrors(st(100, 100, 5), 50, 0.5), st(200, 100, 5)}, Health{}, 0, 100, "unhealthy from the first step", 0},
		// One noisy step at 200 recovers at 300; the knee is where health is lost for good.
		{"noisy step below the knee", []Step{st(100, 100, 4), st(200, 200, 30), st(300, 300, 5), st(400, 300, 900), st(500, 300, 1900)}, Health{}, 300, 400, "recovered (at 200 req/s)", 300},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := FindKnee(tt.steps, tt.health)
			if k.LastHealthyRate != tt.last || k.FirstUnhealthyRate != tt.first {
				t.Errorf("knee between %g and %g, want %g and %g (%s)", k.LastHealthyRate, k.FirstUnhealthyRate, tt.last, tt.first, k.Reason)
			}
			if !strings.Contains(k.Reason, tt.reasonHas) {
				t.Errorf("reason %q lacks %q", k.Reason, tt.reasonHas)
			}
			if k.KneedleRate != tt.kneedle {
				t.Errorf("Kneedle rate %g, want %g", k.KneedleRate, tt.kneedle)
			}
		})
	}
	if k := FindKnee(nil, Health{}); k.LastHealthyRate != 0 || k.FirstUnhealthyRate != 0 {
		t.Errorf("knee of no steps: %+v", k)
	}
}

func TestFindCollapse(t *testing.T) {
	tests := []struct {
		name  string
		steps []Step
		want  *Collapse
	}{
		// 40 < 0.8 * 300 (the best so far) while offered rose from 400 to 500.
		{"article", articleSteps, &Collapse{AtRate: 500, Rate: 40}},
		// 240 is exactly 80 % of 300: not below it.
		{"at 80 %", []Step{st(100, 100, 1), st(300, 300, 1), st(400, 240, 1)}, nil},
		{"below 80 %", []Step{st(100, 100, 1), st(300, 300, 1), st(400, 239, 1)}, &Collapse{AtRate: 400, Rate: 239}},
		{"saturated, not collapsed", []Step{st(100, 100, 1), st(200, 150, 1), st(300, 150, 1), st(400, 149, 1)}, nil},
		// Falling throughput while the offered rate falls too is no collapse.
		{"offered rate falls", []Step{st(300, 300, 1), st(200, 200, 1), st(100, 100, 1)}, nil},
		{"no steps", nil, nil},
	}
	for _, tt := range tests {
		got := FindCollapse(tt.steps)
		if (got == nil) != (tt.want == nil) || (got != nil && *got != *tt.want) {
			t.Errorf("%s: got %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

func TestKneedle(t *testing.T) {
	tests := []struct {
		name   string
		xs, ys []float64
		shape  Shape
		index  int
		ok     bool
	}{
		// Normalised x 0, 1/3, 2/3, 1; y 0, .001, .002, 1: x - y peaks at index 2.
		{"convex hockey stick", []float64{1, 2, 3, 4}, []float64{0, 1, 2, 1000}, Convex, 2, true},
		// Normalised x 0, .25, .5, .75, 1; y 0, 1/2, 1, 1, 1: y - x peaks at index 2 (0.5).
		{"concave plateau", []float64{100, 200, 300, 400, 500}, []float64{100, 200, 300, 300, 300}, Concave, 2, true},
		{"straight line", []float64{1, 2, 3, 4}, []float64{2, 4, 6, 8}, Convex, 0, false},
		{"flat", []float64{1, 2, 3}, []float64{5, 5, 5}, Convex, 0, false},
		{"two points", []float64{1, 2}, []float64{1, 9}, Convex, 0, false},
		{"x not increasing", []float64{1, 3, 2}, []float64{1, 2, 9}, Convex, 0, false},
		{"length mismatch", []float64{1, 2, 3}, []float64{1, 2}, Convex, 0, false},
	}
	for _, tt := range tests {
		i, ok := Kneedle(tt.xs, tt.ys, tt.shape)
		if i != tt.index || ok != tt.ok {
			t.Errorf("%s: got %d, %v; want %d, %v", tt.name, i, ok, tt.index, tt.ok)
		}
	}
}

// On clean curves (flat latency then a sharp rise, throughput following
// the offered rate then levelling) the health rules and both Kneedle
// opinions name the same last healthy rate.
func TestKneedleAgreesWithHealthRules(t *testing.T) {
	tests := []struct {
		name  string
		steps []Step
	}{
		{"article", articleSteps},
		{"saturates at 250", []Step{st(50, 50, 2), st(100, 100, 2), st(150, 150, 2.1), st(200, 200, 2.3), st(250, 249, 3), st(300, 251, 800), st(350, 250, 1500), st(400, 250, 2300)}},
		{"knee early", []Step{st(10, 10, 1), st(20, 20, 1.1), st(30, 22, 400), st(40, 22, 900), st(50, 22, 1800)}},
	}
	for _, tt := range tests {
		k := FindKnee(tt.steps, Health{})
		p95, ok1 := KneedleP95(tt.steps)
		thr, ok2 := KneedleThroughput(tt.steps)
		if !ok1 || !ok2 || p95 != k.LastHealthyRate || thr != k.LastHealthyRate {
			t.Errorf("%s: rules say %g, Kneedle on p95 %g (%v), on throughput %g (%v)", tt.name, k.LastHealthyRate, p95, ok1, thr, ok2)
		}
	}
}

func TestCapacityLine(t *testing.T) {
	tests := []struct {
		name string
		k    Knee
		c    *Collapse
		want string
	}{
		{"article", Knee{LastHealthyRate: 300, FirstUnhealthyRate: 400}, &Collapse{AtRate: 500, Rate: 40},
			"The knee lies between 300 and 400 req/s; run below 240 req/s (80 % of the last healthy rate, headroom for bursts and run-to-run noise). Throughput collapsed at 500 req/s offered (40 req/s achieved)."},
		{"all healthy", Knee{LastHealthyRate: 600}, nil, "No knee up to 600 req/s: every step was healthy; step higher to find it."},
		{"none healthy", Knee{FirstUnhealthyRate: 100}, nil, "Unhealthy already at the first step (100 req/s): the knee lies below it; step lower to find it."},
		{"nothing", Knee{}, nil, "No steps were measured."},
	}
	for _, tt := range tests {
		if got := CapacityLine(tt.k, tt.c); got != tt.want {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, got, tt.want)
		}
	}
}
