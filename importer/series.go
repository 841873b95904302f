package importer

import (
	"github.com/knee-dev/knee/record"
	"github.com/knee-dev/knee/redact"
	"github.com/knee-dev/knee/rundir"
)

// seriesTable gives every histogram series a small id, so open intervals
// keep their histograms in slices and the hot path looks names up without
// allocating (map lookups keyed by string(bytes) do not copy).
type seriesTable struct {
	cap       *record.SeriesCap         // the rule live runs fold names by, too
	latency   map[string]map[string]int // scenario -> name -> id of its Latency series
	index     map[record.Key]int
	keys      []record.Key
	scenarios []string          // in order of appearance
	interned  map[string]string // scenario names
	names     map[string][]string
	red       *redact.Redactor
}

func newSeriesTable(max int, red *redact.Redactor) seriesTable {
	return seriesTable{
		cap:      record.NewSeriesCap(max),
		red:      red,
		latency:  map[string]map[string]int{},
		index:    map[record.Key]int{},
		interned: map[string]string{},
		names:    map[string][]string{},
	}
}

// latencyID is the id of the Latency series of a scenario and request name.
func (t *seriesTable) latencyID(scenario, name []byte) int {
	if byName, ok := t.latency[string(scenario)]; ok {
		if id, ok := byName[string(name)]; ok {
			return id
		}
	}
	sc := t.scenario(scenario)
	raw := string(name)
	// A name is often a URL: its secrets never become a series name. Two
	// URLs that differ only in a secret are one series.
	nm := t.red.URL(raw)
	if id, ok := t.index[record.Key{Metric: record.Latency, Scenario: sc, Name: nm}]; ok && nm != otherName {
		t.latency[sc][raw] = id
		return id
	}
	if t.cap.Name(record.Key{Scenario: sc, Name: nm}) == otherName {
		// Folded (counted by the cap); the (other) series itself is cached
		// below only under its own name, so every folded row passes here.
		nm = otherName
		if id, ok := t.index[record.Key{Metric: record.Latency, Scenario: sc, Name: nm}]; ok {
			return id
		}
	}
	id := t.add(record.Key{Metric: record.Latency, Scenario: sc, Name: nm})
	byName := t.latency[sc]
	if byName == nil {
		byName = map[string]int{}
		t.latency[sc] = byName
	}
	if nm == otherName {
		byName[nm] = id // folded rows keep passing here to be counted
	} else {
		byName[raw] = id
	}
	t.names[sc] = append(t.names[sc], nm)
	return id
}

// id is the id of any series (k6 iteration_duration as Interval, ...).
// Latency series go through latencyID, so they are capped and listed too.
func (t *seriesTable) id(k record.Key) int {
	if id, ok := t.index[k]; ok {
		return id
	}
	if k.Metric == record.Latency {
		return t.latencyID([]byte(k.Scenario), []byte(k.Name))
	}
	t.scenario([]byte(k.Scenario))
	return t.add(k)
}

func (t *seriesTable) add(k record.Key) int {
	id := len(t.keys)
	t.keys = append(t.keys, k)
	t.index[k] = id
	return id
}

// scenario interns a scenario name and remembers its first appearance.
func (t *seriesTable) scenario(b []byte) string {
	if s, ok := t.interned[string(b)]; ok {
		return s
	}
	s := string(b)
	t.interned[s] = s
	t.scenarios = append(t.scenarios, s)
	return s
}

// meta describes the scenarios seen, for run.json.
func (t *seriesTable) meta(opt Options) []rundir.Scenario {
	out := make([]rundir.Scenario, 0, len(t.scenarios))
	for _, sc := range t.scenarios {
		out = append(out, rundir.Scenario{
			Name:       sc,
			Executor:   opt.Executor,
			Model:      opt.Model,
			Requests:   t.names[sc],
			TargetRate: opt.TargetRate,
		})
	}
	return out
}
