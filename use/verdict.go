package use

import (
	"fmt"
	"strings"
)

// Thresholds says when a metric shows saturation: a metric's mean over a
// step above its level. Utilization metrics not listed saturate at
// DefaultUtilizationLimit or more; other metrics not listed are shown but
// never judged.
type Thresholds map[string]float64

// DefaultUtilizationLimit is the utilization at which a resource counts as
// saturated whatever its other signals: at 90 % busy, queues form.
const DefaultUtilizationLimit = 0.9

// lagWorthMentioning is the send-lag p99 above which a verdict that found
// no saturation still points at the generator.
const lagWorthMentioning = 0.001

// DefaultThresholds are knee's levels for the metrics its probes write.
func DefaultThresholds() Thresholds {
	return Thresholds{
		MetricThrottledPeriods:    0.05,  // throttled in more than a few % of CFS periods
		MetricOtherUtil:           0.5,   // processes that are neither the target nor knee use half the machine
		MetricOtherRunQueuePerCPU: 1,     // they have more runnable threads than there are CPUs
		MetricSchedP99:            0.01,  // goroutines waiting 10 ms to run
		MetricPoolWaitTime:        0.05,  // on average 1/20 of a request waiting for a connection
		MetricPoolTimeouts:        0,     // any request that gave up on the pool
		MetricDBQueueWaiting:      0.5,   // requests queued for the serialised database
		MetricDBBusyErrors:        0,     // any SQLITE_BUSY/LOCKED
		MetricPGWaitingFraction:   0.5,   // waits dominate the active backends
		MetricSendLagP99:          0.010, // knee itself 10 ms late sending
	}
}

// WithMappings adds the SaturatedAbove levels of custom mappings.
func (t Thresholds) WithMappings(ms []Mapping) Thresholds {
	out := Thresholds{}
	for k, v := range t {
		out[k] = v
	}
	for _, m := range ms {
		if m.SaturatedAbove != nil {
			out[m.Metric] = *m.SaturatedAbove
		}
	}
	return out
}

// Signal is one metric of a resource past its threshold.
type Signal struct {
	Resource  Resource
	Stat      Stat
	Threshold float64
	Severity  float64 // mean / threshold (1 + mean for a zero threshold): how far past it
}

// String is the signal as evidence: "throttled periods 19% (over 5%)".
func (s Signal) String() string {
	op := "over"
	if s.Stat.Kind == Utilization {
		op = "at or over"
	}
	return fmt.Sprintf("%s %s (%s %s)", label(s.Stat.Metric), FormatValue(s.Stat.Mean, s.Stat.Unit), op, FormatValue(s.Threshold, s.Stat.Unit))
}

// Signals lists the saturation signals of a row.
func (t Thresholds) Signals(r Row) []Signal {
	var out []Signal
	for _, c := range []Cell{r.Utilization, r.Saturation, r.Errors, {Stats: r.Info}} {
		for _, s := range c.Stats {
			if !s.Measured() {
				continue
			}
			limit, ok := t[s.Metric]
			switch {
			case s.Kind == Utilization && !ok:
				limit, ok = DefaultUtilizationLimit, true
				fallthrough
			case s.Kind == Utilization:
				if s.Mean < limit {
					continue
				}
			case !ok || s.Mean <= limit:
				continue
			}
			sev := 1 + s.Mean
			if limit > 0 {
				sev = s.Mean / limit
			}
			out = append(out, Signal{Resource: r.Resource, Stat: s, Threshold: limit, Severity: sev})
		}
	}
	return out
}

// Verdict is the USE scan's answer: the resource that saturated first as
// the offered load rose, its evidence, and why every other resource is not
// the bottleneck (or why it cannot be ruled out).
type Verdict struct {
	Bottleneck Resource // "" when nothing saturated
	Step       int      // index of the step where it first saturated; -1 when none
	StepLabel  string
	Evidence   []Signal
	// AlsoSaturated are other resources past a threshold at the same step:
	// often a consequence (a slow database fills the pool).
	AlsoSaturated []Signal
	// RuledOut are the measured resources under every threshold, each with
	// its headline values: "target CPU: 5.0%, max 6.5%".
	RuledOut []string
	// SetAside are resources past a threshold that are not the bottleneck,
	// each with why: a consequence of it, or contention from outside the
	// target (a busy machine and the generator beside it).
	SetAside []string
	// NotMeasured are the resources no probe measured, which therefore
	// cannot be ruled out: their names, with the probe's reason when it gave
	// one ("database (database unreachable: refused)").
	NotMeasured []string
	Summary     string
}

// Judge scans per-step tables in order of offered rate and names the first
// resource that saturates. When several saturate at the same step, the one
// furthest past its threshold is named and the others listed.
func Judge(steps []Table, t Thresholds) Verdict {
	if t == nil {
		t = DefaultThresholds()
	}
	v := Verdict{Step: -1}
	if len(steps) == 0 {
		v.Summary = "no steps to judge"
		return v
	}
	for i, step := range steps {
		var sigs []Signal
		for _, r := range step.Rows {
			sigs = append(sigs, t.Signals(r)...)
		}
		if len(sigs) == 0 {
			continue
		}
		worst := sigs[0]
		for _, s := range sigs[1:] {
			if s.Severity > worst.Severity {
				worst = s
			}
		}
		v.Bottleneck, v.Step, v.StepLabel = worst.Resource, i, stepName(step, i)
		for _, s := range sigs {
			if s.Resource == worst.Resource {
				v.Evidence = append(v.Evidence, s)
			} else {
				v.AlsoSaturated = append(v.AlsoSaturated, s)
			}
		}
		v.RuledOut, v.SetAside, v.NotMeasured = ruleOut(step, v.Bottleneck, t)
		v.Summary = fmt.Sprintf("bottleneck: %s, saturated first at %s: %s", v.Bottleneck.Title(), v.StepLabel, joinSignals(v.Evidence))
		if v.Bottleneck == Generator {
			v.Summary += "; knee itself fell behind, so this run measured the generator, not the target"
		}
		if m, ok := step.Row(Machine); ok && v.Bottleneck == Machine {
			if others := otherProcesses(m); others != "" {
				v.Summary += "; other work on the machine (neither the target nor knee): " + others
			}
		}
		return v
	}
	last := steps[len(steps)-1]
	v.RuledOut, v.SetAside, v.NotMeasured = ruleOut(last, "", t)
	v.Summary = fmt.Sprintf("no resource saturated in %d steps, up to %s: the target kept up", len(steps), stepName(last, len(steps)-1))
	if lag, ok := maxLag(steps); ok && lag > lagWorthMentioning {
		v.Summary += fmt.Sprintf("; but the generator's send lag p99 reached %s: check the generator before trusting the highest rates", FormatValue(lag, UnitSeconds))
	}
	return v
}

func stepName(t Table, i int) string {
	if t.Label != "" {
		return t.Label
	}
	return fmt.Sprintf("step %d", i+1)
}

func joinSignals(sigs []Signal) string {
	parts := make([]string, len(sigs))
	for i, s := range sigs {
		parts[i] = s.String()
	}
	return strings.Join(parts, ", ")
}

// ruleOut says for every resource but the bottleneck why it is not it:
// under its thresholds (ruled out), past one but more likely a consequence
// (set aside), or not measured (neither).
func ruleOut(step Table, bottleneck Resource, t Thresholds) (ruled, aside, unmeasured []string) {
	for _, r := range step.Rows {
		if r.Resource == bottleneck {
			continue
		}
		name := r.Resource.Title()
		if sigs := t.Signals(r); len(sigs) > 0 {
			aside = append(aside, fmt.Sprintf("%s: also saturated (%s), more likely a consequence", name, joinSignals(sigs)))
			continue
		}
		if !r.Measured() {
			unmeasured = append(unmeasured, unmeasuredName(r))
			continue
		}
		var parts []string
		for _, c := range []Cell{r.Utilization, r.Saturation} {
			if h, ok := c.Headline(); ok {
				// "target CPU: 5.0%", not "target CPU: CPU 5.0%": the
				// name already says what the value is of.
				text := c.Text
				if l := label(h.Metric); strings.HasSuffix(name, " "+l) {
					text = strings.TrimPrefix(text, l+" ")
				}
				parts = append(parts, text)
			}
		}
		if len(parts) == 0 {
			parts = append(parts, "only context measured")
		}
		ruled = append(ruled, fmt.Sprintf("%s: %s", name, strings.Join(parts, ", ")))
	}
	return ruled, aside, unmeasured
}

// unmeasuredName is a resource no probe measured, with the reason a probe
// gave when one did (a failed scrape, a refused connection); knee's own
// "no probe reads" goes without saying.
func unmeasuredName(r Row) string {
	why := strings.TrimPrefix(r.Utilization.Text, NotMeasuredText)
	why = strings.TrimPrefix(why, ": ")
	if why == "" || strings.HasPrefix(why, noProbeReads) {
		return r.Resource.Title()
	}
	return fmt.Sprintf("%s (%s)", r.Resource.Title(), why)
}

// maxLag is the highest mean send-lag p99 over the steps.
func maxLag(steps []Table) (float64, bool) {
	best, found := 0.0, false
	for _, st := range steps {
		r, ok := st.Row(Generator)
		if !ok {
			continue
		}
		for _, s := range r.Saturation.Stats {
			if s.Metric == MetricSendLagP99 && s.Measured() {
				best, found = max(best, s.Mean), true
			}
		}
	}
	return best, found
}
