package analyze

import (
	"errors"
	"fmt"
	"math"
)

// ErrTooFewPoints is returned by FitUSL when fewer than three usable points
// (N > 0, X > 0) are given: three parameters need three points.
var ErrTooFewPoints = errors.New("analyze: USL fit needs at least three points with N > 0 and X > 0")

// ErrNoFit is returned by FitUSL when the points are so extreme that the
// fit overflows (values beyond what float64 sums of squares can hold).
var ErrNoFit = errors.New("analyze: USL fit did not converge to finite parameters")

// USLPoint is one observation for the Universal Scalability Law: mean
// concurrency N and throughput X (req/s).
type USLPoint struct {
	N float64 `json:"n"`
	X float64 `json:"x"`
}

// LittlePoints turns steps into USL points: X is the achieved rate and N
// comes from Little's law, N = X * R, with R the step's mean latency (the
// law holds for the mean, not for a percentile). Steps that completed
// nothing are left out.
func LittlePoints(steps []Step) []USLPoint {
	var pts []USLPoint
	for _, s := range steps {
		r := s.LatencyMS.Mean / 1000
		if s.Rate > 0 && r > 0 {
			pts = append(pts, USLPoint{N: s.Rate * r, X: s.Rate})
		}
	}
	return pts
}

// USL is a fitted Universal Scalability Law,
//
//	X(N) = lambda*N / (1 + sigma*(N-1) + kappa*N*(N-1))
//
// with lambda the rate of one unit of concurrency, sigma contention and
// kappa coherency (crosstalk). JSON names are the --summary-export ones.
type USL struct {
	Sigma  float64 `json:"sigma"`
	Kappa  float64 `json:"kappa"`
	Lambda float64 `json:"lambda"`
	// PeakN is N* = sqrt((1-sigma)/kappa), where X peaks; 0 when kappa is 0
	// and X only levels off.
	PeakN float64 `json:"peak_n"`
	// PeakRate is X(N*); with kappa 0 it is the ceiling lambda/sigma that X
	// approaches, and 0 when sigma is 0 too (linear scaling, no ceiling).
	PeakRate float64 `json:"peak_rate"`
	R2       float64 `json:"r2"` // coefficient of determination of the fit
}

// Rate is the throughput the law predicts at concurrency n.
func (u USL) Rate(n float64) float64 {
	return u.Lambda * n / (1 + u.Sigma*(n-1) + u.Kappa*n*(n-1))
}

// FitUSL fits the law to pts by least squares on X, with lambda > 0,
// 0 <= sigma <= 1 and kappa >= 0. It starts from the linearised form
// (with lambda from the best X/N, N/X*lambda - 1 = sigma(N-1) + kappa N(N-1)
// is linear in sigma and kappa) and refines with Levenberg-Marquardt.
func FitUSL(pts []USLPoint) (USL, error) {
	var use []USLPoint
	for _, p := range pts {
		if p.N > 0 && p.X > 0 && !math.IsInf(p.N, 0) && !math.IsInf(p.X, 0) {
			use = append(use, p)
		}
	}
	if len(use) < 3 {
		return USL{}, fmt.Errorf("%w (got %d)", ErrTooFewPoints, len(use))
	}
	best, bestSSE := uslParams{}, math.Inf(1)
	for _, scale := range []float64{1, 1.5, 3} {
		p := levenbergMarquardt(use, linearStart(use, scale))
		if s := sse(use, p); s < bestSSE {
			best, bestSSE = p, s
		}
	}
	if math.IsNaN(bestSSE) || math.IsInf(bestSSE, 0) {
		return USL{}, ErrNoFit
	}
	u := USL{Lambda: best.lambda, Sigma: best.sigma, Kappa: best.kappa, R2: rSquared(use, bestSSE)}
	switch {
	case u.Kappa > 0 && u.Sigma < 1:
		u.PeakN = math.Sqrt((1 - u.Sigma) / u.Kappa)
		u.PeakRate = u.Rate(u.PeakN)
	case u.Kappa > 0: // sigma = 1: X falls from N = 1 on
		u.PeakN, u.PeakRate = 1, u.Lambda
	case u.Sigma > 0:
		u.PeakRate = u.Lambda / u.Sigma
	}
	return u, nil
}

type uslParams struct{ lambda, sigma, kappa float64 }

func (p uslParams) rate(n float64) float64 {
	return p.lambda * n / (1 + p.sigma*(n-1) + p.kappa*n*(n-1))
}

// clamp keeps p inside the law's meaningful region.
func (p uslParams) clamp() uslParams {
	p.lambda = math.Max(p.lambda, 1e-12)
	p.sigma = math.Min(math.Max(p.sigma, 0), 1)
	p.kappa = math.Max(p.kappa, 0)
	return p
}

func sse(pts []USLPoint, p uslParams) float64 {
	s := 0.0
	for _, pt := range pts {
		r := pt.X - p.rate(pt.N)
		s += r * r
	}
	return s
}

func rSquared(pts []USLPoint, sse float64) float64 {
	mean := 0.0
	for _, p := range pts {
		mean += p.X
	}
	mean /= float64(len(pts))
	sst := 0.0
	for _, p := range pts {
		sst += (p.X - mean) * (p.X - mean)
	}
	if sst == 0 {
		if sse == 0 {
			return 1
		}
		return 0
	}
	return 1 - sse/sst
}

// linearStart guesses lambda as scale x the best X/N seen (X/N <= lambda
// everywhere) and solves the linearised law for sigma and kappa.
func linearStart(pts []USLPoint, scale float64) uslParams {
	lambda := 0.0
	for _, p := range pts {
		lambda = math.Max(lambda, p.X/p.N)
	}
	lambda *= scale
	// Normal equations of y = sigma*a + kappa*b, no intercept.
	var aa, ab, bb, ay, by float64
	for _, p := range pts {
		a, b := p.N-1, p.N*(p.N-1)
		y := lambda*p.N/p.X - 1
		aa, ab, bb, ay, by = aa+a*a, ab+a*b, bb+b*b, ay+a*y, by+b*y
	}
	var sigma, kappa float64
	if det := aa*bb - ab*ab; det != 0 {
		sigma = (ay*bb - by*ab) / det
		kappa = (aa*by - ab*ay) / det
	}
	return uslParams{lambda: lambda, sigma: sigma, kappa: kappa}.clamp()
}

// levenbergMarquardt minimises the squared residuals in X from start, with
// Marquardt's diagonal scaling (the three parameters differ by orders of
// magnitude) and bounds kept by clamping every trial step.
func levenbergMarquardt(pts []USLPoint, start uslParams) uslParams {
	p, cur := start, sse(pts, start)
	mu := 1e-3
	for iter := 0; iter < 500 && mu < 1e12; iter++ {
		var jtj [3][3]float64
		var jtr [3]float64
		for _, pt := range pts {
			n := pt.N
			d := 1 + p.sigma*(n-1) + p.kappa*n*(n-1)
			grad := [3]float64{n / d, -p.lambda * n * (n - 1) / (d * d), -p.lambda * n * n * (n - 1) / (d * d)}
			r := pt.X - p.lambda*n/d
			for i := range 3 {
				jtr[i] += grad[i] * r
				for j := range 3 {
					jtj[i][j] += grad[i] * grad[j]
				}
			}
		}
		a := jtj
		for i := range 3 {
			a[i][i] += mu * math.Max(jtj[i][i], 1e-300)
		}
		delta, ok := solve3(a, jtr)
		if !ok {
			mu *= 10
			continue
		}
		trial := uslParams{p.lambda + delta[0], p.sigma + delta[1], p.kappa + delta[2]}.clamp()
		next := sse(pts, trial)
		if next >= cur {
			mu *= 10
			continue
		}
		converged := cur-next <= 1e-15*cur
		p, cur, mu = trial, next, math.Max(mu/10, 1e-12)
		if converged || cur == 0 {
			break
		}
	}
	return p
}

// solve3 solves a x = b by Gaussian elimination with partial pivoting.
func solve3(a [3][3]float64, b [3]float64) ([3]float64, bool) {
	for col := range 3 {
		pivot := col
		for r := col + 1; r < 3; r++ {
			if math.Abs(a[r][col]) > math.Abs(a[pivot][col]) {
				pivot = r
			}
		}
		if a[pivot][col] == 0 || math.IsNaN(a[pivot][col]) {
			return [3]float64{}, false
		}
		a[col], a[pivot] = a[pivot], a[col]
		b[col], b[pivot] = b[pivot], b[col]
		for r := col + 1; r < 3; r++ {
			f := a[r][col] / a[col][col]
			for c := col; c < 3; c++ {
				a[r][c] -= f * a[col][c]
			}
			b[r] -= f * b[col]
		}
	}
	var x [3]float64
	for r := 2; r >= 0; r-- {
		s := b[r]
		for c := r + 1; c < 3; c++ {
			s -= a[r][c] * x[c]
		}
		x[r] = s / a[r][r]
	}
	return x, true
}
