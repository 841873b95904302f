package runner

import (
	"reflect"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/knee-dev/knee/load"
	"github.com/knee-dev/knee/scenario"
)

// vusRecord keeps what the sampler records, with the (fake) time since
// the test's start.
type vusRecord struct {
	mu      sync.Mutex
	t0      time.Time
	at      []time.Duration
	samples [][2]int64
	taken   map[string]int64
}

func (r *vusRecord) RecordVUs(active, initialised int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.at = append(r.at, time.Since(r.t0))
	r.samples = append(r.samples, [2]int64{active, initialised})
}

func (r *vusRecord) VUsTaken(scenario string) int64 { return r.taken[scenario] }

func (r *vusRecord) CountVUsInitialised(func() int64) {}

func (r *vusRecord) TimeTestRun(func() time.Duration) {}

// k6 counts a closed scenario's VUs active from their start to their
// stop, an open one's only inside an iteration; its initialised VUs are
// the plan's (a closed scenario's peak, an open one's pre-allocated) plus
// the open model's VUs started beyond those. By hand for each row.
func TestVUsSample(t *testing.T) {
	closed := scenario.Scenario{Name: "browse", Executor: load.ConstantVUs{VUs: 3, Duration: time.Second}}
	ramp := scenario.Scenario{Name: "ramp", Executor: load.RampingVUs{Stages: []load.Stage{{Duration: time.Second, Target: 4}}}}
	open := scenario.Scenario{Name: "buy", Executor: load.ConstantArrivalRate{Rate: 5, TimeUnit: time.Second, Duration: time.Second, PreAllocatedVUs: 2, MaxVUs: 10}}
	for _, tt := range []struct {
		name  string
		scs   []scenario.Scenario
		stats []load.Stats // nil: before the load
		taken map[string]int64
		want  [2]int64
	}{
		{"before the load: none active, the plan's VUs initialised", []scenario.Scenario{closed, open}, nil, nil, [2]int64{0, 3 + 2}},
		// closed: its 3 VUs alive, 1 between iterations, still active
		{"closed: alive VUs", []scenario.Scenario{closed}, []load.Stats{{Scenario: "browse", VUs: 3, BusyVUs: 2}}, nil, [2]int64{3, 3}},
		// ramping-vus 0 to 4: 2 alive now, the peak of 4 initialised
		{"ramping: alive VUs, the peak initialised", []scenario.Scenario{ramp}, []load.Stats{{Scenario: "ramp", VUs: 2, BusyVUs: 2}}, nil, [2]int64{2, 4}},
		// open: 4 alive, 1 inside an iteration; 3 ids took a runtime, 1 beyond the 2 pre-allocated
		{"open: busy VUs; grown past the pre-allocated", []scenario.Scenario{open}, []load.Stats{{Scenario: "buy", VUs: 4, BusyVUs: 1}},
			map[string]int64{"buy": 3}, [2]int64{1, 3}},
		{"open: fewer taken than pre-allocated", []scenario.Scenario{open}, []load.Stats{{Scenario: "buy", VUs: 2, BusyVUs: 2}},
			map[string]int64{"buy": 1}, [2]int64{2, 2}},
		{"both at once: summed", []scenario.Scenario{closed, open},
			[]load.Stats{{Scenario: "browse", VUs: 3, BusyVUs: 3}, {Scenario: "buy", VUs: 5, BusyVUs: 4}},
			map[string]int64{"buy": 5}, [2]int64{3 + 4, 3 + 5}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			v := &vusSampler{to: &vusRecord{taken: tt.taken}, scs: tt.scs}
			if tt.stats != nil {
				v.attach(func() []load.Stats { return tt.stats })
			}
			if a, i := v.sample(); [2]int64{a, i} != tt.want {
				t.Errorf("active, initialised = %d, %d; want %v", a, i, tt.want)
			}
		})
	}
}

// The samples fall every second of the test's own clock, which stands
// still while paused, as k6's ticker runs from its start to teardown's
// end and knee's environment note is no part of k6's test. By hand:
// running 0-2.5 s (samples at 1 and 2; 0.5 s to the next), paused 10 s,
// running again from 12.5 s: samples at 13 and 14; stopped at 14.2 s.
// A pause or resume while already so changes nothing. Its running time,
// the test's duration, is 2.5 + 1.7 s.
func TestVUsClockPauses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &vusRecord{t0: time.Now()}
		v := &vusSampler{to: rec, scs: []scenario.Scenario{{Name: "s", Executor: load.ConstantVUs{VUs: 2, Duration: time.Second}}}}
		c := v.start(time.Second)
		time.Sleep(2500 * time.Millisecond)
		c.pause()
		c.pause()
		time.Sleep(10 * time.Second)
		c.resume()
		c.resume()
		time.Sleep(1700 * time.Millisecond)
		c.stop()
		c.stop()
		c.pause() // after the stop: returns at once
		c.resume()
		time.Sleep(5 * time.Second)
		if got, want := c.elapsed(), 2500*time.Millisecond+1700*time.Millisecond; got != want {
			t.Errorf("elapsed %v; want the running time %v", got, want)
		}
		want := []time.Duration{time.Second, 2 * time.Second, 13 * time.Second, 14 * time.Second}
		if !reflect.DeepEqual(rec.at, want) {
			t.Errorf("samples at %v; want %v", rec.at, want)
		}
		for _, sm := range rec.samples {
			if sm != [2]int64{0, 2} {
				t.Errorf("sample %v; want 0 active (no load attached), 2 initialised", sm)
			}
		}
	})
}
