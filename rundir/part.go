package rundir

import "time"

// Part is what a runner of a test split among runners records (knee run
// --execution-segment): which share it ran, the whole test's plan, and the
// wall clock it started on, so knee merge can check and align the parts.
type Part struct {
	TestID      string        `json:"test_id"`  // the same for every part of one test
	Segment     string        `json:"segment"`  // e.g. "1/4:1/2"
	Sequence    string        `json:"sequence"` // every runner's segments, e.g. "0,1/4,1/2,3/4,1"
	Runner      string        `json:"runner,omitempty"`
	Plan        []Scenario    `json:"plan"`                      // the whole test's scenarios, before the split
	Thresholds  []string      `json:"thresholds,omitempty"`      // the test's thresholds: judged on the merge, not on a part
	Interval    time.Duration `json:"interval_ns"`               // --interval, the histograms' nominal length
	T0          time.Time     `json:"t0"`                        // wall clock at the schedule's start
	StartAt     time.Time     `json:"start_at"`                  // --start-at, or the coordinator's clock at its release; zero when neither
	StartOffset time.Duration `json:"start_offset_ns,omitempty"` // T0 − StartAt
	ClockSync   string        `json:"clock_sync,omitempty"`      // what the kernel says of the clock (adjtimex)
	ClockSynced bool          `json:"clock_synced"`
	ClockMaxErr time.Duration `json:"clock_max_error_ns,omitempty"` // the kernel's bound on the clock's error
	ClockOffset time.Duration `json:"clock_offset_ns,omitempty"`    // the offset the time daemon last measured (adjtimex)
}

// Label names the part among its test's runners: its runner name, or else
// its segment, which no other part of the test has.
func (p *Part) Label() string {
	if p.Runner != "" {
		return p.Runner
	}
	return p.Segment
}

// MergedPart is one part kept in a merge: where it came from and its environment note.
type MergedPart struct {
	Dir   string      `json:"dir"`
	ID    string      `json:"id"`
	Part  Part        `json:"part"`
	Env   Environment `json:"environment"`
	Notes []string    `json:"notes,omitempty"`
}
