package analyze

import (
	"errors"
	"math"
	"math/rand/v2"
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
