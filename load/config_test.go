package load

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestValidate(t *testing.T) {
	sec := time.Second
	tests := []struct {
		name string
		exec Executor
		want []string // substrings of each error, in order
	}{
		{"valid constant rate", ConstantArrivalRate{Rate: 10, Duration: sec, PreAllocatedVUs: 1}, nil},
		{"zero rate, no duration", ConstantArrivalRate{PreAllocatedVUs: 1}, []string{"rate is 0", "duration is 0s"}},
		{"negative rate, NaN", ConstantArrivalRate{Rate: math.NaN(), Duration: sec, PreAllocatedVUs: 1}, []string{"rate is NaN"}},
		{"maxVUs below preAllocatedVUs", ConstantArrivalRate{Rate: 1, Duration: sec, PreAllocatedVUs: 5, MaxVUs: 2},
			[]string{"maxVUs (2) is below preAllocatedVUs (5)"}},
		{"no VUs at all", ConstantArrivalRate{Rate: 1, Duration: sec}, []string{"both 0"}},
		{"negative pool and unit", ConstantArrivalRate{Rate: 1, Duration: sec, TimeUnit: -sec, PreAllocatedVUs: -1, MaxVUs: -1},
			[]string{"timeUnit is -1s", "preAllocatedVUs is -1", "maxVUs is -1"}},
		{"valid ramp", RampingArrivalRate{Stages: []Stage{{Duration: sec, Target: 5}}, MaxVUs: 3}, nil},
		{"ramp without stages", RampingArrivalRate{StartRate: 1, PreAllocatedVUs: 1}, []string{"no stages"}},
		{"stage without duration, negative target", RampingArrivalRate{StartRate: -1, PreAllocatedVUs: 1,
			Stages: []Stage{{Target: 1}, {Duration: sec, Target: -2}}},
			[]string{"startRate is -1", "stage 2 target -2"}},
		{"a jump, then a hold", RampingArrivalRate{StartRate: 1, PreAllocatedVUs: 1, Stages: []Stage{{Target: 10}, {Duration: sec, Target: 10}}}, nil},
		{"negative stage", RampingArrivalRate{StartRate: 1, PreAllocatedVUs: 1, Stages: []Stage{{Duration: -sec, Target: 10}, {Duration: sec, Target: 10}}},
			[]string{"stage 1 has duration -1s"}},
		{"only jumps", RampingVUs{Stages: []Stage{{Target: 2}, {Target: 0}}}, []string{"the stages last 0s in all"}},
		{"ramp that starts nothing", RampingArrivalRate{PreAllocatedVUs: 1, Stages: []Stage{{Duration: sec}}}, []string{"every rate is 0"}},
		{"valid constant VUs", ConstantVUs{VUs: 1, Duration: sec}, nil},
		{"constant VUs all wrong", ConstantVUs{VUs: 0, Think: -sec}, []string{"vus is 0", "duration is 0s", "think is -1s"}},
		{"valid ramping VUs", RampingVUs{Stages: []Stage{{Duration: sec, Target: 2}}}, nil},
		{"fractional VU target", RampingVUs{StartVUs: -1, Stages: []Stage{{Duration: sec, Target: 1.5}}},
			[]string{"startVUs is -1", "stage 1 target 1.5 is not a whole number"}},
		{"ramping VUs that never run", RampingVUs{Stages: []Stage{{Duration: sec}}}, []string{"every target is 0 VUs"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := tt.exec.Validate()
			if len(errs) != len(tt.want) {
				t.Fatalf("Validate() = %v, want %d errors", errs, len(tt.want))
			}
			for n, e := range errs {
				if !strings.Contains(e.Error(), tt.want[n]) || !strings.HasPrefix(e.Error(), tt.exec.Kind()+": ") {
					t.Errorf("error %d = %q, want %q after the kind", n, e, tt.want[n])
				}
			}
		})
	}
}

func TestDefaults(t *testing.T) {
	tests := []struct {
		exec  Executor
		peak  int
		span  time.Duration
		model string
	}{
		{ConstantArrivalRate{Rate: 1, Duration: time.Minute, PreAllocatedVUs: 7}, 7, time.Minute, ModelOpen}, // maxVUs = preAllocatedVUs
		{ConstantArrivalRate{Rate: 1, Duration: time.Minute, PreAllocatedVUs: 7, MaxVUs: 9}, 9, time.Minute, ModelOpen},
		{RampingArrivalRate{Stages: []Stage{{Duration: time.Second, Target: 1}, {Duration: 2 * time.Second}}, MaxVUs: 4}, 4, 3 * time.Second, ModelOpen},
		{ConstantVUs{VUs: 3, Duration: time.Second}, 3, time.Second, ModelClosed},
		{RampingVUs{StartVUs: 2, Stages: []Stage{{Duration: time.Second, Target: 5}, {Duration: time.Second, Target: 1}}}, 5, 2 * time.Second, ModelClosed},
	}
	for _, tt := range tests {
		if tt.exec.PeakVUs() != tt.peak || tt.exec.Span() != tt.span || tt.exec.Model() != tt.model {
			t.Errorf("%s %+v: peak %d span %v model %s, want %d %v %s", tt.exec.Kind(), tt.exec,
				tt.exec.PeakVUs(), tt.exec.Span(), tt.exec.Model(), tt.peak, tt.span, tt.model)
		}
	}
}

func TestNewRunnerRejects(t *testing.T) {
	ok := ConstantVUs{VUs: 1, Duration: time.Second}
	it := &target{}
	tests := []struct {
		name string
		scs  []Scenario
		rec  Sink
		want []string
	}{
		{"no scenarios, no recorder", nil, nil, []string{"no Recorder", "no scenarios"}},
		{"unnamed, duplicate, no iteration, no executor", []Scenario{
			{Executor: ok, Iteration: it},
			{Name: "a", Executor: ok, Iteration: it},
			{Name: "a", Executor: ok},
			{Name: "b", Iteration: it, StartTime: -1},
		}, &fakeRecorder{}, []string{"scenario 1 has no name", `"a" is used twice`, `"a": no Iteration`,
			`"b": startTime is -1ns`, `"b": no executor`}},
		{"executor errors carry the scenario", []Scenario{{Name: "x", Executor: ConstantVUs{}, Iteration: it}},
			&fakeRecorder{}, []string{`"x": constant-vus: vus is 0`, `"x": constant-vus: duration is 0s`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewGenerator(tt.scs, tt.rec, Options{})
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("err = %v, want ErrInvalid", err)
			}
			lines := strings.Split(err.Error(), "\n")
			if len(lines) != len(tt.want) {
				t.Fatalf("errors:\n%v\nwant %d", err, len(tt.want))
			}
			for n, w := range tt.want {
				if !strings.Contains(lines[n], w) {
					t.Errorf("error %d = %q, want it to contain %q", n, lines[n], w)
				}
			}
		})
	}
}

// The default maxVUs covers a 10 s stall at the peak rate, never under 1,000
// nor over 1,000,000; values worked by hand.
func TestDefaultMaxVUs(t *testing.T) {
	for _, tc := range []struct {
		peak float64
		want int
	}{
		{0, 1000}, {-5, 1000}, {math.NaN(), 1000}, {1, 1000}, {100, 1000}, {100.01, 1001},
		{500, 5000}, {2000, 20000}, {100_000, 1_000_000}, {1e9, 1_000_000}, {math.Inf(1), 1_000_000},
	} {
		if got := DefaultMaxVUs(tc.peak); got != tc.want {
			t.Errorf("DefaultMaxVUs(%v) = %d, want %d", tc.peak, got, tc.want)
		}
	}
}

func TestWithDefaults(t *testing.T) {
	sec := time.Second
	for _, tc := range []struct {
		in, want Executor
	}{
		{ConstantArrivalRate{Rate: 500, Duration: sec}, ConstantArrivalRate{Rate: 500, TimeUnit: sec, Duration: sec, PreAllocatedVUs: 50, MaxVUs: 5000}},
		{ConstantArrivalRate{Rate: 30, TimeUnit: time.Minute, Duration: sec, MaxVUs: 20}, ConstantArrivalRate{Rate: 30, TimeUnit: time.Minute, Duration: sec, PreAllocatedVUs: 20, MaxVUs: 20}},
		{ConstantArrivalRate{Rate: 1, Duration: sec, PreAllocatedVUs: 2000}, ConstantArrivalRate{Rate: 1, TimeUnit: sec, Duration: sec, PreAllocatedVUs: 2000, MaxVUs: 2000}},
		{ConstantArrivalRate{Rate: 1, Duration: sec, PreAllocatedVUs: -1}, ConstantArrivalRate{Rate: 1, TimeUnit: sec, Duration: sec, PreAllocatedVUs: -1}}, // left for Validate
		{RampingArrivalRate{StartRate: 700, Stages: []Stage{{Duration: sec, Target: 100}}}, RampingArrivalRate{StartRate: 700, TimeUnit: sec, Stages: []Stage{{Duration: sec, Target: 100}}, PreAllocatedVUs: 50, MaxVUs: 7000}},
		{RampingArrivalRate{TimeUnit: 2 * sec, Stages: []Stage{{Duration: sec, Target: 4000}}}, RampingArrivalRate{TimeUnit: 2 * sec, Stages: []Stage{{Duration: sec, Target: 4000}}, PreAllocatedVUs: 50, MaxVUs: 20000}},
	} {
		var got Executor
		switch e := tc.in.(type) {
		case ConstantArrivalRate:
			got = e.WithDefaults()
		case RampingArrivalRate:
			got = e.WithDefaults()
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%+v.WithDefaults() = %+v, want %+v", tc.in, got, tc.want)
		}
	}
}

// A peak rate above cpus × 1e6/s is refused before the start, saying the
// largest the machine can try; at the ceiling it passes. 1e4 per
// millisecond is 1e7/s.
func TestCheckPeakRate(t *testing.T) {
	for _, tc := range []struct {
		name string
		e    Executor
		cpus int
		want string // "" when accepted
	}{
		{"at the ceiling", ConstantArrivalRate{Rate: 2e6, Duration: time.Second}, 2, ""},
		{"above it", ConstantArrivalRate{Rate: 2.1e6, Duration: time.Second}, 2, "at most 2e+06/s (2 CPUs"},
		{"1e308", ConstantArrivalRate{Rate: 1e308, Duration: time.Second}, 4, "a peak rate of 1e+308/s is more than this machine can try: at most 4e+06/s"},
		{"per millisecond", ConstantArrivalRate{Rate: 1e4, TimeUnit: time.Millisecond, Duration: time.Second}, 8, "1e+07/s is more than"},
		{"a ramp's stage", RampingArrivalRate{StartRate: 1, Stages: []Stage{{Duration: time.Second, Target: 1e308}}}, 2, "at most 2e+06/s"},
		{"closed model", ConstantVUs{VUs: 10, Duration: time.Second}, 1, ""},
	} {
		err := CheckPeakRate(tc.e, tc.cpus)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v; want it accepted", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v; want an error with %q", tc.name, err, tc.want)
		}
	}
}
