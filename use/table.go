package use

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// Stat is one metric of a resource summarised over the samples of a time
// range: the mean and max of the samples that measured it. N == 0 means
// none did, and NotMeasured says why (the last reason given).
type Stat struct {
	Metric      string
	Kind        Kind
	Unit        string
	Mean, Max   float64
	N           int
	NotMeasured string
}

// Measured reports whether any sample measured the metric.
func (s Stat) Measured() bool { return s.N > 0 }

// Cell answers one USE question for one resource: every metric of that
// kind, the first measured one as its headline Value, and Text for people.
type Cell struct {
	Stats []Stat
	Text  string
}

// Headline is the cell's first measured metric, and false when none is.
func (c Cell) Headline() (Stat, bool) {
	for _, s := range c.Stats {
		if s.Measured() {
			return s, true
		}
	}
	return Stat{}, false
}

// Row is one resource of a USE table.
type Row struct {
	Resource                        Resource
	Utilization, Saturation, Errors Cell
	Info                            []Stat // context: sizes, rates, wait profiles
}

// Measured reports whether any metric of the row was measured.
func (r Row) Measured() bool {
	for _, c := range []Cell{r.Utilization, r.Saturation, r.Errors, {Stats: r.Info}} {
		if _, ok := c.Headline(); ok {
			return true
		}
	}
	return false
}

// Table is the USE table of a time range [From, To): one row per resource
// in Resources() order, then any other resource a custom mapping named.
type Table struct {
	Label    string // what the range is, e.g. "step 3: 400 req/s"; set by the caller
	From, To time.Duration
	Rows     []Row
	Problems []string // probes that failed as a whole, with their last error
}

// Row returns the row of res, and false when the table has none.
func (t Table) Row(res Resource) (Row, bool) {
	for _, r := range t.Rows {
		if r.Resource == res {
			return r, true
		}
	}
	return Row{}, false
}

// Summarize builds the USE table of the samples taken in [from, to); to <= 0
// means no upper bound. Every resource of Resources() gets a row, measured
// or not.
func Summarize(samples []Sample, from, to time.Duration) Table {
	t := Table{From: from, To: to}
	stats := map[Resource][]*Stat{}
	var extra []Resource
	failures := map[string]int{}
	lastErr := map[string]string{}
	var failed []string
	for _, s := range samples {
		if s.At < from || (to > 0 && s.At >= to) {
			continue
		}
		if s.Error != "" {
			if failures[s.Probe] == 0 {
				failed = append(failed, s.Probe)
			}
			failures[s.Probe]++
			lastErr[s.Probe] = s.Error
		}
		for _, r := range s.Readings {
			if _, ok := stats[r.Resource]; !ok && !isStandard(r.Resource) {
				extra = append(extra, r.Resource)
			}
			stats[r.Resource] = addReading(stats[r.Resource], r)
		}
	}
	for _, st := range stats {
		for _, s := range st {
			if s.N > 0 {
				s.Mean /= float64(s.N)
			}
		}
	}
	for _, res := range append(Resources(), extra...) {
		t.Rows = append(t.Rows, buildRow(res, stats[res]))
	}
	for _, p := range failed {
		t.Problems = append(t.Problems, fmt.Sprintf("probe %s failed in %d samples: %s", p, failures[p], lastErr[p]))
	}
	return t
}

func isStandard(res Resource) bool {
	for _, r := range Resources() {
		if r == res {
			return true
		}
	}
	return false
}

// addReading folds r into the resource's stats; Mean holds the sum until
// Summarize divides it.
func addReading(st []*Stat, r Reading) []*Stat {
	var s *Stat
	for _, x := range st {
		if x.Metric == r.Metric {
			s = x
		}
	}
	if s == nil {
		s = &Stat{Metric: r.Metric, Kind: r.Kind, Unit: r.Unit, Max: math.Inf(-1)}
		st = append(st, s)
	}
	if !r.Measured() {
		s.NotMeasured = r.NotMeasured
		if s.N == 0 {
			s.Max = 0
		}
		return st
	}
	if s.N == 0 {
		s.Max = r.Value
	}
	s.N++
	s.Mean += r.Value
	s.Max = max(s.Max, r.Value)
	return st
}

func buildRow(res Resource, st []*Stat) Row {
	row := Row{Resource: res}
	for _, s := range st {
		switch s.Kind {
		case Utilization:
			row.Utilization.Stats = append(row.Utilization.Stats, *s)
		case Saturation:
			row.Saturation.Stats = append(row.Saturation.Stats, *s)
		case Errors:
			row.Errors.Stats = append(row.Errors.Stats, *s)
		default:
			row.Info = append(row.Info, *s)
		}
	}
	row.Utilization.Text = cellText(row, row.Utilization, Utilization)
	row.Saturation.Text = cellText(row, row.Saturation, Saturation)
	row.Errors.Text = cellText(row, row.Errors, Errors)
	return row
}

// NotMeasuredText is what a cell says when none of its metrics was
// measured, before the reason if there is one.
const NotMeasuredText = "not measured"

// noProbeReads starts the reason of a cell no probe had a metric for.
const noProbeReads = "no probe reads"

// cellText describes a cell: its measured metrics, or why none is. A cell
// no probe reads at all says only "not measured" when the row has other
// measured cells (the errors of a CPU), and, in a row with nothing
// measured, its utilization names the resource once and the rest say "-".
func cellText(row Row, c Cell, k Kind) string {
	var parts []string
	why := ""
	for _, s := range c.Stats {
		if !s.Measured() {
			why = s.NotMeasured
			continue
		}
		parts = append(parts, statText(row, s))
	}
	switch {
	case len(parts) > 0:
		return strings.Join(parts, "; ")
	case why != "":
		return NotMeasuredText + ": " + why
	case row.Measured():
		return NotMeasuredText
	case k == Utilization:
		return fmt.Sprintf("%s: %s the %s", NotMeasuredText, noProbeReads, row.Resource.Title())
	}
	return "-"
}

// statText is "label value", with the max when it differs from the mean.
func statText(row Row, s Stat) string {
	text := label(s.Metric) + " " + FormatValue(s.Mean, s.Unit)
	if s.Metric == MetricCPUUtilization {
		// "0.14 of 0.50 cores (28%)" reads better than a bare percentage.
		cores, ok1 := infoStat(row, MetricCPUCores)
		limit, ok2 := infoStat(row, MetricCPULimit)
		if ok1 && ok2 {
			text = fmt.Sprintf("%.2f of %.2f cores (%s)", cores.Mean, limit.Mean, FormatValue(s.Mean, UnitFraction))
		}
	}
	if s.N > 1 && FormatValue(s.Max, s.Unit) != FormatValue(s.Mean, s.Unit) {
		text += ", max " + FormatValue(s.Max, s.Unit)
	}
	return text
}

func infoStat(row Row, metric string) (Stat, bool) {
	for _, s := range row.Info {
		if s.Metric == metric && s.Measured() {
			return s, true
		}
	}
	return Stat{}, false
}

// label is the words people read for a metric knee writes.
func label(metric string) string {
	if comm, ok := strings.CutPrefix(metric, MetricOtherProcessPrefix); ok {
		return "CPU of " + comm
	}
	switch metric {
	case MetricCPUUtilization:
		return "CPU"
	case MetricThrottledPeriods:
		return "throttled periods"
	case MetricThrottledTime:
		return "throttled time"
	case MetricRunQueueWait:
		return "waiting for a CPU"
	case MetricMachineUtil:
		return "CPU busy"
	case MetricOtherUtil:
		return "CPU of other processes"
	case MetricOtherRunQueuePerCPU:
		return "other runnable threads per CPU"
	case MetricLoadPerCPU:
		return "load per CPU"
	case MetricRunQueuePerCPU:
		return "run queue per CPU"
	case MetricGeneratorUtil:
		return "CPU"
	case MetricSendLagP99:
		return "send lag p99"
	case MetricSchedP99:
		return "scheduling latency p99"
	case MetricInFlight:
		return "requests in flight"
	case MetricErrors5xx:
		return "5xx responses"
	case MetricPoolUtil:
		return "connections in use"
	case MetricPoolWaits:
		return "waits for a connection"
	case MetricPoolWaitTime:
		return "waiting for a connection"
	case MetricPoolTimeouts:
		return "pool timeouts"
	case MetricDBQueueWaiting:
		return "queued for the database"
	case MetricDBBusyErrors:
		return "busy/locked errors"
	case MetricPGConnUtilization:
		return "connections of max_connections"
	case MetricPGWaiting:
		return "active backends waiting"
	case MetricPGWaitingFraction:
		return "of active backends waiting"
	}
	return metric
}

// FormatValue writes v in its unit for people: 0.19 fraction is "19%",
// 0.0123 s is "12.3 ms".
func FormatValue(v float64, unit string) string {
	switch unit {
	case UnitFraction:
		if math.Abs(v) < 0.1 && v != 0 {
			return fmt.Sprintf("%.1f%%", v*100)
		}
		return fmt.Sprintf("%.0f%%", v*100)
	case UnitCores:
		return fmt.Sprintf("%.2f cores", v)
	case UnitSeconds:
		if math.Abs(v) < 1 {
			return fmt.Sprintf("%.3g ms", v*1000)
		}
		return fmt.Sprintf("%.3g s", v)
	case UnitSecondsPerSec:
		return fmt.Sprintf("%.3g s/s", v)
	case UnitPerSec:
		return fmt.Sprintf("%.3g/s", v)
	}
	s := fmt.Sprintf("%.2f", v)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	if unit != "" {
		s += " " + unit
	}
	return s
}
