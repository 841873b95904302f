package scenario

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/knee-dev/knee/load"
)

// A scenario file and the flags that say the same thing build the same
// executor: one set of defaults (load's WithDefaults), applied the same way.
// The values are worked by hand: preAllocatedVUs 50 (or maxVUs if lower);
// maxVUs max(1000, ⌈peak/s × 10 s⌉), at least preAllocatedVUs.
func TestFileAndFlagsShareDefaults(t *testing.T) {
	const url = "http://127.0.0.1:5080/"
	tests := []struct {
		name  string
		yaml  string // the executor's keys
		flags Flags
		want  load.Executor
	}{
		{"arrival rate, no pool given", "executor: constant-arrival-rate, rate: 500, duration: 25s",
			Flags{Rate: 500, Duration: 25 * time.Second},
			load.ConstantArrivalRate{Rate: 500, TimeUnit: time.Second, Duration: 25 * time.Second, PreAllocatedVUs: 50, MaxVUs: 5000}},
		{"low rate keeps the floor", "executor: constant-arrival-rate, rate: 20, duration: 5s",
			Flags{Rate: 20, Duration: 5 * time.Second},
			load.ConstantArrivalRate{Rate: 20, TimeUnit: time.Second, Duration: 5 * time.Second, PreAllocatedVUs: 50, MaxVUs: 1000}},
		{"rate per minute", "executor: constant-arrival-rate, rate: 6000, timeUnit: 1m, duration: 5s",
			Flags{Rate: 6000, TimeUnit: time.Minute, Duration: 5 * time.Second},
			load.ConstantArrivalRate{Rate: 6000, TimeUnit: time.Minute, Duration: 5 * time.Second, PreAllocatedVUs: 50, MaxVUs: 1000}},
		{"timeUnit 0 is the default 1s", "executor: constant-arrival-rate, rate: 150.05, timeUnit: 0s, duration: 5s",
			Flags{Rate: 150.05, Duration: 5 * time.Second},
			load.ConstantArrivalRate{Rate: 150.05, TimeUnit: time.Second, Duration: 5 * time.Second, PreAllocatedVUs: 50, MaxVUs: 1501}},
		{"preAllocatedVUs only", "executor: constant-arrival-rate, rate: 10, duration: 5s, preAllocatedVUs: 1200",
			Flags{Rate: 10, Duration: 5 * time.Second, PreAllocatedVUs: 1200},
			load.ConstantArrivalRate{Rate: 10, TimeUnit: time.Second, Duration: 5 * time.Second, PreAllocatedVUs: 1200, MaxVUs: 1200}},
		{"maxVUs only", "executor: constant-arrival-rate, rate: 10, duration: 5s, maxVUs: 8",
			Flags{Rate: 10, Duration: 5 * time.Second, MaxVUs: 8},
			load.ConstantArrivalRate{Rate: 10, TimeUnit: time.Second, Duration: 5 * time.Second, PreAllocatedVUs: 8, MaxVUs: 8}},
		{"ramp: the peak stage sizes the pool", "executor: ramping-arrival-rate, startRate: 10, stages: [{duration: 5s, target: 300}, {duration: 5s, target: 0}]",
			Flags{StartRate: 10, Stages: "5s:300,5s:0"},
			load.RampingArrivalRate{StartRate: 10, TimeUnit: time.Second, PreAllocatedVUs: 50, MaxVUs: 3000,
				Stages: []load.Stage{{Duration: 5 * time.Second, Target: 300}, {Duration: 5 * time.Second, Target: 0}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file, err := Parse("s.yaml", []byte("scenarios:\n  default: {"+tt.yaml+", requests: [{url: '"+url+"'}]}\n"))
			if err != nil {
				t.Fatalf("file: %v", err)
			}
			tt.flags.URL = url
			flags, err := FromFlags(tt.flags)
			if err != nil {
				t.Fatalf("flags: %v", err)
			}
			if got := file.Scenarios[0].Executor; !reflect.DeepEqual(got, tt.want) {
				t.Errorf("file:  %+v\nwant   %+v", got, tt.want)
			}
			if got := flags.Scenarios[0].Executor; !reflect.DeepEqual(got, tt.want) {
				t.Errorf("flags: %+v\nwant   %+v", got, tt.want)
			}
		})
	}
}

// Validation is load's, with file and line added: the same problem gives the
// same words from a file and from flags, and load.Validate's own.
func TestValidationIsLoads(t *testing.T) {
	ex := load.ConstantArrivalRate{Rate: 10, Duration: -time.Second, PreAllocatedVUs: 1}
	var want string
	for _, err := range ex.Validate() {
		want = strings.TrimPrefix(err.Error(), ex.Kind()+": ")
	}
	if want == "" {
		t.Fatal("load.Validate found nothing")
	}
	_, ferr := Parse("s.yaml", []byte("scenarios:\n  a:\n    executor: constant-arrival-rate\n    rate: 10\n    duration: -1s\n    requests: [{url: 'http://h/'}]\n"))
	_, gerr := FromFlags(Flags{URL: "http://h/", Rate: 10, Duration: -time.Second})
	if ferr == nil || ferr.Error() != "s.yaml:5:5: scenarios.a.duration: "+want {
		t.Errorf("file: %v\nwant s.yaml:5:5: scenarios.a.duration: %s", ferr, want)
	}
	if gerr == nil || gerr.Error() != "--duration: "+want {
		t.Errorf("flags: %v\nwant --duration: %s", gerr, want)
	}
}
