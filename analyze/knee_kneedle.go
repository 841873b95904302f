package analyze

import "math"

// Shape says which way a curve bends, for Kneedle.
type Shape int

// Curve shapes Kneedle knows.
const (
	// Convex curves rise slowly and then steeply: p95 against offered rate.
	Convex Shape = iota
	// Concave curves rise steeply and then flatten: achieved against offered rate.
	Concave
)

// minKneeDistance is how far (in the unit square) the curve must stray from
// the straight line between its ends before Kneedle calls a point its knee;
// below it the curve is too close to a line to have one.
const minKneeDistance = 0.05

// Kneedle finds the knee of the curve (xs, ys) with the offline form of the
// Kneedle method (Satopää, Albrecht, Irwin and Raghavan, 2011): scale both
// axes to [0,1], take each point's distance from the diagonal (x - y for a
// convex curve, y - x for a concave one) and return the index of the
// largest. xs must increase. ok is false with fewer than three points,
// non-increasing xs, a flat curve, or no point farther than
// minKneeDistance from the diagonal.
func Kneedle(xs, ys []float64, shape Shape) (index int, ok bool) {
	if len(xs) < 3 || len(xs) != len(ys) {
		return 0, false
	}
	x0, x1 := xs[0], xs[len(xs)-1]
	y0, y1 := ys[0], ys[0]
	for i, y := range ys {
		if i > 0 && xs[i] <= xs[i-1] {
			return 0, false
		}
		y0, y1 = min(y0, y), max(y1, y)
	}
	if x1 <= x0 || y1 <= y0 {
		return 0, false
	}
	best, bestD := 0, 0.0
	for i := range xs {
		xn := (xs[i] - x0) / (x1 - x0)
		yn := (ys[i] - y0) / (y1 - y0)
		d := xn - yn
		if shape == Concave {
			d = yn - xn
		}
		if d > bestD {
			best, bestD = i, d
		}
	}
	if bestD <= minKneeDistance {
		return 0, false
	}
	return best, true
}

// KneedleP95 runs Kneedle on (offered rate, log p95) and returns the
// offered rate at the knee: the last step before p95 turns up. The log
// scale matters: past the knee p95 keeps growing by orders of magnitude,
// and on a linear scale the first jump (2 ms to 1.6 s in the article)
// looks flat next to the last (34 s).
func KneedleP95(steps []Step) (rate float64, ok bool) {
	return kneedleOn(steps, func(s Step) float64 { return math.Log(math.Max(s.LatencyMS.P95, minLogMS)) }, Convex)
}

// minLogMS keeps the log of an empty step's p95 finite (1 µs, the
// histograms' lowest value).
const minLogMS = 0.001

// KneedleThroughput runs Kneedle on (offered rate, achieved rate) and
// returns the offered rate at the knee: the last step before achieved
// throughput stops following the offered rate.
func KneedleThroughput(steps []Step) (rate float64, ok bool) {
	return kneedleOn(steps, func(s Step) float64 { return s.Rate }, Concave)
}

func kneedleOn(steps []Step, y func(Step) float64, shape Shape) (float64, bool) {
	xs := make([]float64, len(steps))
	ys := make([]float64, len(steps))
	for i, s := range steps {
		xs[i], ys[i] = s.OfferedRate, y(s)
	}
	i, ok := Kneedle(xs, ys, shape)
	if !ok {
		return 0, false
	}
	return xs[i], true
}
