package analyze

import (
	"errors"
	"fmt"
	"time"

	"github.com/knee-dev/knee/record"
	"github.com/knee-dev/knee/rundir"
)

// DefaultJump is how long a stepped run takes to move to the next rate
// (the article's 1 s stage before every hold).
const DefaultJump = time.Second

// ErrNoSteps is returned when a run holds no step to measure: no plan was
// given and none could be inferred, or every step's measured part is empty.
var ErrNoSteps = errors.New("analyze: no steps to measure")

// StepPlan describes a stepped ramping-arrival-rate run: step i offers
// Start + i*Step req/s. Each step first jumps to its rate (Jump: knee's and
// the article's take DefaultJump, a k6 script with 0 s stages jumps at
// once) and then holds it for StepDuration, so step i spans
//
//	[Offset + i*(Jump+StepDuration), Offset + (i+1)*(Jump+StepDuration))
//
// Warmup is dropped from the beginning of every step, and never less than
// Jump is dropped: during the jump the offered rate is not the step's rate.
// Jump is taken as given: 0 is a step that begins at its rate.
type StepPlan struct {
	Start        float64       `json:"start"` // req/s offered by the first step
	Step         float64       `json:"step"`  // req/s added by every next step
	Steps        int           `json:"steps"`
	StepDuration time.Duration `json:"step_duration_ns"` // the hold, after the jump
	Jump         time.Duration `json:"jump_ns"`          // 0: the rate changes at once
	Warmup       time.Duration `json:"warmup_ns"`        // dropped from each step's start
	Offset       time.Duration `json:"offset_ns"`        // when step 0 begins, since the run's start
	Scenario     string        `json:"scenario,omitempty"`
}

// Period is the length of one whole step (jump plus hold).
func (p StepPlan) Period() time.Duration { return p.Jump + p.StepDuration }

// Rate is the offered rate of step i in req/s.
func (p StepPlan) Rate(i int) float64 { return p.Start + float64(i)*p.Step }

// Window is step i's time span since the run's start: when it begins and
// the measured part [from, to) left after the warmup.
func (p StepPlan) Window(i int) (begin, from, to time.Duration) {
	begin = p.Offset + time.Duration(i)*p.Period()
	return begin, begin + max(p.Warmup, p.Jump), begin + p.Period()
}

// Validate reports every problem with p, and changes nothing.
func (p StepPlan) Validate() []error {
	var errs []error
	if p.Steps <= 0 {
		errs = append(errs, fmt.Errorf("steps must be positive, got %d", p.Steps))
	}
	if p.Start <= 0 {
		errs = append(errs, fmt.Errorf("start rate must be positive, got %g req/s", p.Start))
	}
	if p.Steps > 1 && p.Rate(p.Steps-1) <= 0 {
		errs = append(errs, fmt.Errorf("the last step's rate %g req/s is not positive", p.Rate(p.Steps-1)))
	}
	if p.StepDuration <= 0 {
		errs = append(errs, fmt.Errorf("step duration must be positive, got %v", p.StepDuration))
	}
	if p.Jump < 0 {
		errs = append(errs, fmt.Errorf("jump must not be negative, got %v", p.Jump))
	}
	if p.Warmup < 0 || p.Offset < 0 {
		errs = append(errs, fmt.Errorf("warmup (%v) and offset (%v) must not be negative", p.Warmup, p.Offset))
	}
	if p.StepDuration > 0 && p.Warmup >= p.Period() {
		errs = append(errs, fmt.Errorf("warmup %v leaves nothing of a %v step to measure", p.Warmup, p.Period()))
	}
	return errs
}

// Step is one step of a throughput-latency curve, measured over the part of
// the step left after the warmup. JSON names are the --summary-export ones.
type Step struct {
	Index             int              `json:"index"`
	Begin             time.Duration    `json:"begin_ns"`     // the step's jump starts
	From              time.Duration    `json:"from_ns"`      // measured part starts (after warmup)
	To                time.Duration    `json:"to_ns"`        // measured part ends
	Seconds           float64          `json:"measured_s"`   // length of the intervals measured
	OfferedRate       float64          `json:"offered_rate"` // req/s the plan asked for
	Rate              float64          `json:"rate"`         // req/s completed
	Requests          int64            `json:"requests"`
	DroppedIterations int64            `json:"dropped_iterations"`
	DroppedRate       float64          `json:"dropped_rate"` // dropped / offered iterations
	Errors            int64            `json:"errors"`
	ErrorRate         float64          `json:"error_rate"` // errors / requests
	ErrorsByClass     map[string]int64 `json:"errors_by_class"`
	BusyVUs           int              `json:"busy_vus"`         // max over the measured intervals
	NoVUs             bool             `json:"no_vus,omitempty"` // the data carries no VU counts (an import): BusyVUs is not a measurement
	LatencyMS         record.Latencies `json:"latency_ms"`
	// Latency is the merge of the step's measured interval histograms.
	Latency *record.Histogram `json:"-"`
}

// Curve measures every step of plan in r: offered and achieved rate,
// latency percentiles of the merged latency histograms, dropped iterations,
// errors and busy VUs, each over the measured part of the step only.
// A step whose measured part holds no interval is left out; a run with no
// measurable step is ErrNoSteps.
func Curve(r *rundir.Dir, plan StepPlan) ([]Step, error) {
	if errs := plan.Validate(); len(errs) > 0 {
		return nil, fmt.Errorf("analyze: step plan: %w", errors.Join(errs...))
	}
	steps := make([]Step, 0, plan.Steps)
	for i := range plan.Steps {
		s, ok := measureStep(r, plan, i)
		if ok {
			steps = append(steps, s)
		}
	}
	if len(steps) == 0 {
		return nil, ErrNoSteps
	}
	return steps, nil
}

// measureStep sums the intervals that start inside step i's measured part.
// Interval lengths, not the plan, give the seconds: a run cut short still
// reports true rates for what it measured.
func measureStep(r *rundir.Dir, plan StepPlan, i int) (Step, bool) {
	begin, from, to := plan.Window(i)
	var length time.Duration
	busyVUs, vusSeen := 0, false
	for _, iv := range r.Intervals {
		if !inWindow(iv.Start, from, to) {
			continue
		}
		length += iv.End - iv.Start
		busy := 0 // VUs of every selected scenario busy at once
		for name, c := range iv.Counters {
			if inScenario(plan.Scenario, name) {
				busy += c.BusyVUs
				vusSeen = vusSeen || c.VUs > 0 || c.BusyVUs > 0
			}
		}
		busyVUs = max(busyVUs, busy)
	}
	if length <= 0 {
		return Step{}, false
	}
	total := countersOf(r, plan.Scenario, from, to)
	s := Step{
		Index: i, Begin: begin, From: from, To: to,
		Seconds:           length.Seconds(),
		OfferedRate:       plan.Rate(i),
		Requests:          total.Requests,
		DroppedIterations: total.DroppedIterations,
		Errors:            total.Errors,
		ErrorsByClass:     map[string]int64{},
		BusyVUs:           busyVUs,
		NoVUs:             !vusSeen,
		Latency:           r.Merged(Selector{Scenario: plan.Scenario}.Of(record.Latency), from, to),
	}
	s.Rate = float64(s.Requests) / s.Seconds
	if offered := s.OfferedRate * s.Seconds; offered > 0 {
		s.DroppedRate = float64(s.DroppedIterations) / offered
	}
	if s.Requests > 0 {
		s.ErrorRate = float64(s.Errors) / float64(s.Requests)
	}
	for class, n := range total.ErrorsByClass {
		s.ErrorsByClass[class] = n
	}
	s.LatencyMS = s.Latency.Latencies()
	return s, true
}

func inScenario(want, got string) bool { return want == "" || want == got }
