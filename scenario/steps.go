package scenario

import (
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/knee-dev/knee/load"
	"github.com/knee-dev/knee/load/schedule"
)

// Defaults of a stepped run's VUs, the article's k6 script's.
const (
	DefaultStepsPreAllocatedVUs = 50
	DefaultStepsMaxVUs          = 2000
)

// StepsScenario is the name of the one scenario of a stepped test.
const StepsScenario = "steps"

// Steps is a stepped test's load: Count steps from Start req/s, Step more
// each, each a schedule.StepJump jump to its rate and a Hold at it.
type Steps struct {
	Start, Step     float64
	Count           int
	Hold            time.Duration
	PreAllocatedVUs int // 0 means DefaultStepsPreAllocatedVUs
	MaxVUs          int // 0 means DefaultStepsMaxVUs (or PreAllocatedVUs if more)
}

// Executor is the ramping-arrival-rate executor of s: it starts at s.Start
// (the first jump holds it) and steps through schedule.Steps.
func (s Steps) Executor() load.RampingArrivalRate {
	pre, maxVUs := s.PreAllocatedVUs, s.MaxVUs
	if pre == 0 {
		pre = DefaultStepsPreAllocatedVUs
	}
	if maxVUs == 0 {
		maxVUs = max(DefaultStepsMaxVUs, pre)
	}
	return load.RampingArrivalRate{
		StartRate:       s.Start,
		TimeUnit:        time.Second,
		Stages:          schedule.Steps(s.Start, s.Step, s.Count, s.Hold),
		PreAllocatedVUs: pre,
		MaxVUs:          maxVUs,
	}
}

// FromStepFlags builds the one-scenario configuration of a stepped test
// (named StepsScenario) from the request flags of f and the load of s, and
// validates it. f's load flags (executor, rates, stages, VUs) must be zero:
// s sets the load.
func FromStepFlags(f Flags, s Steps) (*Config, error) {
	if f.Executor != "" || f.Rate != 0 || f.StartRate != 0 || f.Stages != "" || f.Duration != 0 || f.VUs != 0 || f.Think != 0 || f.TimeUnit != 0 {
		return nil, errors.New("a stepped test sets its own load: give --start, --step, --steps and --step-duration, not executor flags")
	}
	if s.Count <= 0 {
		return nil, errors.New("a stepped test needs at least one step (--steps)")
	}
	e := s.Executor()
	f.Executor, f.StartRate, f.TimeUnit = RampingArrivalRate, e.StartRate, e.TimeUnit
	f.PreAllocatedVUs, f.MaxVUs = e.PreAllocatedVUs, e.MaxVUs
	var stages []string
	for _, st := range e.Stages {
		stages = append(stages, st.Duration.String()+":"+strconv.FormatFloat(st.Target, 'g', -1, 64))
	}
	f.Stages = strings.Join(stages, ",")
	cfg, err := FromFlags(f)
	if err != nil {
		return nil, err
	}
	cfg.Scenarios[0].Name = StepsScenario
	return cfg, nil
}
