package load

import (
	"fmt"
	"math"

	"github.com/knee-dev/knee/load/schedule"
)

// Segment returns e cut to one runner's share of a test split among
// runners (k6's execution segments): an arrival-rate executor starts only
// the share's iterations of the whole schedule, at their intended times;
// VUs, preAllocatedVUs and maxVUs (and ramping-vus targets) are split by
// the same rule, so the runners' parts add up to the whole.
//
// It returns nil and no error when the share gets nothing of e (a closed
// scenario whose VUs all go to other runners). e must be valid.
func Segment(e Executor, sh schedule.Share) (Executor, error) {
	if sh.IsWhole() {
		return e, nil
	}
	scale := func(n int) int { return int(sh.Scale(int64(n))) }
	switch c := e.(type) {
	case ConstantArrivalRate:
		c.MaxVUs, c.PreAllocatedVUs, c.Share = scale(c.PeakVUs()), scale(c.PreAllocatedVUs), sh
		if c.MaxVUs == 0 {
			return nil, fmt.Errorf("%w: %s: segment %s gets 0 of the %d VUs; raise maxVUs to at least the number of runners",
				ErrInvalid, c.Kind(), sh.Segment(), e.PeakVUs())
		}
		return c, nil
	case RampingArrivalRate:
		c.MaxVUs, c.PreAllocatedVUs, c.Share = scale(c.PeakVUs()), scale(c.PreAllocatedVUs), sh
		if c.MaxVUs == 0 {
			return nil, fmt.Errorf("%w: %s: segment %s gets 0 of the %d VUs; raise maxVUs to at least the number of runners",
				ErrInvalid, c.Kind(), sh.Segment(), e.PeakVUs())
		}
		return c, nil
	case ConstantVUs:
		if c.VUs = scale(c.VUs); c.VUs == 0 {
			return nil, nil
		}
		return c, nil
	case RampingVUs:
		c.StartVUs = scale(c.StartVUs)
		stages := make([]Stage, len(c.Stages))
		for i, st := range c.Stages {
			stages[i] = Stage{Duration: st.Duration, Target: float64(sh.Scale(int64(math.Round(st.Target))))}
		}
		c.Stages = stages
		if c.PeakVUs() == 0 {
			return nil, nil
		}
		return c, nil
	}
	return nil, fmt.Errorf("%w: executor %T cannot be segmented", ErrInvalid, e)
}
