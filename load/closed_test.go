package load

import (
	"testing"
	"testing/synctest"
	"time"
)

func TestConstantVUs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// 3 VUs, 100 ms service, 50 ms think, 1 s: starts at 0, 150, ..., 900 ms = 7 each.
		tg := &target{service: 100 * ms}
		exec := ConstantVUs{VUs: 3, Duration: time.Second, Think: 50 * ms}
		o := runScenarios(t, t.Context(), Options{}, Scenario{Name: "c", Executor: exec, Iteration: tg})
		if o.err != nil {
			t.Fatal(o.err)
		}
		samples := o.rec.all()
		if len(samples) != 21 {
			t.Errorf("%d samples, want 21", len(samples))
		}
		for _, s := range samples {
			if s.Latency != 100*ms || s.Service != 100*ms || s.SendLag != 0 || s.Interval != 150*ms {
				t.Errorf("sample %+v: want latency = service = 100ms, interval 150ms", s)
			}
		}
		// The last iterations start at 900 ms and end at 1 s; the span ends then.
		if o.took != time.Second {
			t.Errorf("Run took %v, want 1s", o.took)
		}
		if o.rec.shards != 3 {
			t.Errorf("%d shards taken, want one per VU (3)", o.rec.shards)
		}
	})
}

func TestRampingVUsCounts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// 0 -> 4 over 4 s, hold 2 s, 4 -> 0 over 4 s: one VU more each second, then one fewer.
		tg := &target{service: 10 * ms}
		exec := RampingVUs{Stages: []Stage{{Duration: 4 * time.Second, Target: 4}, {Duration: 2 * time.Second, Target: 4},
			{Duration: 4 * time.Second, Target: 0}}, Think: 90 * ms}
		r, err := NewGenerator([]Scenario{{Name: "r", Executor: exec, Iteration: tg}}, &fakeRecorder{}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		// At 0.5 s, 1.5 s, ..., 9.5 s: up 1/s until 4 at 4 s, hold to 6 s, then 3 at 7 s, ..., 1 at 9 s.
		want := []int{0, 1, 2, 3, 4, 4, 4, 3, 2, 1}
		got := make([]int, len(want))
		done := make(chan error)
		go func() { done <- r.Run(t.Context()) }()
		time.Sleep(500 * ms)
		for n := range want {
			st := r.Stats()[0]
			got[n] = st.VUs
			if st.PeakVUs != 4 || st.Rate != 0 {
				t.Errorf("stats %+v: want peak 4, no offered rate", st)
			}
			time.Sleep(time.Second)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		for n := range want {
			if got[n] != want[n] {
				t.Errorf("VUs at %d.5 s = %d, want %d (all: %v)", n, got[n], want[n], got)
				break
			}
		}
	})
}
