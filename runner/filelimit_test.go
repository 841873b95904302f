package runner

import (
	"strings"
	"testing"
	"time"

	"github.com/knee-dev/knee/load"
	"github.com/knee-dev/knee/scenario"
)

// The VUs a test may start are counted against the open-file limit: every
// arrival-rate scenario's maxVUs plus every closed scenario's peak, and 100
// files kept for knee itself.
func TestFileLimitNote(t *testing.T) {
	cfg := func(exs ...load.Executor) *scenario.Config {
		c := &scenario.Config{}
		for _, ex := range exs {
			c.Scenarios = append(c.Scenarios, scenario.Scenario{Name: "s", Executor: ex})
		}
		return c
	}
	open := func(maxVUs int) load.Executor {
		return load.ConstantArrivalRate{Rate: 20000, TimeUnit: time.Second, Duration: time.Second, PreAllocatedVUs: 50, MaxVUs: maxVUs}
	}
	closed := load.ConstantVUs{VUs: 400, Duration: time.Second}
	tests := []struct {
		cfg   *scenario.Config
		limit uint64
		want  []string // "" parts: no note
	}{
		{cfg(open(200000)), 20000, []string{"open-file limit 20000", "200000 VUs", "~19900 VUs", "ulimit -n 200100", "--max-vus 19900"}},
		{cfg(open(19600), closed), 20000, []string{"20000 VUs this test may start"}},
		{cfg(open(19500), closed), 20000, nil}, // 19,900 + 100 fit exactly
		{cfg(open(200000)), 0, nil},            // limit unknown
		{cfg(closed), 400, []string{"~300 VUs"}},
	}
	for i, tt := range tests {
		got := fileLimitNote(tt.cfg, tt.limit)
		if tt.want == nil {
			if got != "" {
				t.Errorf("case %d: note %q, want none", i, got)
			}
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(got, w) {
				t.Errorf("case %d: note %q lacks %q", i, got, w)
			}
		}
	}
}
