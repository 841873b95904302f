package runner

import (
	"fmt"

	"github.com/knee-dev/knee/load"
	"github.com/knee-dev/knee/scenario"
)

// filesReserve is what knee keeps of the open-file limit for itself: the run
// directory, /proc readers, the dashboard, its own listeners.
const filesReserve = 100

// mostConnections is how many VUs the scenarios may have at once in all, each
// holding a connection: the arrival-rate executors' maxVUs, the others' peak.
func mostConnections(cfg *scenario.Config) int {
	n := 0
	for _, sc := range cfg.Scenarios {
		switch e := sc.Executor.(type) {
		case load.ConstantArrivalRate:
			n += max(e.MaxVUs, e.PreAllocatedVUs)
		case load.RampingArrivalRate:
			n += max(e.MaxVUs, e.PreAllocatedVUs)
		default:
			n += sc.Executor.PeakVUs()
		}
	}
	return n
}

// fileLimitNote warns, before the load starts, when the VUs the test may
// start exceed what the process may open (limit, RLIMIT_NOFILE; 0 when
// unknown): each VU holds a connection, so a stall that grows the pool past
// the limit turns into "too many open files" errors, and the closed
// connections' TIME_WAIT slows the next runs' connects. "" when it fits.
func fileLimitNote(cfg *scenario.Config, limit uint64) string {
	vus := mostConnections(cfg)
	if limit == 0 || uint64(vus)+filesReserve <= limit {
		return ""
	}
	fit := max(int(limit)-filesReserve, 1)
	return fmt.Sprintf("open-file limit %d is below the %d VUs this test may start (each holds a connection): "+
		"a stall that grows the pool past ~%d VUs fails with \"too many open files\"; "+
		"raise the limit (ulimit -n %d) or lower maxVUs (--max-vus %d)", limit, vus, fit, vus+filesReserve, fit)
}
