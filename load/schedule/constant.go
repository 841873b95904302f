package schedule

import (
	"fmt"
	"math/big"
	"math/bits"
	"time"
)

// Constant starts iterations at a fixed rate: t_i = i·unit/rate exactly.
// The zero value is an empty schedule; build one with NewConstant.
type Constant struct {
	rate     float64       // iterations per unit, as given
	unit     time.Duration //
	duration time.Duration
	// The interval between iterations is num/den nanoseconds, reduced.
	num, den *big.Int
	// Fast path when num and den both fit in 64 bits.
	num64, den64 uint64
	small        bool
}

var _ Schedule = Constant{}

// NewConstant returns a schedule of rate iterations per unit (0 means 1 s)
// for duration. rate and duration must be positive.
func NewConstant(rate float64, unit, duration time.Duration) (Constant, error) {
	r, err := exactRate(rate)
	if err != nil {
		return Constant{}, err
	}
	if r.Sign() <= 0 {
		return Constant{}, fmt.Errorf("%w: rate %v must be positive; to start nothing, leave the scenario out", ErrInvalid, rate)
	}
	if unit, err = checkTimeUnit(unit); err != nil {
		return Constant{}, err
	}
	if duration <= 0 {
		return Constant{}, fmt.Errorf("%w: duration %v must be positive, e.g. 30s", ErrInvalid, duration)
	}
	// interval = unit / (p/q) = unit·q / p nanoseconds.
	iv := new(big.Rat).SetFrac(new(big.Int).Mul(big.NewInt(int64(unit)), r.Denom()), r.Num())
	c := Constant{rate: rate, unit: unit, duration: duration, num: iv.Num(), den: iv.Denom()}
	if c.num.IsUint64() && c.den.IsUint64() {
		c.num64, c.den64, c.small = c.num.Uint64(), c.den.Uint64(), true
	}
	return c, nil
}

// Offset implements Schedule.
func (c Constant) Offset(i int64) (time.Duration, bool) {
	if i < 0 || c.duration <= 0 {
		return 0, false
	}
	var t int64
	if c.small {
		hi, lo := bits.Mul64(uint64(i), c.num64)
		if hi >= c.den64 { // the quotient would not fit in 64 bits
			return 0, false
		}
		q, _ := bits.Div64(hi, lo, c.den64)
		if q > uint64(c.duration) {
			return 0, false
		}
		t = int64(q)
	} else {
		q := new(big.Int).Mul(big.NewInt(i), c.num)
		q.Quo(q, c.den)
		if !q.IsInt64() {
			return 0, false
		}
		t = q.Int64()
	}
	if t >= int64(c.duration) {
		return 0, false
	}
	return time.Duration(t), true
}

// Rate implements Schedule.
func (c Constant) Rate(at time.Duration) float64 {
	if at < 0 || at >= c.duration {
		return 0
	}
	return perSecond(c.rate, c.unit)
}

// Duration implements Schedule.
func (c Constant) Duration() time.Duration { return c.duration }

// Iterations is how many iterations the schedule starts: ceil(duration/interval).
func (c Constant) Iterations() int64 {
	if c.duration <= 0 {
		return 0
	}
	// Count of i >= 0 with i·num/den < duration: i < duration·den/num.
	n := new(big.Int).Mul(big.NewInt(int64(c.duration)), c.den)
	return ceilDiv(n, c.num)
}

// ceilDiv is ceil(a/b) for a >= 0, b > 0, saturated to int64.
func ceilDiv(a, b *big.Int) int64 {
	q, m := new(big.Int).QuoRem(a, b, new(big.Int))
	if m.Sign() > 0 {
		q.Add(q, big.NewInt(1))
	}
	if !q.IsInt64() {
		return 1<<63 - 1
	}
	return q.Int64()
}
