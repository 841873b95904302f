package schedule

import (
	"fmt"
	"math"
	"math/bits"
	"time"
)

// StepJump is how long a stepped test takes to move to the next rate, as in
// the reference article's k6 script.
const StepJump = time.Second

// Steps returns the stages of a stepped test that starts at rate start:
// count steps of start, start+step, ..., each a StepJump ramp to its rate and
// then a hold of hold. Use it with NewRamping(start, unit, Steps(...)).
func Steps(start, step float64, count int, hold time.Duration) []Stage {
	stages := make([]Stage, 0, 2*max(count, 0))
	for n := range max(count, 0) {
		rate := start + float64(n)*step
		stages = append(stages, Stage{Duration: StepJump, Target: rate}, Stage{Duration: hold, Target: rate})
	}
	return stages
}

// Window is the hold of one step of a stepped test: Rate from From to To.
type Window struct {
	Rate     float64
	From, To time.Duration
}

// StepWindows returns where each hold of Steps(start, step, count, hold)
// lies in time, so a stepped run can be cut into its steps.
func StepWindows(start, step float64, count int, hold time.Duration) []Window {
	ws := make([]Window, 0, max(count, 0))
	var at time.Duration
	for n := range max(count, 0) {
		at += StepJump
		ws = append(ws, Window{Rate: start + float64(n)*step, From: at, To: at + hold})
		at += hold
	}
	return ws
}

// VUStep says that from At on, VUs virtual users are active.
type VUStep struct {
	At  time.Duration
	VUs int
}

// VUSteps turns a ramping-vus plan (start VUs, then stages whose Targets are
// VU counts) into the times the active count changes, in time order, starting
// with {0, start}. Inside a linear stage the count becomes v when the line
// reaches v (so it is floor of the line going up, ceil going down); a
// zero-duration stage jumps at once. Targets must be whole and >= 0.
func VUSteps(start int, stages []Stage) ([]VUStep, error) {
	if start < 0 {
		return nil, fmt.Errorf("%w: start VUs %d is negative", ErrInvalid, start)
	}
	steps := []VUStep{{0, start}}
	add := func(at time.Duration, vus int) {
		if last := &steps[len(steps)-1]; last.At == at {
			last.VUs = vus
			return
		}
		steps = append(steps, VUStep{at, vus})
	}
	from := start
	var at time.Duration
	for n, st := range stages {
		if st.Target < 0 || st.Target != math.Trunc(st.Target) || st.Target > math.MaxInt32 {
			return nil, fmt.Errorf("%w: stage %d target %v is not a whole number of VUs >= 0", ErrInvalid, n+1, st.Target)
		}
		if st.Duration < 0 {
			return nil, fmt.Errorf("%w: stage %d duration %v is negative", ErrInvalid, n+1, st.Duration)
		}
		to := int(st.Target)
		span := to - from
		dir := 1
		if span < 0 {
			span, dir = -span, -1
		}
		for k := 1; k <= span; k++ {
			// d·k/span without overflow: k <= span, so the quotient fits.
			hi, lo := bits.Mul64(uint64(st.Duration), uint64(k))
			q, _ := bits.Div64(hi, lo, uint64(span))
			add(at+time.Duration(q), from+dir*k)
		}
		at += st.Duration
		from = to
	}
	return steps, nil
}
