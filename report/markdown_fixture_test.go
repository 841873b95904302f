package report

import (
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/knee-dev/knee/analyze"
	"github.com/knee-dev/knee/record"
	"github.com/knee-dev/knee/rundir"
)

// The fixtures are run directories written by rundir.Writer and read back by
// rundir.Open, so the report sees exactly what a real run leaves behind. Their
// latencies are chosen so every percentile can be worked out by hand (see
// the comments next to the assertions in markdown_test.go).

var fixtureStart = time.Date(2026, 11, 14, 20, 0, 0, 0, time.UTC)

func fixtureEnv() rundir.Environment {
	return rundir.Environment{
		KneeVersion: "v0.1.0-test", TargetCommit: "abc1234", Host: "lab-1",
		CPUModel: "Test CPU @ 2.0GHz", CPUs: 2, Kernel: "6.1.0-test", GoVersion: "go1.26.8",
		LoadBefore: [3]float64{0.12, 0.34, 0.56}, LoadAfter: [3]float64{1.5, 0.9, 0.6},
		TopBefore:    []rundir.Process{{PID: 42, Comm: "postgres", CPU: 0.25}},
		TopAfter:     []rundir.Process{{PID: 42, Comm: "postgres", CPU: 0.75}, {PID: 7, Comm: "bookstore", CPU: 0.5}},
		TargetLimits: map[string]string{"cpu.cfs_quota_us": "50000", "cpu.cfs_period_us": "100000"},
		Generator:    rundir.Generator{CPUSeconds: 0.5, PeakRSSMB: 48},
	}
}

type fixtureInterval struct {
	hists    map[record.Key]*record.Histogram
	counters map[string]record.Counters
	extra    map[string]rundir.IntervalCounters
}

// writeFixture writes one 1 s interval per element of ivs and opens the run.
func writeFixture(t *testing.T, meta rundir.Meta, ivs []fixtureInterval) *rundir.Dir {
	t.Helper()
	dir := filepath.Join(t.TempDir(), meta.ID)
	meta.Started = fixtureStart
	meta.Ended = fixtureStart.Add(time.Duration(len(ivs)) * time.Second)
	meta.Env = fixtureEnv()
	meta.KneeVersion = meta.Env.KneeVersion
	w, err := rundir.Create(dir, meta)
	if err != nil {
		t.Fatal(err)
	}
	for i, iv := range ivs {
		snap := record.IntervalSnapshot{
			Start: time.Duration(i) * time.Second, End: time.Duration(i+1) * time.Second,
			Histograms: iv.hists, Counters: iv.counters,
		}
		if err := w.WriteInterval(snap, iv.extra); err != nil {
			t.Fatal(err)
		}
	}
	meta.Finished = true
	if err := w.Close(meta); err != nil {
		t.Fatal(err)
	}
	r, err := rundir.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func fixtureHist(vals map[time.Duration]int64) *record.Histogram {
	h := record.NewHistogram()
	for d, n := range vals {
		h.RecordN(d, n)
	}
	return h
}

func fixtureCounters(requests, errors, dropped int64) record.Counters {
	c := record.Counters{Requests: requests, Errors: errors, DroppedIterations: dropped,
		ByStatus: map[string]int64{"2xx": requests - errors}}
	if errors > 0 {
		c.ByStatus["5xx"] = errors
	}
	return c
}

const (
	listName = "GET /books"
	getName  = "GET /books/{isbn}"
)

// openRun is 20 s of an open-model scenario "browse" at 100 req/s with two
// endpoints. Every second: GET /books answers 50 requests at 1, 2, ... 50 ms
// (times scale); GET /books/{isbn} answers 50 at 2 ms, except in second 15,
// where one of them takes 900 ms. One error per second; 3 dropped
// iterations in second 15. Send lag is 50 µs throughout.
func openRun(t *testing.T, id string, scale time.Duration) *rundir.Dir {
	cfg, _ := json.Marshal(map[string]any{"rate": 100, "duration": "20s", "preAllocatedVUs": 10})
	meta := rundir.Meta{ID: id, Source: "knee", Model: "open", Scenarios: []rundir.Scenario{{
		Name: "browse", Executor: "constant-arrival-rate", Model: "open", TargetRate: 100,
		Requests: []string{listName, getName}, Config: cfg,
	}}}
	lat := func(name string) record.Key {
		return record.Key{Metric: record.Latency, Scenario: "browse", Name: name}
	}
	lag := record.Key{Metric: record.SendLag, Scenario: "browse", Name: listName}
	var ivs []fixtureInterval
	for i := range 20 {
		list := map[time.Duration]int64{}
		for v := 1; v <= 50; v++ {
			list[time.Duration(v)*scale]++
		}
		get := map[time.Duration]int64{2 * time.Millisecond: 50}
		var dropped int64
		if i == 15 {
			get = map[time.Duration]int64{2 * time.Millisecond: 49, 900 * time.Millisecond: 1}
			dropped = 3
		}
		ivs = append(ivs, fixtureInterval{
			hists: map[record.Key]*record.Histogram{
				lat(listName): fixtureHist(list), lat(getName): fixtureHist(get),
				lag: fixtureHist(map[time.Duration]int64{50 * time.Microsecond: 100}),
			},
			counters: map[string]record.Counters{"browse": fixtureCounters(100, 1, dropped)},
			extra:    map[string]rundir.IntervalCounters{"browse": {TargetRate: 100, VUs: 10, BusyVUs: 2}},
		})
	}
	return writeFixture(t, meta, ivs)
}

// closedRun is the article's freeze in small: 20 closed-model VUs with a
// 100 ms think time, 198 requests of 1 ms every second, then the target
// freezes for seconds 10-13 (no request completes) and the 20 waiting
// requests complete in second 14 after 4.98 s; 20 s in all.
func closedRun(t *testing.T) *rundir.Dir {
	meta := rundir.Meta{ID: "closed-freeze", Source: "knee", Model: "closed", Scenarios: []rundir.Scenario{{
		Name: "closed", Executor: "constant-vus", Model: "closed", VUs: 20, Think: 100 * time.Millisecond,
		Requests: []string{getName},
	}}, Faults: []rundir.Fault{{Kind: "freeze", At: 10 * time.Second, For: 5 * time.Second,
		Target: "pid:7", Method: "cgroup-v1-freezer"}}}
	key := record.Key{Metric: record.Latency, Scenario: "closed", Name: getName}
	var ivs []fixtureInterval
	for i := range 20 {
		var vals map[time.Duration]int64
		var n int64
		switch {
		case i >= 10 && i <= 13:
		case i == 14:
			vals, n = map[time.Duration]int64{4980 * time.Millisecond: 20}, 20
		default:
			vals, n = map[time.Duration]int64{time.Millisecond: 198}, 198
		}
		iv := fixtureInterval{
			hists:    map[record.Key]*record.Histogram{},
			counters: map[string]record.Counters{"closed": fixtureCounters(n, 0, 0)},
			extra:    map[string]rundir.IntervalCounters{"closed": {VUs: 20, BusyVUs: 20}},
		}
		if vals != nil {
			iv.hists[key] = fixtureHist(vals)
		}
		ivs = append(ivs, iv)
	}
	return writeFixture(t, meta, ivs)
}

// stepsRun is a stepped open-model run: three steps of 5 s (1 s jump, 4 s
// hold) offering 100, 200 and 300 req/s. The first two complete all at 2
// and 3 ms; the third completes 210 req/s at 800 ms and drops 90 a second.
func stepsRun(t *testing.T) (*rundir.Dir, analyze.StepPlan) {
	meta := rundir.Meta{ID: "steps", Source: "knee", Model: "open", Scenarios: []rundir.Scenario{{
		Name: "steps", Executor: "ramping-arrival-rate", Model: "open", Requests: []string{getName},
	}}}
	key := record.Key{Metric: record.Latency, Scenario: "steps", Name: getName}
	type step struct {
		offered, done int64
		lat           time.Duration
	}
	steps := []step{{100, 100, 2 * time.Millisecond}, {200, 200, 3 * time.Millisecond}, {300, 210, 800 * time.Millisecond}}
	var ivs []fixtureInterval
	for _, s := range steps {
		for range 5 {
			ivs = append(ivs, fixtureInterval{
				hists:    map[record.Key]*record.Histogram{key: fixtureHist(map[time.Duration]int64{s.lat: s.done})},
				counters: map[string]record.Counters{"steps": fixtureCounters(s.done, 0, s.offered-s.done)},
				extra:    map[string]rundir.IntervalCounters{"steps": {TargetRate: float64(s.offered), VUs: 50, BusyVUs: int(s.done / 10)}},
			})
		}
	}
	plan := analyze.StepPlan{Start: 100, Step: 100, Steps: 3, StepDuration: 4 * time.Second, Jump: time.Second}
	return writeFixture(t, meta, ivs), plan
}

func fixtureUSE() *USETable {
	return &USETable{
		Rows: []USERow{
			{Resource: "API CPU (0.5 limit)", Utilization: "0.14 cores", Saturation: "throttled in 19 % of periods", Errors: "none"},
			{Resource: "DB connection pool", Utilization: "78-88 of 100 | in use", Saturation: "requests waiting", Errors: "pool timeouts"},
		},
		Verdict: "the connection pool: it runs dry while the CPU idles",
	}
}
