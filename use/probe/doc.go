// Package probe reads the resources of a load test's target for the USE
// method (package use): CPU (the target's /proc and cgroup v1/v2 CPU
// accounting and limit, read through packages cgroup and internal/proc),
// Machine (the rest of the machine: what neither the target nor knee uses,
// with the busiest other commands named), Generator (knee's own CPU and
// send lag), Prom (a /metrics scrape through use.Mappings) and Postgres
// (pg_stat_activity wait events). A value a probe cannot read is a
// use.Reading marked not measured with why, never a zero; counters become
// rates by the difference between two samples.
//
// A Target (a PID or cgroup, a /metrics URL, a PostgreSQL DSN) builds and
// checks the probes of what a user names. A Sampler runs the probes every
// second and writes resources.jsonl. Scan is knee use: sample for a while,
// summarize and judge (use.Summarize, use.Judge).
//
// Concurrency: a probe is used by one goroutine at a time (the Sampler
// guarantees it); Sampler.Samples may be called while Sampler.Run runs.
package probe
