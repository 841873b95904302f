// Package schedule is the arrival-time maths of the open model: when
// iteration i is meant to start, counted from the scenario's t0.
//
// It is pure: no goroutines, no clock. Times are exact to the nanosecond
// (rates are taken as the shortest decimal that prints the float64, so 0.1
// is 1/10, and all arithmetic is on integers), so a schedule never drifts:
// iteration 1,000,000 at 5,000/s starts at exactly 200 s.
//
// Iteration i starts at t_i = inf{t : N(t) > i}, where N(t) is the integral
// of the rate from 0 to t. At a constant rate that is i/rate; in a ramp it is
// the root of a quadratic. Intervals are half-open, [t_i, t_{i+1}), so a
// zero-rate stage starts nothing, not even at its first instant, and an
// iteration whose t_i is at or past the end is not part of the schedule.
// Times are truncated to whole nanoseconds.
//
// Schedules are immutable values, safe for concurrent use.
package schedule

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"time"
)

// Schedule maps an iteration number to its intended start.
type Schedule interface {
	// Offset is the intended start of iteration i (0-based) since t0;
	// false when i is past the end of the schedule (or negative).
	Offset(i int64) (time.Duration, bool)
	// Rate is the offered rate at elapsed time at, in iterations per second;
	// 0 outside [0, Duration).
	Rate(at time.Duration) float64
	// Duration is how long the schedule lasts.
	Duration() time.Duration
}

// ErrInvalid is wrapped by every error a constructor returns for bad input.
var ErrInvalid = errors.New("invalid schedule")

// exactRate returns r as a fraction num/den of whole numbers, taking the
// shortest decimal that prints r so that "0.1" means one tenth.
func exactRate(r float64) (*big.Rat, error) {
	if math.IsNaN(r) || math.IsInf(r, 0) {
		return nil, fmt.Errorf("%w: rate %v is not a number", ErrInvalid, r)
	}
	q, ok := new(big.Rat).SetString(strconv.FormatFloat(r, 'g', -1, 64))
	if !ok {
		return nil, fmt.Errorf("%w: rate %v cannot be read as a decimal", ErrInvalid, r)
	}
	return q, nil
}

func checkTimeUnit(u time.Duration) (time.Duration, error) {
	switch {
	case u == 0:
		return time.Second, nil
	case u < 0:
		return 0, fmt.Errorf("%w: time unit %v is negative; use a positive unit such as 1s", ErrInvalid, u)
	}
	return u, nil
}

// perSecond converts a rate per unit into iterations per second.
func perSecond(rate float64, unit time.Duration) float64 {
	return rate * float64(time.Second) / float64(unit)
}

// Due is how many iterations of s start before elapsed: those with
// Offset < elapsed. It asks Offset O(log n) times.
func Due(s Schedule, elapsed time.Duration) int64 {
	if off, ok := s.Offset(0); !ok || off >= elapsed {
		return 0
	}
	// Iteration lo-1 starts before elapsed; iteration hi-1 does not (or
	// does not exist).
	before := func(n int64) bool {
		off, ok := s.Offset(n - 1)
		return ok && off < elapsed
	}
	lo, hi := int64(1), int64(2)
	for before(hi) {
		lo = hi
		if hi > math.MaxInt64/2 {
			return hi
		}
		hi *= 2
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if before(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

// Remaining is how many iterations of s are at or after from: those a
// generator stopped at from never starts. It asks Offset O(log n) times.
func Remaining(s Schedule, from int64) int64 {
	if from < 0 {
		from = 0
	}
	if _, ok := s.Offset(from); !ok {
		return 0
	}
	// Offset(from+lo-1) exists, Offset(from+hi-1) does not.
	lo, hi := int64(1), int64(2)
	for {
		if _, ok := s.Offset(from + hi - 1); !ok {
			break
		}
		lo = hi
		if hi > math.MaxInt64/2-from {
			return math.MaxInt64 - from
		}
		hi *= 2
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if _, ok := s.Offset(from + mid - 1); ok {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}
