package analyze

import (
	"math"
	"sort"
)

// Methods of MannWhitneyU.
const (
	MethodExact  = "exact"
	MethodNormal = "normal"
)

// MannWhitney is a two-sided Mann-Whitney U test of two samples.
type MannWhitney struct {
	U1     float64 `json:"u1"` // U of the first sample: pairs where it is larger, ties count ½
	U      float64 `json:"u"`  // min(U1, n1·n2 − U1)
	Z      float64 `json:"z,omitempty"`
	P      float64 `json:"p"`
	Method string  `json:"method"` // MethodExact or MethodNormal
}

// MannWhitneyU tests whether x and y come from the same distribution.
// Like SciPy's "auto" method it is exact when both samples are smaller than
// 8 and have no ties; otherwise it uses the normal approximation with tie
// and continuity corrections:
//
//	mu    = n1·n2 / 2
//	sigma = sqrt( n1·n2/12 · ((n+1) − Σ(t³−t) / (n(n−1))) )   t = size of each tie group
//	z     = (|U1 − mu| − ½) / sigma,   p = erfc(z / √2)
//
// The inputs are run-level numbers (one per repetition), never latencies.
func MannWhitneyU(x, y []float64) MannWhitney {
	n1, n2 := len(x), len(y)
	if n1 == 0 || n2 == 0 {
		return MannWhitney{P: 1, Method: MethodExact}
	}
	ranks, tieTerm := midRanks(x, y)
	var r1 float64
	for i := range x {
		r1 += ranks[i]
	}
	u1 := r1 - float64(n1*(n1+1))/2
	out := MannWhitney{U1: u1, U: math.Min(u1, float64(n1*n2)-u1)}
	if n1 < 8 && n2 < 8 && tieTerm == 0 {
		out.Method = MethodExact
		out.P = math.Min(1, 2*exactUCDF(n1, n2, int(out.U)))
		return out
	}
	out.Method = MethodNormal
	n := float64(n1 + n2)
	mu := float64(n1*n2) / 2
	variance := float64(n1*n2) / 12 * ((n + 1) - tieTerm/(n*(n-1)))
	if variance <= 0 {
		out.P = 1 // every value equal: no evidence of a difference
		return out
	}
	out.Z = math.Max(0, math.Abs(u1-mu)-0.5) / math.Sqrt(variance)
	out.P = math.Min(1, math.Erfc(out.Z/math.Sqrt2))
	return out
}

// midRanks ranks x then y together (ties get the mean of their ranks) and
// returns Σ(t³−t) over tie groups.
func midRanks(x, y []float64) ([]float64, float64) {
	all := append(append([]float64(nil), x...), y...)
	idx := make([]int, len(all))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return all[idx[a]] < all[idx[b]] })
	ranks := make([]float64, len(all))
	var tieTerm float64
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && all[idx[j+1]] == all[idx[i]] {
			j++
		}
		mid := float64(i+j)/2 + 1 // ranks are 1-based
		for k := i; k <= j; k++ {
			ranks[idx[k]] = mid
		}
		if t := float64(j - i + 1); t > 1 {
			tieTerm += t*t*t - t
		}
		i = j + 1
	}
	return ranks, tieTerm
}

// exactUCDF is P(U <= u) when the two samples (sizes n1, n2) are exchangeable:
// the number of orderings with U <= u over C(n1+n2, n1). It counts with
// f(a, b, u) = f(a−1, b, u−b) + f(a, b−1, u), where the last element is
// either from the first sample (beating all b of the second) or not.
func exactUCDF(n1, n2, u int) float64 {
	if u < 0 {
		return 0
	}
	// counts[a][b][k] for U == k, built up over a and b.
	maxU := n1 * n2
	counts := make([][][]float64, n1+1)
	for a := 0; a <= n1; a++ {
		counts[a] = make([][]float64, n2+1)
		for b := 0; b <= n2; b++ {
			c := make([]float64, maxU+1)
			if a == 0 || b == 0 {
				c[0] = 1
			} else {
				for k := 0; k <= a*b; k++ {
					if k-b >= 0 {
						c[k] += counts[a-1][b][k-b]
					}
					c[k] += counts[a][b-1][k]
				}
			}
			counts[a][b] = c
		}
	}
	var below, total float64
	for k, c := range counts[n1][n2] {
		total += c
		if k <= u {
			below += c
		}
	}
	return below / total
}
