package hostinfo

import (
	"context"
	"testing"
	"time"
)

// The probe beside a run waits the gap it was given: over a schedule of 10
// starts 20 ms apart it counts at most the 9 waits from one due to the next
// (the first, half a gap from the start, is not one; a due the thread was
// too late for is skipped), each of 20 ms, and it cannot have ended before
// its last counted due.
func TestFloorBesideWaitsTheGap(t *testing.T) {
	const gap = 20 * time.Millisecond
	start := time.Now()
	p := FloorBeside(context.Background(), start, every(gap, 10*gap), 50)
	if p == nil {
		t.Fatal("no probe at 50/s")
	}
	<-p.done // the schedule's end
	elapsed := time.Since(start)
	f := p.Stop()
	if f == nil || !f.Beside || f.Period != gap || f.PeriodMax != 0 {
		t.Fatalf("floor %+v: want one measured beside the run, every wait %v", f, gap)
	}
	if f.Waits < 1 || f.Waits > 9 {
		t.Errorf("%d waits of %v over 10 starts: want 1 to 9", f.Waits, gap)
	}
	if last := gap/2 + time.Duration(f.Waits)*gap; elapsed < last {
		t.Errorf("ended %v after the start, before its last counted due at %v", elapsed, last)
	}
	if f.P50MS < 0 || f.P99MS < f.P50MS {
		t.Errorf("floor %+v: want 0 <= p50 <= p99", f)
	}
}

// A probe whose gap is longer than the run ends with it, at once, with no
// wait and the gap it was to wait; its context ends it the same way. Above
// FloorBesideMaxRate, or with no rate, there is no probe.
func TestFloorBesideEnds(t *testing.T) {
	hour := every(time.Hour, 2*time.Hour)
	ctx, cancel := context.WithCancel(context.Background())
	for name, stop := range map[string]func(*FloorProbe){
		"Stop":    func(*FloorProbe) {},
		"context": func(*FloorProbe) { cancel() },
	} {
		p := FloorBeside(ctx, time.Now(), hour, 1.0/3600)
		if p == nil {
			t.Fatalf("%s: no probe at 1/h", name)
		}
		stop(p)
		if f := p.Stop(); f == nil || f.Waits != 0 || f.Period != time.Hour || !f.Beside {
			t.Errorf("%s: floor %+v: want no wait of 1h beside the run", name, f)
		}
	}
	for _, rate := range []float64{FloorBesideMaxRate * 1.01, 0, -1} {
		if p := FloorBeside(context.Background(), time.Now(), hour, rate); p != nil {
			p.Stop()
			t.Errorf("a probe at %v/s", rate)
		}
	}
}
