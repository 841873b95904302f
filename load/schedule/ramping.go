package schedule

import (
	"fmt"
	"math/big"
	"sort"
	"time"
)

// Stage is one linear piece of a ramp: the rate (or VU count) moves from the
// previous stage's Target to this Target over Duration. A zero Duration is
// an instant jump.
type Stage struct {
	Duration time.Duration
	Target   float64
}

// Ramping is a piecewise-linear rate. The zero value is an empty schedule;
// build one with NewRamping.
//
// With K = 2·q·unit (q the common denominator of all rates, so a rate r per
// unit is p/q with p whole), the integral of the rate over a stage of d ns
// from p0 to p1 is (p0+p1)·d/K iterations, a whole number over K. Inside a
// stage that starts when S/K iterations are done, iteration i starts after t
// ns, t the root in [0, d) of
//
//	A·t² + B·t − C = 0,  A = p1−p0,  B = 2·d·p0,  C = d·(K·i − S)
//
// which Offset solves with integer square roots, so it is exact.
type Ramping struct {
	unit     time.Duration
	duration time.Duration
	k        *big.Int // 2·q·unit
	segs     []segment
}

// segment is one stage with a positive duration.
type segment struct {
	start, d int64    // ns since t0, length in ns
	r0, r1   float64  // rates per unit, for Rate
	p0, p1   *big.Int // rates per unit times q
	sBefore  *big.Int // K × iterations started before this stage
	sAfter   *big.Int // K × iterations started by its end
}

var _ Schedule = Ramping{}

// NewRamping returns a ramp from startRate (iterations per unit; unit 0
// means 1 s) through stages. Rates must be >= 0, durations >= 0, and the
// stages must last longer than zero in total.
func NewRamping(startRate float64, unit time.Duration, stages []Stage) (Ramping, error) {
	unit, err := checkTimeUnit(unit)
	if err != nil {
		return Ramping{}, err
	}
	rates := make([]*big.Rat, len(stages)+1)
	if rates[0], err = checkRate(startRate, "start rate"); err != nil {
		return Ramping{}, err
	}
	var total time.Duration
	for n, st := range stages {
		if rates[n+1], err = checkRate(st.Target, fmt.Sprintf("stage %d target", n+1)); err != nil {
			return Ramping{}, err
		}
		if st.Duration < 0 {
			return Ramping{}, fmt.Errorf("%w: stage %d duration %v is negative", ErrInvalid, n+1, st.Duration)
		}
		if total+st.Duration < total {
			return Ramping{}, fmt.Errorf("%w: stages last too long", ErrInvalid)
		}
		total += st.Duration
	}
	if total <= 0 {
		return Ramping{}, fmt.Errorf("%w: the stages last 0s; give at least one stage a duration", ErrInvalid)
	}
	q := big.NewInt(1) // least common multiple of the denominators
	for _, r := range rates {
		g := new(big.Int).GCD(nil, nil, q, r.Denom())
		q.Mul(q, new(big.Int).Quo(r.Denom(), g))
	}
	whole := func(r *big.Rat) *big.Int { // r·q
		return new(big.Int).Quo(new(big.Int).Mul(r.Num(), q), r.Denom())
	}
	rp := Ramping{unit: unit, duration: total, k: new(big.Int).Mul(q, big.NewInt(2*int64(unit)))}
	var at int64
	s := new(big.Int)
	from, fromF := whole(rates[0]), startRate
	for n, st := range stages {
		to := whole(rates[n+1])
		if st.Duration > 0 {
			sg := segment{start: at, d: int64(st.Duration), r0: fromF, r1: st.Target, p0: from, p1: to, sBefore: s}
			area := new(big.Int).Add(from, to)
			area.Mul(area, big.NewInt(sg.d))
			s = new(big.Int).Add(s, area)
			sg.sAfter = s
			rp.segs = append(rp.segs, sg)
			at += sg.d
		}
		from, fromF = to, st.Target
	}
	return rp, nil
}

func checkRate(r float64, what string) (*big.Rat, error) {
	q, err := exactRate(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if q.Sign() < 0 {
		return nil, fmt.Errorf("%w: %s %v is negative; rates are 0 or more", ErrInvalid, what, r)
	}
	return q, nil
}

// Offset implements Schedule.
func (r Ramping) Offset(i int64) (time.Duration, bool) {
	if i < 0 || len(r.segs) == 0 {
		return 0, false
	}
	x := new(big.Int).Mul(r.k, big.NewInt(i))
	// The stage where the integral passes i: the first whose end exceeds it.
	n := sort.Search(len(r.segs), func(n int) bool { return r.segs[n].sAfter.Cmp(x) > 0 })
	if n == len(r.segs) {
		return 0, false
	}
	sg := r.segs[n]
	t := sg.solve(x)
	return time.Duration(sg.start + t), true
}

// solve returns floor of the root t in [0, d) of A·t² + B·t − C = 0 (see Ramping).
func (sg segment) solve(x *big.Int) int64 {
	d := big.NewInt(sg.d)
	a := new(big.Int).Sub(sg.p1, sg.p0)
	b := new(big.Int).Mul(d, sg.p0)
	b.Lsh(b, 1)
	c := new(big.Int).Sub(x, sg.sBefore)
	c.Mul(c, d)
	t := new(big.Int)
	switch a.Sign() {
	case 0: // constant rate: t = C/B
		t.Quo(c, b)
	default:
		// disc = B² + 4AC >= 0 inside the stage.
		disc := new(big.Int).Mul(a, c)
		disc.Lsh(disc, 2)
		disc.Add(disc, new(big.Int).Mul(b, b))
		root := new(big.Int).Sqrt(disc)
		m := new(big.Int).Lsh(a, 1)
		if a.Sign() > 0 {
			// t = (√disc − B)/2A; floor((√D − B)/m) = floor((⌊√D⌋ − B)/m).
			t.Quo(root.Sub(root, b), m)
		} else {
			// t = (B − √disc)/2|A|; floor((B − √D)/m) = floor((B − ⌈√D⌉)/m).
			if new(big.Int).Mul(root, root).Cmp(disc) < 0 {
				root.Add(root, big.NewInt(1))
			}
			m.Neg(m)
			t.Quo(new(big.Int).Sub(b, root), m)
		}
	}
	v := t.Int64()
	return min(max(v, 0), sg.d-1)
}

// Rate implements Schedule.
func (r Ramping) Rate(at time.Duration) float64 {
	if at < 0 {
		return 0
	}
	for _, sg := range r.segs {
		if int64(at) < sg.start+sg.d {
			frac := float64(int64(at)-sg.start) / float64(sg.d)
			return perSecond(sg.r0+(sg.r1-sg.r0)*frac, r.unit)
		}
	}
	return 0
}

// Duration implements Schedule.
func (r Ramping) Duration() time.Duration { return r.duration }

// Iterations is how many iterations the ramp starts: ceil of the integral
// of the rate over the whole duration.
func (r Ramping) Iterations() int64 {
	if len(r.segs) == 0 {
		return 0
	}
	return ceilDiv(r.segs[len(r.segs)-1].sAfter, r.k)
}
