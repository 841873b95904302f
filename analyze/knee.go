package analyze

import (
	"fmt"
	"strings"
	"time"
)

// Health is what a step must meet to count as healthy. The zero value
// means the defaults: achieved >= 97 % of offered, dropped iterations and
// errors under 1 %, and p95 within 5x the first step's p95.
type Health struct {
	MinAchieved float64       // fraction of the offered rate that must complete; 0 means 0.97
	MaxDropped  float64       // fraction of offered iterations; 0 means 0.01
	MaxErrors   float64       // fraction of requests; 0 means 0.01
	MaxP95      time.Duration // absolute p95 bound (an SLO); 0 means P95Factor x the first step's p95
	P95Factor   float64       // 0 means 5
}

// Default health thresholds (see Health).
const (
	DefaultMinAchieved = 0.97
	DefaultMaxDropped  = 0.01
	DefaultMaxErrors   = 0.01
	DefaultP95Factor   = 5
)

func (h Health) withDefaults() Health {
	if h.MinAchieved <= 0 {
		h.MinAchieved = DefaultMinAchieved
	}
	if h.MaxDropped <= 0 {
		h.MaxDropped = DefaultMaxDropped
	}
	if h.MaxErrors <= 0 {
		h.MaxErrors = DefaultMaxErrors
	}
	if h.P95Factor <= 0 {
		h.P95Factor = DefaultP95Factor
	}
	return h
}

// p95Bound is the p95 a step may reach: MaxP95, or P95Factor x the first step's p95.
func (h Health) p95Bound(steps []Step) time.Duration {
	if h.MaxP95 > 0 || len(steps) == 0 {
		return h.MaxP95
	}
	return time.Duration(h.P95Factor * float64(msToDuration(steps[0].LatencyMS.P95)))
}

// Problems lists why s is unhealthy against h and the p95 bound (empty when healthy).
func (h Health) Problems(s Step, p95Bound time.Duration) []string {
	h = h.withDefaults()
	var out []string
	if s.OfferedRate > 0 && s.Rate < h.MinAchieved*s.OfferedRate {
		out = append(out, fmt.Sprintf("achieved %.4g req/s (%.1f %% of offered, needs %.3g %%)",
			s.Rate, 100*s.Rate/s.OfferedRate, 100*h.MinAchieved))
	}
	if s.DroppedRate >= h.MaxDropped {
		out = append(out, fmt.Sprintf("%d dropped iterations (%.1f %%)", s.DroppedIterations, 100*s.DroppedRate))
	}
	if s.ErrorRate >= h.MaxErrors {
		out = append(out, fmt.Sprintf("%d errors (%.1f %%)", s.Errors, 100*s.ErrorRate))
	}
	if p95 := msToDuration(s.LatencyMS.P95); p95Bound > 0 && p95 > p95Bound {
		out = append(out, fmt.Sprintf("p95 %v above %v", roundDuration(p95), roundDuration(p95Bound)))
	}
	return out
}

// Knee is where a stepped run stops being healthy: between the last healthy
// step and the first unhealthy one. JSON names are the --summary-export ones.
// A rate of 0 means "none": no healthy step, or no unhealthy step.
type Knee struct {
	LastHealthyRate    float64 `json:"last_healthy_rate"`
	FirstUnhealthyRate float64 `json:"first_unhealthy_rate"`
	Reason             string  `json:"reason"`
	// KneedleRate is the Kneedle detector's second opinion on the
	// (offered, p95) curve: the last offered rate before p95 bends up; 0 when it finds no knee.
	KneedleRate float64 `json:"kneedle_rate,omitempty"`
}

// FindKnee places the knee where health is lost for good: the first
// unhealthy step after which no step is healthy again, and the step before
// it. A single noisy step lower down (the article's one-step p99 blip) does
// not move the knee; the reason says it was seen.
func FindKnee(steps []Step, h Health) Knee {
	h = h.withDefaults()
	if len(steps) == 0 {
		return Knee{Reason: "no steps"}
	}
	bound := h.p95Bound(steps)
	problems := make([][]string, len(steps))
	first := len(steps) // first step of the unhealthy tail
	for i := len(steps) - 1; i >= 0; i-- {
		problems[i] = h.Problems(steps[i], bound)
		if len(problems[i]) == 0 {
			break
		}
		first = i
	}
	k := Knee{}
	if x, ok := KneedleP95(steps); ok {
		k.KneedleRate = x
	}
	switch {
	case first == len(steps):
		last := steps[len(steps)-1].OfferedRate
		k.LastHealthyRate = last
		k.Reason = fmt.Sprintf("every step was healthy up to %.4g req/s", last)
	case first == 0:
		k.FirstUnhealthyRate = steps[0].OfferedRate
		k.Reason = fmt.Sprintf("unhealthy from the first step: at %.4g req/s %s",
			steps[0].OfferedRate, strings.Join(problems[0], ", "))
	default:
		k.LastHealthyRate = steps[first-1].OfferedRate
		k.FirstUnhealthyRate = steps[first].OfferedRate
		k.Reason = fmt.Sprintf("at %.4g req/s %s", steps[first].OfferedRate, strings.Join(problems[first], ", "))
		if noisy := noisySteps(steps[:first-1], h, bound); len(noisy) > 0 {
			k.Reason += fmt.Sprintf("; lower steps were unhealthy once but recovered (at %s req/s)", strings.Join(noisy, ", "))
		}
	}
	return k
}

func noisySteps(steps []Step, h Health, bound time.Duration) []string {
	var out []string
	for _, s := range steps {
		if len(h.Problems(s, bound)) > 0 {
			out = append(out, fmt.Sprintf("%.4g", s.OfferedRate))
		}
	}
	return out
}

// Collapse is where achieved throughput fell well below the best seen so
// far while the offered rate still rose: the system did not just slow down,
// it lost capacity.
type Collapse struct {
	AtRate float64 `json:"at_rate"` // offered req/s of the step
	Rate   float64 `json:"rate"`    // achieved req/s there
}

// CollapseFraction is how far below the best achieved rate so far a step's
// achieved rate must fall to call it a collapse.
const CollapseFraction = 0.8

// FindCollapse returns the first step whose offered rate is above the
// previous step's and whose achieved rate is below CollapseFraction of the
// best achieved by any earlier step; nil when there is none.
func FindCollapse(steps []Step) *Collapse {
	best := 0.0
	for i, s := range steps {
		if i > 0 && s.OfferedRate > steps[i-1].OfferedRate && s.Rate < CollapseFraction*best {
			return &Collapse{AtRate: s.OfferedRate, Rate: s.Rate}
		}
		best = max(best, s.Rate)
	}
	return nil
}

// HeadroomFraction is the share of the last healthy rate that CapacityLine
// advises running at: the knee is only known to lie somewhere above the last
// healthy step, runs of the same test vary, and load arrives in bursts, so
// steady load should stay a fifth below the highest rate seen to be healthy.
const HeadroomFraction = 0.8

// CapacityLine says what the knee and collapse mean for capacity in one line.
func CapacityLine(k Knee, c *Collapse) string {
	var line string
	switch {
	case k.LastHealthyRate > 0 && k.FirstUnhealthyRate > 0:
		line = fmt.Sprintf("The knee lies between %.4g and %.4g req/s; run below %.4g req/s "+
			"(%.0f %% of the last healthy rate, headroom for bursts and run-to-run noise).",
			k.LastHealthyRate, k.FirstUnhealthyRate, HeadroomFraction*k.LastHealthyRate, 100*HeadroomFraction)
	case k.LastHealthyRate > 0:
		line = fmt.Sprintf("No knee up to %.4g req/s: every step was healthy; step higher to find it.", k.LastHealthyRate)
	case k.FirstUnhealthyRate > 0:
		line = fmt.Sprintf("Unhealthy already at the first step (%.4g req/s): the knee lies below it; step lower to find it.", k.FirstUnhealthyRate)
	default:
		line = "No steps were measured."
	}
	if c != nil {
		line += fmt.Sprintf(" Throughput collapsed at %.4g req/s offered (%.4g req/s achieved).", c.AtRate, c.Rate)
	}
	return line
}

func msToDuration(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }

// roundDuration keeps three significant digits, enough to read.
func roundDuration(d time.Duration) time.Duration {
	for _, unit := range []time.Duration{time.Second, time.Millisecond, time.Microsecond} {
		if d >= unit {
			return d.Round(unit / 100)
		}
	}
	return d
}
