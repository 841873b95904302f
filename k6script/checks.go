package k6script

import (
	"sync"
	"sync/atomic"
)

// Checks counts every check's passes and fails, in the order the checks
// were first seen (k6's per-check ✓/✗ lines and its checks rate).
type Checks struct {
	mu    sync.Mutex
	byKey map[checkKey]*checkCount
	order []*checkCount
}

// checkKey names a check: its group path and its name.
type checkKey struct{ group, name string }

type checkCount struct {
	name         string
	group        string
	pass, failed atomic.Int64
}

// CheckResult is one check's totals.
type CheckResult struct {
	Name   string `json:"name"`
	Group  string `json:"group,omitempty"`
	Passes int64  `json:"passes"`
	Fails  int64  `json:"fails"`
}

func newChecks() *Checks { return &Checks{byKey: map[checkKey]*checkCount{}} }

func (c *Checks) get(group, name string) *checkCount {
	key := checkKey{group, name}
	c.mu.Lock()
	defer c.mu.Unlock()
	cc, ok := c.byKey[key]
	if !ok {
		cc = &checkCount{name: name, group: group}
		c.byKey[key] = cc
		c.order = append(c.order, cc)
	}
	return cc
}

// Results are every check's totals in first-seen order.
func (c *Checks) Results() []CheckResult {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]CheckResult, 0, len(c.order))
	for _, cc := range c.order {
		out = append(out, CheckResult{Name: cc.name, Group: cc.group, Passes: cc.pass.Load(), Fails: cc.failed.Load()})
	}
	return out
}

// Rate is k6's checks metric: the fraction of check evaluations that
// passed, and how many there were.
func (c *Checks) Rate() (rate float64, total int64) {
	var pass int64
	for _, r := range c.Results() {
		pass += r.Passes
		total += r.Passes + r.Fails
	}
	if total == 0 {
		return 0, 0
	}
	return float64(pass) / float64(total), total
}

// maxVUChecks bounds a VU's cache of its checks' counters (vu.checkCount):
// a script that names its checks anew each iteration asks the script's
// table each time instead of growing the cache.
const maxVUChecks = 64

// checkCount is the script's counter of a check (Checks.get), kept by the
// VU so that its checks take the script's lock once each, not at every
// evaluation.
func (v *vu) checkCount(group, name string) *checkCount {
	key := checkKey{group, name}
	if cc, ok := v.checks[key]; ok {
		return cc
	}
	cc := v.s.Checks.get(group, name)
	if len(v.checks) < maxVUChecks {
		if v.checks == nil {
			v.checks = map[checkKey]*checkCount{}
		}
		v.checks[key] = cc
	}
	return cc
}
