package analyze

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/knee-dev/knee/record"
)

// uslData samples X(N) = lambda N / (1 + sigma (N-1) + kappa N (N-1)) at ns,
// each X multiplied by 1 + e with e uniform in [-noise, noise].
func uslData(lambda, sigma, kappa, noise float64, seed uint64, ns ...float64) []USLPoint {
	rng := rand.New(rand.NewPCG(seed, 1))
	pts := make([]USLPoint, len(ns))
	for i, n := range ns {
		x := lambda * n / (1 + sigma*(n-1) + kappa*n*(n-1))
		pts[i] = USLPoint{N: n, X: x * (1 + noise*(2*rng.Float64()-1))}
	}
	return pts
}

var uslNs = []float64{1, 2, 4, 8, 12, 16, 24, 32, 48, 64}

func relNear(got, want, rel float64) bool { return math.Abs(got-want) <= rel*math.Abs(want) }

func TestFitUSLExact(t *testing.T) {
	tests := []struct {
		name                 string
		lambda, sigma, kappa float64
		peakN, peakRate      float64 // worked out by hand
	}{
		// N* = sqrt(0.95/0.001) = 30.822; X(N*) = 3082.2 / (1 + 1.4911 + 0.9192) = 903.80.
		{"contention and coherency", 100, 0.05, 0.001, 30.822, 903.80},
		// N* = sqrt(0.98/0.0005) = 44.272; X(N*) = 1106.8 / (1 + 0.8654 + 0.9579) = 392.02.
		{"coherency dominates", 25, 0.02, 0.0005, 44.272, 392.02},
		// kappa = 0: no peak, X levels off at lambda/sigma = 500.
		{"contention only", 50, 0.1, 0, 0, 500},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, err := FitUSL(uslData(tt.lambda, tt.sigma, tt.kappa, 0, 1, uslNs...))
			if err != nil {
				t.Fatal(err)
			}
			if !relNear(u.Lambda, tt.lambda, 1e-6) || math.Abs(u.Sigma-tt.sigma) > 1e-6 || math.Abs(u.Kappa-tt.kappa) > 1e-8 {
				t.Errorf("fit lambda %g sigma %g kappa %g, want %g %g %g", u.Lambda, u.Sigma, u.Kappa, tt.lambda, tt.sigma, tt.kappa)
			}
			if !relNear(u.PeakN, tt.peakN, 1e-4) || !relNear(u.PeakRate, tt.peakRate, 1e-4) || !relNear(u.R2, 1, 1e-9) {
				t.Errorf("peak N %g rate %g R2 %g, want %g, %g, 1", u.PeakN, u.PeakRate, u.R2, tt.peakN, tt.peakRate)
			}
		})
	}
}

// With 2 % multiplicative noise the parameters come back close, for every seed.
func TestFitUSLNoisy(t *testing.T) {
	for seed := range uint64(10) {
		u, err := FitUSL(uslData(100, 0.05, 0.001, 0.02, seed, uslNs...))
		if err != nil {
			t.Fatal(err)
		}
		if !relNear(u.Lambda, 100, 0.05) || math.Abs(u.Sigma-0.05) > 0.02 || !relNear(u.Kappa, 0.001, 0.3) {
			t.Errorf("seed %d: lambda %g sigma %g kappa %g, want about 100, 0.05, 0.001", seed, u.Lambda, u.Sigma, u.Kappa)
		}
		if !relNear(u.PeakRate, 903.80, 0.03) || u.R2 < 0.99 {
			t.Errorf("seed %d: peak rate %g R2 %g, want about 903.8 and >= 0.99", seed, u.PeakRate, u.R2)
		}
	}
}

func TestFitUSLRejects(t *testing.T) {
	tests := []struct {
		name string
		pts  []USLPoint
	}{
		{"none", nil},
		{"two", []USLPoint{{1, 10}, {2, 19}}},
		{"zeros dropped", []USLPoint{{1, 10}, {2, 19}, {0, 5}, {3, 0}}},
		{"infinite dropped", []USLPoint{{1, 10}, {2, 19}, {math.Inf(1), 5}}},
	}
	for _, tt := range tests {
		if _, err := FitUSL(tt.pts); !errors.Is(err, ErrTooFewPoints) {
			t.Errorf("%s: %v, want ErrTooFewPoints", tt.name, err)
		}
	}
}

func TestLittlePoints(t *testing.T) {
	steps := []Step{
		{Rate: 200, LatencyMS: record.Latencies{Mean: 50, P50: 40}}, // N = 200 * 0.050 = 10
		{Rate: 0, LatencyMS: record.Latencies{Mean: 50}},            // nothing completed: left out
		{Rate: 400, LatencyMS: record.Latencies{Mean: 2.5}},         // N = 400 * 0.0025 = 1
	}
	got := LittlePoints(steps)
	want := []USLPoint{{N: 10, X: 200}, {N: 1, X: 400}}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if !relNear(got[i].N, want[i].N, 1e-12) || got[i].X != want[i].X {
			t.Errorf("point %d: got %v, want %v", i, got[i], want[i])
		}
	}
}

// The law's values worked out by hand from X(N) = λN / (1 + σ(N−1) + κN(N−1))
// and N* = sqrt((1−σ)/κ).
func TestUSLRateByHand(t *testing.T) {
	tests := []struct {
		name string
		u    USL
		n    float64
		want float64
	}{
		// X(1) = λ whatever σ and κ.
		{"one in flight", USL{Lambda: 100, Sigma: 0.05, Kappa: 0.001}, 1, 100},
		// 1000 / (1 + 0.05·9 + 0.001·90) = 1000 / 1.54 = 649.35.
		{"ten in flight", USL{Lambda: 100, Sigma: 0.05, Kappa: 0.001}, 10, 649.35},
		// N* = sqrt(0.95/0.001) = 30.822: 3082.2 / (1 + 1.4911 + 0.9192) = 903.80.
		{"at the peak", USL{Lambda: 100, Sigma: 0.05, Kappa: 0.001}, 30.822, 903.80},
		// κ = 0: 50·1000 / (1 + 0.1·999) = 50000 / 100.9 = 495.54, under λ/σ = 500.
		{"contention only", USL{Lambda: 50, Sigma: 0.1}, 1000, 495.54},
		// The user's healthy run's fit, under one in flight: the denominator
		// 1 − 0.8269·0.6977 − 1.895·0.3023·0.6977 = 0.02339 is near zero, so
		// 81.27·0.3023 / 0.02339 = 1050 req/s: a pole, not a peak.
		{"below one in flight", USL{Lambda: 81.27, Sigma: 0.8269, Kappa: 1.895}, 0.3023, 1050.4},
	}
	for _, tt := range tests {
		if got := tt.u.Rate(tt.n); !relNear(got, tt.want, 2e-3) {
			t.Errorf("%s: X(%g) = %.5g, want %.5g", tt.name, tt.n, got, tt.want)
		}
	}
}

// steps turns (offered, achieved, mean ms, p95 ms) rows into steps.
func uslSteps(rows ...[4]float64) []Step {
	out := make([]Step, len(rows))
	for i, r := range rows {
		out[i] = Step{OfferedRate: r[0], Rate: r[1], LatencyMS: record.Latencies{Mean: r[2], P95: r[3]}}
	}
	return out
}

// A fit is printed as a ceiling only when it bounds the curve. The first two
// cases are the steps of two healthy runs of the Bookstore at 100..500
// req/s (knee steps, 8 s steps, mean latency under 3 ms): every step's
// N = X·R stayed under 1, where the law does not hold.
func TestUSLOfSteps(t *testing.T) {
	// Steps on the exact law λ=100, σ=0.05, κ=0.001: the mean latency of a
	// step at N is N/X(N) (Little), so the fit finds the law and its peak,
	// 903.80 req/s at N* = 30.822, above every step's rate.
	var exact [][4]float64
	for _, n := range []float64{1, 2, 4, 8, 16} {
		x := USL{Lambda: 100, Sigma: 0.05, Kappa: 0.001}.Rate(n)
		exact = append(exact, [4]float64{x, x, n / x * 1000, n / x * 1000})
	}
	tests := []struct {
		name     string
		steps    []Step
		wantPeak float64 // 0: no ceiling
		wantNote string  // the start of the note
	}{
		{"healthy run, poor fit", uslSteps(
			[4]float64{100, 99.975, 0.552819, 1.317}, [4]float64{200, 199.958, 0.415404, 0.85},
			[4]float64{300, 299.999, 0.285111, 0.451}, [4]float64{400, 399.940, 0.411387, 1.141},
			[4]float64{500, 499.781, 0.34625, 0.867}),
			0, "no usable fit (R² = 0.898 < 0.9)"},
		{"healthy run, peak under one in flight", uslSteps(
			[4]float64{100, 99.9696, 0.856946, 1.568}, [4]float64{200, 200.1847, 2.847808, 16.959},
			[4]float64{300, 299.6167, 0.526118, 1.497}, [4]float64{400, 399.7507, 0.488113, 1.574},
			[4]float64{500, 499.7529, 0.905165, 2.661}),
			0, "the fit does not bound the curve: its peak falls at N=0.302, under one request in flight"},
		{"on the law", uslSteps(exact...), 903.80, ""},
	}
	for _, tt := range tests {
		u, note := uslOf(tt.steps, Health{})
		switch {
		case tt.wantPeak == 0 && (u != nil || !strings.HasPrefix(note, tt.wantNote)):
			t.Errorf("%s: fit %+v note %q, want no fit and a note starting %q", tt.name, u, note, tt.wantNote)
		case tt.wantPeak > 0 && (u == nil || !relNear(u.PeakRate, tt.wantPeak, 1e-4)):
			t.Errorf("%s: fit %+v note %q, want a peak of %g", tt.name, u, note, tt.wantPeak)
		}
	}
}

// Each reason a fit is no ceiling, on fits written by hand.
func TestNoCeiling(t *testing.T) {
	pts := []USLPoint{{N: 2, X: 180}, {N: 5, X: 400}}
	tests := []struct {
		name    string
		u       USL
		healthy float64
		want    string
	}{
		{"a ceiling above every healthy step", USL{Lambda: 100, Sigma: 0.05, Kappa: 0.001, PeakN: 30.822, PeakRate: 903.8, R2: 0.99}, 500, ""},
		{"peak under one in flight", USL{Lambda: 81.27, Sigma: 0.8269, Kappa: 1.895, PeakN: 0.3023, PeakRate: 1048, R2: 0.916}, 500,
			"its peak falls at N=0.302, under one request in flight, where the law does not hold (σ=0.8269 κ=1.895 λ=81.27 req/s, R²=0.916); the steps' concurrency N = X·R was between 2 and 5: step past the knee to fit the law"},
		// The same fit on steps that never had one request in flight.
		{"peak under one in flight, never queued", USL{Lambda: 81.27, Sigma: 0.8269, Kappa: 1.895, PeakN: 0.3023, PeakRate: 1048, R2: 0.916}, 500,
			"its peak falls at N=0.302, under one request in flight, where the law does not hold (σ=0.8269 κ=1.895 λ=81.27 req/s, R²=0.916); the steps' concurrency N = X·R was between 0.0857 and 0.57, so the target never queued: step past the knee to fit the law"},
		{"peak below a healthy step", USL{Lambda: 100, Sigma: 0.1, Kappa: 0.01, PeakN: 9.487, PeakRate: 457.6, R2: 0.95}, 500,
			"its peak, 457.6 req/s, is below the 500 req/s a healthy step achieved (σ=0.1 κ=0.01 λ=100 req/s, R²=0.950)"},
		{"linear", USL{Lambda: 80, R2: 0.99}, 400,
			"it is linear (σ=0 κ=0 λ=80 req/s, R²=0.990): throughput rose with concurrency and shows no ceiling yet"},
	}
	below := []USLPoint{{N: 0.0857, X: 100}, {N: 0.57, X: 200}}
	for _, tt := range tests {
		p := pts
		if strings.HasSuffix(tt.name, "never queued") {
			p = below
		}
		if got := noCeiling(tt.u, p, tt.healthy); got != tt.want {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, got, tt.want)
		}
	}
}
