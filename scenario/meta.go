package scenario

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/knee-dev/knee/load"
	"github.com/knee-dev/knee/request"
	"github.com/knee-dev/knee/rundir"
)

// SenderOptions are the request.Options every scenario of c shares. To share
// connections between scenarios too, set RoundTripper to one
// request.NewTransport(c.HTTP).
func (c *Config) SenderOptions() request.Options {
	return request.Options{Vars: c.Vars, Seed: c.Seed, Transport: c.HTTP}
}

// RunMeta is what run.json records of the scenario: its executor settings
// with the scenario file's keys and duration syntax, so they read as written
// (and parse back). VUs is set for the closed model only (peak VUs).
func (s Scenario) RunMeta() (rundir.Scenario, error) {
	m := rundir.Scenario{Name: s.Name, Model: s.Model(), StartTime: s.StartTime, Tags: s.Tags}
	for _, r := range s.Requests {
		m.Requests = appendNew(m.Requests, r.Tag())
	}
	if s.Executor == nil {
		return m, nil
	}
	m.Executor, m.Span = s.Executor.Kind(), s.Executor.Span()
	settings := map[string]any{}
	switch e := s.Executor.(type) {
	case load.ConstantArrivalRate:
		m.TargetRate = perSecond(e.Rate, e.TimeUnit)
		settings = map[string]any{"rate": e.Rate, "timeUnit": e.TimeUnit.String(), "duration": e.Duration.String(),
			"preAllocatedVUs": e.PreAllocatedVUs, "maxVUs": e.MaxVUs}
	case load.RampingArrivalRate:
		settings = map[string]any{"startRate": e.StartRate, "timeUnit": e.TimeUnit.String(), "stages": stagesMeta(e.Stages),
			"preAllocatedVUs": e.PreAllocatedVUs, "maxVUs": e.MaxVUs}
	case load.ConstantVUs:
		m.Think, m.VUs = e.Think, e.VUs
		settings = map[string]any{"vus": e.VUs, "duration": e.Duration.String(), "think": e.Think.String()}
	case load.RampingVUs:
		m.Think, m.VUs = e.Think, e.PeakVUs()
		settings = map[string]any{"startVUs": e.StartVUs, "stages": stagesMeta(e.Stages), "think": e.Think.String()}
	}
	settings["executor"] = m.Executor
	settings["gracefulStop"] = s.GracefulStop.String()
	raw, err := json.Marshal(settings)
	if err != nil { // only a NaN or infinite number, which Validate rejects
		return m, fmt.Errorf("scenario %q: executor settings: %w", s.Name, err)
	}
	m.Config = raw
	return m, nil
}

func perSecond(rate float64, unit time.Duration) float64 {
	if unit <= 0 {
		unit = time.Second
	}
	return rate / unit.Seconds()
}

func stagesMeta(stages []load.Stage) []map[string]any {
	out := make([]map[string]any, 0, len(stages))
	for _, st := range stages {
		out = append(out, map[string]any{"duration": st.Duration.String(), "target": st.Target})
	}
	return out
}

func appendNew(list []string, s string) []string {
	if contains(list, s) {
		return list
	}
	return append(list, s)
}
