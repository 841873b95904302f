package analyze_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/knee-dev/knee/analyze"
	"github.com/knee-dev/knee/load/schedule"
	"github.com/knee-dev/knee/rundir"
	"github.com/knee-dev/knee/scenario"
	"github.com/knee-dev/knee/use"
)

func TestValidatePlan(t *testing.T) {
	ok := analyze.StepPlan{Start: 100, Step: 100, Steps: 10, StepDuration: 20 * time.Second, Warmup: 6 * time.Second}
	for _, tc := range []struct {
		name string
		edit func(*analyze.StepPlan)
		want string // "" for valid
	}{
		{"the article's plan", func(*analyze.StepPlan) {}, ""},
		{"no warmup", func(p *analyze.StepPlan) { p.Warmup = 0 }, ""},
		{"flat steps", func(p *analyze.StepPlan) { p.Step = 0 }, ""},
		{"zero steps", func(p *analyze.StepPlan) { p.Steps = 0 }, "--steps 0"},
		{"negative steps", func(p *analyze.StepPlan) { p.Steps = -3 }, "--steps -3"},
		{"zero start", func(p *analyze.StepPlan) { p.Start = 0 }, "--start 0"},
		{"negative step", func(p *analyze.StepPlan) { p.Step = -10 }, "--step -10"},
		{"zero hold", func(p *analyze.StepPlan) { p.StepDuration = 0 }, "--step-duration 0s"},
		{"warmup as long as the step", func(p *analyze.StepPlan) { p.Warmup = 20 * time.Second }, "--warmup 20s"},
		{"negative warmup", func(p *analyze.StepPlan) { p.Warmup = -time.Second }, "--warmup -1s"},
		{"negative jump", func(p *analyze.StepPlan) { p.Jump = -time.Second }, "--jump -1s"},
	} {
		p := ok
		tc.edit(&p)
		errs := analyze.ValidatePlan(p)
		switch {
		case tc.want == "" && len(errs) > 0:
			t.Errorf("%s: %v, want valid", tc.name, errs)
		case tc.want != "" && (len(errs) != 1 || !strings.Contains(errs[0].Error(), tc.want)):
			t.Errorf("%s: %v, want one error naming %q", tc.name, errs, tc.want)
		}
	}
}

// A plan knee curve completes from the run is checked for what was given.
func TestValidatePartialPlan(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    analyze.StepPlan
		want string // "" for valid
	}{
		{"all from the run", analyze.StepPlan{Warmup: 6 * time.Second}, ""},
		{"all from the run, no warmup", analyze.StepPlan{}, ""},
		{"all from the run, negative warmup", analyze.StepPlan{Warmup: -time.Second}, "--warmup -1s"},
		{"count from the data", analyze.StepPlan{Start: 100, Step: 100, StepDuration: 8 * time.Second, Warmup: 2 * time.Second}, ""},
		{"count from the data, warmup too long", analyze.StepPlan{Start: 100, Step: 100, StepDuration: 8 * time.Second, Warmup: 8 * time.Second}, "--warmup 8s"},
		{"count from the data, no hold", analyze.StepPlan{Start: 100, Step: 100}, "--step-duration 0s"},
		{"steps without a start", analyze.StepPlan{Steps: 3, StepDuration: 10 * time.Second}, "--start 0"},
		{"whole", analyze.StepPlan{Start: 100, Step: 100, Steps: 3, StepDuration: 10 * time.Second, Jump: time.Second}, ""},
		{"negative steps", analyze.StepPlan{Start: 100, Steps: -1, StepDuration: 10 * time.Second}, "--steps -1"},
	} {
		errs := analyze.ValidatePartialPlan(tc.p)
		switch {
		case tc.want == "" && len(errs) > 0:
			t.Errorf("%s: %v, want valid", tc.name, errs)
		case tc.want != "" && (len(errs) != 1 || !strings.Contains(errs[0].Error(), tc.want)):
			t.Errorf("%s: %v, want one error naming %q", tc.name, errs, tc.want)
		}
	}
}

// analyze reads run.json without importing scenario or load: its names for
// the stepped executor and its jump must stay theirs.
func TestStepsNamesAgreeWithScenario(t *testing.T) {
	if analyze.DefaultJump != schedule.StepJump {
		t.Errorf("analyze.DefaultJump %v, schedule.StepJump %v", analyze.DefaultJump, schedule.StepJump)
	}
	r := metaRun(rampingMeta("s", "1s", "1s", 100, "5s", 100))
	r.Meta.Scenarios[0].Executor = scenario.RampingArrivalRate
	if _, ok := analyze.PlanFromMeta(r, ""); !ok {
		t.Errorf("PlanFromMeta does not read executor %q", scenario.RampingArrivalRate)
	}
}

func metaRun(scs ...rundir.Scenario) *rundir.Dir {
	return &rundir.Dir{Meta: rundir.Meta{Scenarios: scs}}
}

func rampingMeta(name, unit string, stages ...any) rundir.Scenario {
	var st []map[string]any
	for i := 0; i+1 < len(stages); i += 2 {
		st = append(st, map[string]any{"duration": stages[i], "target": stages[i+1]})
	}
	cfg, _ := json.Marshal(map[string]any{"executor": "ramping-arrival-rate", "timeUnit": unit, "stages": st})
	return rundir.Scenario{Name: name, Executor: "ramping-arrival-rate", Config: cfg}
}

func TestPlanFromMeta(t *testing.T) {
	article := rampingMeta("steps", "1s", "1s", 100, "20s", 100, "1s", 200, "20s", 200, "1s", 300, "20s", 300)
	for _, tc := range []struct {
		name     string
		r        *rundir.Dir
		scenario string
		want     analyze.StepPlan
		ok       bool
	}{
		{"the article's steps", metaRun(article), "", analyze.StepPlan{Start: 100, Step: 100, Steps: 3, StepDuration: 20 * time.Second, Jump: time.Second}, true},
		{"named", metaRun(article, rampingMeta("other", "1s", "1s", 5, "9s", 5)), "steps",
			analyze.StepPlan{Start: 100, Step: 100, Steps: 3, StepDuration: 20 * time.Second, Jump: time.Second, Scenario: "steps"}, true},
		// 6000 per minute is 100 per second.
		{"per minute", metaRun(rampingMeta("s", "1m", "1s", 6000, "10s", 6000, "1s", 12000, "10s", 12000)), "",
			analyze.StepPlan{Start: 100, Step: 100, Steps: 2, StepDuration: 10 * time.Second, Jump: time.Second}, true},
		{"one step", metaRun(rampingMeta("s", "1s", "1s", 50, "5s", 50)), "", analyze.StepPlan{Start: 50, Steps: 1, StepDuration: 5 * time.Second, Jump: time.Second}, true},
		{"two scenarios, none named", metaRun(article, rampingMeta("other", "1s", "1s", 5, "9s", 5)), "", analyze.StepPlan{}, false},
		{"uneven holds", metaRun(rampingMeta("s", "1s", "1s", 100, "20s", 100, "1s", 200, "10s", 200)), "", analyze.StepPlan{}, false},
		{"a 2 s jump", metaRun(rampingMeta("s", "1s", "2s", 100, "20s", 100)), "", analyze.StepPlan{}, false},
		{"a ramp, not a hold", metaRun(rampingMeta("s", "1s", "1s", 100, "20s", 150)), "", analyze.StepPlan{}, false},
		{"uneven rates", metaRun(rampingMeta("s", "1s", "1s", 100, "5s", 100, "1s", 200, "5s", 200, "1s", 250, "5s", 250)), "", analyze.StepPlan{}, false},
		{"odd stages", metaRun(rampingMeta("s", "1s", "1s", 100, "5s", 100, "1s", 200)), "", analyze.StepPlan{}, false},
		{"zero start", metaRun(rampingMeta("s", "1s", "1s", 0, "5s", 0)), "", analyze.StepPlan{}, false},
		{"constant rate", metaRun(rundir.Scenario{Name: "s", Executor: "constant-arrival-rate"}), "", analyze.StepPlan{}, false},
		{"no scenarios", metaRun(), "", analyze.StepPlan{}, false},
	} {
		got, ok := analyze.PlanFromMeta(tc.r, tc.scenario)
		if ok != tc.ok || got != tc.want {
			t.Errorf("%s: %+v %v, want %+v %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}

// A sample at t holds the rates of the second before it, so a step measured
// over [1 s, 2 s) reads the sample taken at 2 s: here the 20 % one.
func TestStepTablesReadTheNextSecond(t *testing.T) {
	var samples []use.Sample
	for i, v := range []float64{0.1, 0.2, 0.3} {
		samples = append(samples, use.Sample{At: time.Duration(i+1) * time.Second, Probe: "p", Readings: []use.Reading{
			{Resource: use.TargetCPU, Metric: use.MetricCPUUtilization, Kind: use.Utilization, Value: v, Unit: use.UnitFraction}}})
	}
	tabs := analyze.StepTables(samples, []analyze.Step{{Index: 0, OfferedRate: 100, From: time.Second, To: 2 * time.Second}})
	row, _ := tabs[0].Row(use.TargetCPU)
	s, ok := row.Utilization.Headline()
	if !ok || s.N != 1 || s.Mean != 0.2 || tabs[0].Label != "step 1: 100 req/s" {
		t.Errorf("step table %q: %+v, want the one sample of 20 %%", tabs[0].Label, s)
	}
}

// stepTable is one step's USE table from readings given as metric → value.
// PlanFromMeta reads run.json's executor settings, which may come from
// anywhere: whatever it accepts must be a plan Curve can use.
func FuzzPlanFromMeta(f *testing.F) {
	f.Add(`{"timeUnit":"1s","stages":[{"duration":"1s","target":100},{"duration":"20s","target":100},{"duration":"1s","target":200},{"duration":"20s","target":200}]}`)
	f.Add(`{"timeUnit":"1m","stages":[{"duration":"1s","target":6000},{"duration":"10s","target":6000}]}`)
	f.Add(`{"timeUnit":"-1s","stages":[{"duration":"1s","target":-5},{"duration":"1s","target":-5}]}`)
	f.Add(`{"stages":null}`)
	f.Fuzz(func(t *testing.T, cfg string) {
		r := metaRun(rundir.Scenario{Name: "s", Executor: "ramping-arrival-rate", Config: json.RawMessage(cfg)})
		p, ok := analyze.PlanFromMeta(r, "")
		if !ok {
			return
		}
		if p.Steps < 1 || p.StepDuration <= 0 || p.Jump != time.Second || p.Start <= 0 {
			t.Errorf("accepted %s as %+v", cfg, p)
		}
	})
}

// Only the flags given are checked: a run directory's own plan fills in
// the rest.
func TestValidateGivenPlan(t *testing.T) {
	for _, tc := range []struct {
		name  string
		p     analyze.StepPlan
		given analyze.PlanGiven
		want  string // "" for valid
	}{
		{"nothing given", analyze.StepPlan{Warmup: 6 * time.Second}, analyze.PlanGiven{}, ""},
		{"--start alone", analyze.StepPlan{Start: 100, Warmup: 6 * time.Second}, analyze.PlanGiven{Start: true}, ""},
		{"--start 0", analyze.StepPlan{Warmup: 6 * time.Second}, analyze.PlanGiven{Start: true}, "--start 0"},
		{"--step-duration alone, shorter than the default warmup", analyze.StepPlan{StepDuration: 5 * time.Second, Warmup: 6 * time.Second},
			analyze.PlanGiven{StepDuration: true}, ""},
		{"--warmup alone", analyze.StepPlan{Warmup: 10 * time.Second}, analyze.PlanGiven{Warmup: true}, ""},
		{"--warmup as long as --step-duration", analyze.StepPlan{StepDuration: 10 * time.Second, Warmup: 10 * time.Second},
			analyze.PlanGiven{StepDuration: true, Warmup: true}, "--warmup 10s"},
		{"negative --warmup", analyze.StepPlan{Warmup: -time.Second}, analyze.PlanGiven{Warmup: true}, "--warmup -1s"},
		{"--steps 0: from the data", analyze.StepPlan{Warmup: 6 * time.Second}, analyze.PlanGiven{Steps: true}, ""},
		{"--steps -1", analyze.StepPlan{Steps: -1, Warmup: 6 * time.Second}, analyze.PlanGiven{Steps: true}, "--steps -1"},
		{"--jump -1s", analyze.StepPlan{Jump: -time.Second, Warmup: 6 * time.Second}, analyze.PlanGiven{Jump: true}, "--jump -1s"},
		{"--step -5", analyze.StepPlan{Step: -5, Warmup: 6 * time.Second}, analyze.PlanGiven{Step: true}, "--step -5"},
	} {
		errs := analyze.ValidateGivenPlan(tc.p, tc.given)
		switch {
		case tc.want == "" && len(errs) > 0:
			t.Errorf("%s: %v, want valid", tc.name, errs)
		case tc.want != "" && (len(errs) != 1 || !strings.Contains(errs[0].Error(), tc.want)):
			t.Errorf("%s: %v, want one error naming %q", tc.name, errs, tc.want)
		}
	}
}
