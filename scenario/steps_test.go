package scenario_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/knee-dev/knee/load"
	"github.com/knee-dev/knee/scenario"
)

// The executor follows schedule.Steps: a 1 s jump then the hold, per step,
// starting at the first step's rate.
func TestStepsExecutor(t *testing.T) {
	e := scenario.Steps{Start: 100, Step: 50, Count: 2, Hold: 20 * time.Second}.Executor()
	if e.StartRate != 100 || e.TimeUnit != time.Second || e.PreAllocatedVUs != 50 || e.MaxVUs != 2000 {
		t.Errorf("executor %+v", e)
	}
	want := []load.Stage{{Duration: time.Second, Target: 100}, {Duration: 20 * time.Second, Target: 100},
		{Duration: time.Second, Target: 150}, {Duration: 20 * time.Second, Target: 150}}
	if !reflect.DeepEqual(e.Stages, want) {
		t.Errorf("stages %+v, want %+v", e.Stages, want)
	}
}

// FromStepFlags builds the stepped executor itself from the request flags:
// the scenario it returns runs exactly Steps.Executor, with rates that are
// not round in decimal kept to the last bit.
func TestFromStepFlags(t *testing.T) {
	s := scenario.Steps{Start: 100.1, Step: 33.3, Count: 3, Hold: 1500 * time.Millisecond, PreAllocatedVUs: 7, MaxVUs: 70}
	cfg, err := scenario.FromStepFlags(scenario.Flags{URL: "http://127.0.0.1:1/{isbn}", Vars: []string{"isbn=1,2"}, Name: "book"}, s)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Scenarios) != 1 || cfg.Scenarios[0].Name != scenario.StepsScenario {
		t.Fatalf("scenarios %+v", cfg.Scenarios)
	}
	sc := cfg.Scenarios[0]
	got, ok := sc.Executor.(load.RampingArrivalRate)
	if !ok || !reflect.DeepEqual(got, s.Executor()) {
		t.Errorf("executor %#v, want %#v", sc.Executor, s.Executor())
	}
	if sc.Requests[0].Name != "book" || len(cfg.Vars["isbn"]) != 2 || sc.GracefulStop != scenario.DefaultGracefulStop {
		t.Errorf("request flags lost: %+v vars %v", sc, cfg.Vars)
	}
	for _, tc := range []struct {
		name string
		f    scenario.Flags
		s    scenario.Steps
		want string
	}{
		{"an executor flag", scenario.Flags{URL: "http://127.0.0.1:1/", Rate: 5}, s, "sets its own load"},
		{"no steps", scenario.Flags{URL: "http://127.0.0.1:1/"}, scenario.Steps{Start: 1, Hold: time.Second}, "at least one step"},
		{"no URL", scenario.Flags{}, s, "--url"},
	} {
		if _, err := scenario.FromStepFlags(tc.f, tc.s); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error naming %q", tc.name, err, tc.want)
		}
	}
}
