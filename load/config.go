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

// FieldError is one problem Validate finds: the executor, the setting (as
// k6 and scenario files spell it: rate, timeUnit, stages[0].duration, ...)
// and what is wrong with how to fix it. Package scenario adds file and line.
type FieldError struct {
	Kind  string // executor kind
	Field string // the setting, e.g. "maxVUs" or "stages[1].target"
	Msg   string // what is wrong and how to fix it
}

func (e *FieldError) Error() string { return e.Kind + ": " + e.Msg }

func fieldErr(kind, field, format string, args ...any) error {
	return &FieldError{Kind: kind, Field: field, Msg: fmt.Sprintf(format, args...)}
}

// The open model's VU pool defaults, the same for scenario files and flags
// (WithDefaults applies them). k6 requires preAllocatedVUs and defaults
// maxVUs to it; knee defaults both, and sizes maxVUs so that a stall of the
// target does not exhaust the pool: iterations keep starting at the
// scheduled rate while every VU waits on the stalled target, and an
// iteration that finds no free VU is dropped.
const (
	DefaultPreAllocatedVUs = 50
	MinDefaultMaxVUs       = 1000
	// DefaultStallCover is the stall the default maxVUs covers at the peak rate.
	DefaultStallCover = 10 * time.Second
	// MaxDefaultMaxVUs bounds the default: 100,000/s held through a 10 s stall.
	MaxDefaultMaxVUs = 1_000_000
)

// DefaultMaxVUs is the maxVUs of an arrival-rate executor that gives none:
// max(MinDefaultMaxVUs, ⌈peak iterations per second × DefaultStallCover⌉),
// at most MaxDefaultMaxVUs.
func DefaultMaxVUs(peakPerSecond float64) int {
	if !(peakPerSecond > 0) {
		return MinDefaultMaxVUs
	}
	need := math.Ceil(peakPerSecond * DefaultStallCover.Seconds())
	return int(min(max(need, MinDefaultMaxVUs), MaxDefaultMaxVUs))
}

// poolDefaults fills in a VU pool: preAllocatedVUs defaults to
// DefaultPreAllocatedVUs (no more than maxVUs), maxVUs to the larger of
// preAllocatedVUs and DefaultMaxVUs. Negative values are left for Validate.
func poolDefaults(pre, limit int, peakPerSecond float64) (int, int) {
	if pre < 0 || limit < 0 {
		return pre, limit
	}
	if limit == 0 {
		limit = max(pre, DefaultMaxVUs(peakPerSecond))
	}
	if pre == 0 {
		pre = min(DefaultPreAllocatedVUs, limit)
	}
	return pre, limit
}

// perSecond is rate per unit as a rate per second; unit 0 is DefaultTimeUnit.
func perSecond(rate float64, unit time.Duration) float64 {
	if unit <= 0 {
		unit = DefaultTimeUnit
	}
	return rate * (float64(time.Second) / float64(unit)) // the unit first: 1e308/s stays finite
}

// WithDefaults returns c with a zero TimeUnit, PreAllocatedVUs and MaxVUs
// given their defaults (DefaultTimeUnit, poolDefaults at Rate).
func (c ConstantArrivalRate) WithDefaults() ConstantArrivalRate {
	if c.TimeUnit == 0 {
		c.TimeUnit = DefaultTimeUnit
	}
	c.PreAllocatedVUs, c.MaxVUs = poolDefaults(c.PreAllocatedVUs, c.MaxVUs, c.PeakRate())
	return c
}

// PeakRate is the most iterations per second the executor starts.
func (c ConstantArrivalRate) PeakRate() float64 { return perSecond(c.Rate, c.TimeUnit) }

// WithDefaults returns c with a zero TimeUnit, PreAllocatedVUs and MaxVUs
// given their defaults (DefaultTimeUnit, poolDefaults at the peak rate).
func (c RampingArrivalRate) WithDefaults() RampingArrivalRate {
	if c.TimeUnit == 0 {
		c.TimeUnit = DefaultTimeUnit
	}
	c.PreAllocatedVUs, c.MaxVUs = poolDefaults(c.PreAllocatedVUs, c.MaxVUs, c.PeakRate())
	return c
}

// PeakRate is the most iterations per second the executor starts: its
// largest rate, the start or a stage's target.
func (c RampingArrivalRate) PeakRate() float64 {
	peak := c.StartRate
	for _, st := range c.Stages {
		peak = max(peak, st.Target)
	}
	return perSecond(peak, c.TimeUnit)
}

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
		errs = append(errs, fieldErr(c.Kind(), "rate", "rate is %v; set it to the iterations to start per timeUnit, more than 0", c.Rate))
	}
	if c.Duration <= 0 {
		errs = append(errs, fieldErr(c.Kind(), "duration", "duration is %v; set how long to hold the rate, e.g. 1m", c.Duration))
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
		errs = append(errs, fieldErr(c.Kind(), "startRate", "startRate is %v; set it to 0 or more iterations per timeUnit", c.StartRate))
	}
	errs = append(errs, validateStages(c.Kind(), "rate", c.Stages, false)...)
	if len(errs) == 0 && c.StartRate == 0 && allZero(c.Stages) {
		errs = append(errs, fieldErr(c.Kind(), "stages", "every rate is 0, so no iteration would start; give a stage a target above 0"))
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
		errs = append(errs, fieldErr(c.Kind(), "vus", "vus is %d; set how many VUs loop, at least 1", c.VUs))
	}
	if c.Duration <= 0 {
		errs = append(errs, fieldErr(c.Kind(), "duration", "duration is %v; set how long the VUs loop, e.g. 1m", c.Duration))
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
		errs = append(errs, fieldErr(c.Kind(), "startVUs", "startVUs is %d; set 0 or more", c.StartVUs))
	}
	errs = append(errs, validateStages(c.Kind(), "VU count", c.Stages, true)...)
	if len(errs) == 0 && c.PeakVUs() == 0 {
		errs = append(errs, fieldErr(c.Kind(), "stages", "every target is 0 VUs, so nothing would run; give a stage a target of 1 or more"))
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
		return []error{fieldErr(kind, "timeUnit", "timeUnit is %v; leave it 0 for 1s or set a positive unit such as 1m", u)}
	}
	return nil
}

func validateThink(kind string, think time.Duration) []error {
	if think < 0 {
		return []error{fieldErr(kind, "think", "think is %v; set 0 or a positive pause between iterations", think)}
	}
	return nil
}

func validatePool(kind string, pre, limit int) []error {
	var errs []error
	if pre < 0 {
		errs = append(errs, fieldErr(kind, "preAllocatedVUs", "preAllocatedVUs is %d; set 0 or more", pre))
	}
	switch {
	case limit < 0:
		errs = append(errs, fieldErr(kind, "maxVUs", "maxVUs is %d; set it to at least preAllocatedVUs, or leave it out for the default", limit))
	case limit > 0 && limit < pre:
		errs = append(errs, fieldErr(kind, "maxVUs", "maxVUs (%d) is below preAllocatedVUs (%d); raise maxVUs or lower preAllocatedVUs", limit, pre))
	case limit == 0 && pre == 0:
		errs = append(errs, fieldErr(kind, "preAllocatedVUs", "preAllocatedVUs and maxVUs are both 0, so no VU could run an iteration; set preAllocatedVUs (and maxVUs for headroom), or apply WithDefaults"))
	}
	return errs
}

func validateStages(kind, what string, stages []schedule.Stage, whole bool) []error {
	if len(stages) == 0 {
		return []error{fieldErr(kind, "stages", "no stages; add at least one {duration, target}")}
	}
	var errs []error
	for n, st := range stages {
		// A stage of 0s is a jump, as in k6 (its validateStages refuses
		// only a negative duration).
		if st.Duration < 0 {
			errs = append(errs, fieldErr(kind, fmt.Sprintf("stages[%d].duration", n), "stage %d has duration %v; give every stage a duration of 0s (a jump) or more", n+1, st.Duration))
		}
		switch {
		case !(st.Target >= 0) || math.IsInf(st.Target, 0):
			errs = append(errs, fieldErr(kind, fmt.Sprintf("stages[%d].target", n), "stage %d target %v; set a %s of 0 or more", n+1, st.Target, what))
		case whole && (st.Target != math.Trunc(st.Target) || st.Target > math.MaxInt32):
			errs = append(errs, fieldErr(kind, fmt.Sprintf("stages[%d].target", n), "stage %d target %v is not a whole number of VUs", n+1, st.Target))
		}
	}
	if len(errs) == 0 && sumStages(stages) == 0 {
		errs = append(errs, fieldErr(kind, "stages", "the stages last 0s in all, so nothing would run; give at least one a positive duration"))
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

// MaxRatePerCPU is the most iterations per second knee tries per CPU of
// the generator. Starting one costs more than a microsecond of CPU (a
// send and a receive are two system calls, about a microsecond each, before
// any HTTP), so no machine starts more: a rate above it is a typo (1e308)
// or a test for several runners (knee run --execution-segment).
const MaxRatePerCPU = 1e6

// CheckPeakRate refuses an open-model executor whose peak rate is above
// what cpus CPUs can start (cpus × MaxRatePerCPU); closed-model executors
// have no rate and pass.
func CheckPeakRate(e Executor, cpus int) error {
	r, ok := e.(interface{ PeakRate() float64 })
	if !ok {
		return nil
	}
	ceiling := MaxRatePerCPU * float64(max(cpus, 1))
	if peak := r.PeakRate(); !(peak <= ceiling) {
		return fmt.Errorf("%s: a peak rate of %.6g/s is more than this machine can try: at most %.6g/s (%d CPUs × %.0f/s, the most iterations knee can start per CPU, each costing more than 1 µs); lower the rate, or split the test among runners (--execution-segment)",
			e.Kind(), peak, ceiling, max(cpus, 1), MaxRatePerCPU)
	}
	return nil
}
