package load

import (
	"testing"
	"time"

	"github.com/knee-dev/knee/load/schedule"
)

func TestSegmentSplitsVUs(t *testing.T) {
	seq, err := schedule.ParseSequence("0,1/3,2/3,1")
	if err != nil {
		t.Fatal(err)
	}
	var pre, peak, vus, rampPeak int
	for _, seg := range seq {
		sh, err := schedule.NewShare(seg, seq)
		if err != nil {
			t.Fatal(err)
		}
		open, err := Segment(ConstantArrivalRate{Rate: 100, Duration: time.Second, PreAllocatedVUs: 10, MaxVUs: 20}, sh)
		if err != nil {
			t.Fatal(err)
		}
		c := open.(ConstantArrivalRate)
		pre, peak = pre+c.PreAllocatedVUs, peak+c.PeakVUs()
		closed, err := Segment(ConstantVUs{VUs: 7, Duration: time.Second}, sh)
		if err != nil {
			t.Fatal(err)
		}
		if closed != nil {
			vus += closed.PeakVUs()
		}
		ramp, err := Segment(RampingVUs{Stages: []Stage{{Duration: time.Second, Target: 5}}}, sh)
		if err != nil {
			t.Fatal(err)
		}
		if ramp != nil {
			rampPeak += ramp.PeakVUs()
		}
	}
	// 10 → 4+3+3, 20 → 7+7+6, 7 → 3+2+2, 5 → 2+2+1: the parts add up to the whole.
	if pre != 10 || peak != 20 || vus != 7 || rampPeak != 5 {
		t.Errorf("split adds up to pre %d, max %d, vus %d, ramp %d; want 10, 20, 7, 5", pre, peak, vus, rampPeak)
	}
	// Two VUs over three runners: the third gets none and is told why.
	sh, _ := schedule.NewShare(seq[2], seq)
	if _, err := Segment(ConstantArrivalRate{Rate: 100, Duration: time.Second, PreAllocatedVUs: 2}, sh); err == nil {
		t.Error("a segment with 0 VUs for an arrival rate was accepted")
	}
	if e, err := Segment(ConstantVUs{VUs: 2, Duration: time.Second}, sh); e != nil || err != nil {
		t.Errorf("closed scenario with no VU for this segment: %v, %v; want nil, nil", e, err)
	}
}
