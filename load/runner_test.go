package load

import (
	"context"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"
)

func TestStatsOfferedRateAndMixedScenarios(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tg := &target{service: ms}
		open := Scenario{Name: "open", Iteration: tg,
			Executor: RampingArrivalRate{Stages: []Stage{{Duration: 10 * time.Second, Target: 10}}, PreAllocatedVUs: 2}}
		closed := Scenario{Name: "closed", StartTime: 2 * time.Second, Iteration: tg,
			Executor: ConstantVUs{VUs: 2, Duration: 3 * time.Second, Think: 99 * ms}}
		rec := &fakeRecorder{}
		r, err := NewGenerator([]Scenario{open, closed}, rec, Options{})
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error)
		go func() { done <- r.Run(t.Context()) }()
		time.Sleep(2500 * ms)
		st := r.Stats()
		// 0 -> 10/s over 10 s offers 2.5/s at 2.5 s; the closed scenario offers no rate.
		if st[0].Scenario != "open" || st[0].Rate != 2.5 || st[1].Scenario != "closed" || st[1].Rate != 0 || st[1].VUs != 2 {
			t.Errorf("stats at 2.5 s: %+v", st)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		counts := map[string]int{}
		for _, s := range rec.all() {
			counts[s.Scenario]++
		}
		// Open: N(10 s) = 50. Closed: 2 VUs × 30 iterations of 100 ms in 3 s.
		if counts["open"] != 50 || counts["closed"] != 60 {
			t.Errorf("samples per scenario %v, want open 50, closed 60", counts)
		}
	})
}

func TestIterationContextKeepsValues(t *testing.T) {
	type key struct{}
	ctx := context.WithValue(t.Context(), key{}, "v")
	var seen atomic.Value
	it := iterFunc(func(ctx context.Context, vu, iter uint64) Result {
		seen.Store(ctx.Value(key{}))
		return Result{}
	})
	err := Generate(ctx, []Scenario{{Name: "s", Iteration: it, Executor: ConstantArrivalRate{Rate: 1000, Duration: ms, PreAllocatedVUs: 1}}},
		&fakeRecorder{}, Options{})
	if err != nil || seen.Load() != "v" {
		t.Errorf("err %v, value %v: want the run context's values in the iteration's", err, seen.Load())
	}
}

type iterFunc func(ctx context.Context, vu, iter uint64) Result

func (f iterFunc) Do(ctx context.Context, vu, iter uint64) Result { return f(ctx, vu, iter) }

func TestImportsStayInLane(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/knee-dev/knee/load").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, banned := range []string{"/knee/record", "/knee/run", "/knee/analyze", "/knee/report", "net/http", "hdrhistogram"} {
			if strings.Contains(dep, banned) {
				t.Errorf("load depends on %s", dep)
			}
		}
	}
	out, err = exec.Command("go", "list", "-deps", "github.com/knee-dev/knee/load/schedule").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.Contains(dep, ".") && !strings.HasPrefix(dep, "github.com/knee-dev/knee/load/schedule") {
			t.Errorf("load/schedule depends on %s, beyond the standard library", dep)
		}
	}
}

// BenchmarkScheduler measures what the open model costs per iteration:
// schedule, hand-off to a VU, a no-op iteration and its sample.
//
// past-due: the rate is so high that every iteration is past due and the
// scheduler never sleeps; ns/op is the scheduler's own cost per iteration
// (most are dropped, as VUs cannot wake that fast). 20k/s: a real pace;
// cpu-ns/op is the process CPU per iteration and lag-ns the mean send lag.
func BenchmarkScheduler(b *testing.B) {
	it := iterFunc(func(context.Context, uint64, uint64) Result { return Result{Sent: time.Now()} })
	b.Run("past-due", func(b *testing.B) {
		rec := &countRecorder{}
		exec := ConstantArrivalRate{Rate: 1e9, Duration: time.Duration(b.N), PreAllocatedVUs: 64}
		b.ResetTimer()
		if err := Generate(b.Context(), []Scenario{{Name: "b", Executor: exec, Iteration: it}}, rec, Options{}); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(rec.dropped.Load())/float64(b.N), "dropped/op")
	})
	b.Run("20k/s", func(b *testing.B) {
		rec := &countRecorder{}
		exec := ConstantArrivalRate{Rate: 20000, Duration: time.Duration(b.N) * 50 * time.Microsecond, PreAllocatedVUs: 64, MaxVUs: 1000}
		cpu0 := cpuTime(b)
		b.ResetTimer()
		if err := Generate(b.Context(), []Scenario{{Name: "b", Executor: exec, Iteration: it}}, rec, Options{}); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		b.ReportMetric(float64(cpuTime(b)-cpu0)/float64(b.N), "cpu-ns/op")
		b.ReportMetric(float64(rec.lag.Load())/float64(max(rec.samples.Load(), 1)), "lag-ns")
		b.ReportMetric(float64(rec.dropped.Load())/float64(b.N), "dropped/op")
	})
}

func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Skip(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

type countRecorder struct{ dropped, samples, lag atomic.Int64 }

func (c *countRecorder) Shard() ShardSink          { return countShard{c} }
func (c *countRecorder) Dropped(_ string, n int64) { c.dropped.Add(n) }

type countShard struct{ c *countRecorder }

func (s countShard) Record(smp Sample) {
	s.c.samples.Add(1)
	s.c.lag.Add(int64(smp.SendLag))
}
