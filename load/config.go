package load

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/knee-dev/knee/load/schedule"
)

// Executor names and models, as k6 spells them.
const (
	KindConstantArrivalRate = "constant-arrival-rate"
	KindRampingArrivalRate  = "ramping-arrival-rate"
	KindConstantVUs         = "constant-vus"
	KindRampingVUs          = "ramping-vus"

	ModelOpen   = "open"
	ModelClosed = "closed"
)

// ErrInvalid is wrapped by every configuration error NewGenerator returns.
var ErrInvalid = errors.New("invalid load configuration")

// Executor is the configuration of one executor: ConstantArrivalRate,
// RampingArrivalRate, ConstantVUs or RampingVUs. The set is closed (the
// unexported method) because the Generator drives each one's VUs itself.
// Span and PeakVUs are meaningful only on a valid configuration.
type Executor interface {
	Kind() string
	Model() string
	// Validate reports every problem of the configuration, each saying how
	// to fix it; it changes nothing. nil means valid.
	Validate() []error
	// Span is how long the executor starts iterations, graceful stop not included.
	Span() time.Duration
	// PeakVUs is the most VUs it may run at once, defaults applied.
	PeakVUs() int

	newDriver() (driver, error)
}

var (
	_ Executor = ConstantArrivalRate{}
	_ Executor = RampingArrivalRate{}
	_ Executor = ConstantVUs{}
	_ Executor = RampingVUs{}
)

// DefaultTimeUnit is the TimeUnit of an arrival rate left at zero.
const DefaultTimeUnit = time.Second

// Kind implements Executor.
func (ConstantArrivalRate) Kind() string { return KindConstantArrivalRate }

// Model implements Executor.
func (ConstantArrivalRate) Model() string { return ModelOpen }

// Span implements Executor.
func (c ConstantArrivalRate) Span() time.Duration { return c.Duration }

// PeakVUs implements Executor: MaxVUs, or PreAllocatedVUs when MaxVUs is 0 (as k6).
func (c ConstantArrivalRate) PeakVUs() int { return maxVUs(c.PreAllocatedVUs, c.MaxVUs) }

// Validate implements Executor.
func (c ConstantArrivalRate) Validate() []error {
	var errs []error
	if !(c.Rate > 0) || math.IsInf(c.Rate, 0) {
		errs = append(errs, fmt.Errorf("%s: rate is %v; set it to the iterations to start per timeUnit, more than 0", c.Kind(), c.Rate))
	}
	if c.Duration <= 0 {
		errs = append(errs, fmt.Errorf("%s: duration is %v; set how long to hold the rate, e.g. 1m", c.Kind(), c.Duration))
	}
	errs = append(errs, validateUnit(c.Kind(), c.TimeUnit)...)
	return append(errs, validatePool(c.Kind(), c.PreAllocatedVUs, c.MaxVUs)...)
}

// Kind implements Executor.
func (RampingArrivalRate) Kind() string { return KindRampingArrivalRate }

// Model implements Executor.
func (RampingArrivalRate) Model() string { return ModelOpen }

// Span implements Executor: the sum of the stages.
func (c RampingArrivalRate) Span() time.Duration { return sumStages(c.Stages) }

// PeakVUs implements Executor: MaxVUs, or PreAllocatedVUs when MaxVUs is 0 (as k6).
func (c RampingArrivalRate) PeakVUs() int { return maxVUs(c.PreAllocatedVUs, c.MaxVUs) }

// Validate implements Executor.
func (c RampingArrivalRate) Validate() []error {
	var errs []error
	if !(c.StartRate >= 0) || math.IsInf(c.StartRate, 0) {
		errs = append(errs, fmt.Errorf("%s: startRate is %v; set it to 0 or more iterations per timeUnit", c.Kind(), c.StartRate))
	}
	errs = append(errs, validateStages(c.Kind(), "rate", c.Stages, false)...)
	if len(errs) == 0 && c.StartRate == 0 && allZero(c.Stages) {
		errs = append(errs, fmt.Errorf("%s: every rate is 0, so no iteration would start; give a stage a target above 0", c.Kind()))
	}
	errs = append(errs, validateUnit(c.Kind(), c.TimeUnit)...)
	return append(errs, validatePool(c.Kind(), c.PreAllocatedVUs, c.MaxVUs)...)
}

// Kind implements Executor.
func (ConstantVUs) Kind() string { return KindConstantVUs }

// Model implements Executor.
func (ConstantVUs) Model() string { return ModelClosed }

// Span implements Executor.
func (c ConstantVUs) Span() time.Duration { return c.Duration }

// PeakVUs implements Executor.
func (c ConstantVUs) PeakVUs() int { return c.VUs }

// Validate implements Executor.
func (c ConstantVUs) Validate() []error {
	var errs []error
	if c.VUs <= 0 {
		errs = append(errs, fmt.Errorf("%s: vus is %d; set how many VUs loop, at least 1", c.Kind(), c.VUs))
	}
	if c.Duration <= 0 {
		errs = append(errs, fmt.Errorf("%s: duration is %v; set how long the VUs loop, e.g. 1m", c.Kind(), c.Duration))
	}
	return append(errs, validateThink(c.Kind(), c.Think)...)
}

// Kind implements Executor.
func (RampingVUs) Kind() string { return KindRampingVUs }

// Model implements Executor.
func (RampingVUs) Model() string { return ModelClosed }

// Span implements Executor: the sum of the stages.
func (c RampingVUs) Span() time.Duration { return sumStages(c.Stages) }

// PeakVUs implements Executor: the largest of StartVUs and the stage targets.
func (c RampingVUs) PeakVUs() int {
	peak := c.StartVUs
	for _, st := range c.Stages {
		if st.Target > float64(peak) && st.Target <= math.MaxInt32 {
			peak = int(st.Target)
		}
	}
	return peak
}

// Validate implements Executor.
func (c RampingVUs) Validate() []error {
	var errs []error
	if c.StartVUs < 0 {
		errs = append(errs, fmt.Errorf("%s: startVUs is %d; set 0 or more", c.Kind(), c.StartVUs))
	}
	errs = append(errs, validateStages(c.Kind(), "VU count", c.Stages, true)...)
	if len(errs) == 0 && c.PeakVUs() == 0 {
		errs = append(errs, fmt.Errorf("%s: every target is 0 VUs, so nothing would run; give a stage a target of 1 or more", c.Kind()))
	}
	return append(errs, validateThink(c.Kind(), c.Think)...)
}

func maxVUs(pre, limit int) int {
	if limit == 0 {
		return pre
	}
	return limit
}

func validateUnit(kind string, u time.Duration) []error {
	if u < 0 {
		return []error{fmt.Errorf("%s: timeUnit is %v; leave it 0 for 1s or set a positive unit such as 1m", kind, u)}
	}
	return nil
}

func validateThink(kind string, think time.Duration) []error {
	if think < 0 {
		return []error{fmt.Errorf("%s: think is %v; set 0 or a positive pause between iterations", kind, think)}
	}
	return nil
}

func validatePool(kind string, pre, limit int) []error {
	var errs []error
	if pre < 0 {
		errs = append(errs, fmt.Errorf("%s: preAllocatedVUs is %d; set 0 or more", kind, pre))
	}
	switch {
	case limit < 0:
		errs = append(errs, fmt.Errorf("%s: maxVUs is %d; set it to at least preAllocatedVUs, or 0 to use preAllocatedVUs", kind, limit))
	case limit > 0 && limit < pre:
		errs = append(errs, fmt.Errorf("%s: maxVUs (%d) is below preAllocatedVUs (%d); raise maxVUs or lower preAllocatedVUs", kind, limit, pre))
	case limit == 0 && pre == 0:
		errs = append(errs, fmt.Errorf("%s: preAllocatedVUs and maxVUs are both 0, so no VU could run an iteration; set preAllocatedVUs (and maxVUs for headroom)", kind))
	}
	return errs
}

func validateStages(kind, what string, stages []schedule.Stage, whole bool) []error {
	if len(stages) == 0 {
		return []error{fmt.Errorf("%s: no stages; add at least one {duration, target}", kind)}
	}
	var errs []error
	for n, st := range stages {
		if st.Duration <= 0 {
			errs = append(errs, fmt.Errorf("%s: stage %d has duration %v; give every stage a positive duration (1s for a jump)", kind, n+1, st.Duration))
		}
		switch {
		case !(st.Target >= 0) || math.IsInf(st.Target, 0):
			errs = append(errs, fmt.Errorf("%s: stage %d target %v; set a %s of 0 or more", kind, n+1, st.Target, what))
		case whole && (st.Target != math.Trunc(st.Target) || st.Target > math.MaxInt32):
			errs = append(errs, fmt.Errorf("%s: stage %d target %v is not a whole number of VUs", kind, n+1, st.Target))
		}
	}
	return errs
}

func sumStages(stages []schedule.Stage) time.Duration {
	var d time.Duration
	for _, st := range stages {
		d += st.Duration
	}
	return d
}

func allZero(stages []schedule.Stage) bool {
	for _, st := range stages {
		if st.Target != 0 {
			return false
		}
	}
	return true
}
