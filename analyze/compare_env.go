package analyze

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/knee-dev/knee/rundir"
)

// MaxCompareSpan is how far apart compared runs may start before Compare
// warns that the machine, data or neighbours may have changed in between.
const MaxCompareSpan = 24 * time.Hour

// environmentWarnings lists every environment note that differs between runs.
func environmentWarnings(rs []*rundir.Dir) []string {
	aspects := []struct {
		what string
		of   func(rundir.Environment) string
	}{
		{"hosts", func(e rundir.Environment) string { return e.Host }},
		{"CPUs", func(e rundir.Environment) string { return fmt.Sprintf("%d × %s", e.CPUs, e.CPUModel) }},
		{"target limits", func(e rundir.Environment) string { return limitsLabel(e.TargetLimits) }},
		{"knee versions", func(e rundir.Environment) string { return e.KneeVersion }},
		{"load averages before the run", loadBand},
	}
	var w []string
	for _, a := range aspects {
		vals := make([]string, len(rs))
		for i, r := range rs {
			vals[i] = a.of(r.Meta.Env)
		}
		if d := distinct(vals); len(d) > 1 {
			w = append(w, fmt.Sprintf("runs differ in %s: %s; the difference may come from there",
				a.what, strings.Join(d, " vs ")))
		}
	}
	if first, last, ok := startedRange(rs); ok && last.Sub(first) > MaxCompareSpan {
		w = append(w, fmt.Sprintf("runs started %s apart (more than %s): machine, data or neighbours may have changed",
			last.Sub(first).Round(time.Hour), MaxCompareSpan))
	}
	return w
}

// loadBand puts the 1-minute load average per CPU before the run into a band,
// so that a quiet machine and a busy one are told apart but noise is not.
func loadBand(e rundir.Environment) string {
	perCPU := e.LoadBefore[0]
	if e.CPUs > 0 {
		perCPU /= float64(e.CPUs)
	}
	switch {
	case perCPU < 0.25:
		return "idle (<0.25/CPU)"
	case perCPU < 0.75:
		return "busy (0.25-0.75/CPU)"
	}
	return "loaded (>=0.75/CPU)"
}

// limitsLabel prints target limits in a stable order.
func limitsLabel(m map[string]string) string {
	if len(m) == 0 {
		return "none"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + m[k]
	}
	return strings.Join(parts, ",")
}

// distinct lists the different values in first-seen order, empty ones shown as "unknown".
func distinct(vals []string) []string {
	seen := make(map[string]bool)
	var out []string
	for _, v := range vals {
		if v == "" {
			v = "unknown"
		}
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

// startedRange is the earliest and latest known start time.
func startedRange(rs []*rundir.Dir) (first, last time.Time, ok bool) {
	for _, r := range rs {
		t := r.Meta.Started
		if t.IsZero() {
			continue
		}
		if !ok || t.Before(first) {
			first = t
		}
		if !ok || t.After(last) {
			last = t
		}
		ok = true
	}
	return first, last, ok
}
