// Package use applies the USE method (Brendan Gregg) to a load test's
// target: for each resource, in order (target CPU, Go scheduler, HTTP
// server, connection pool, database, machine, generator), how busy it is
// (utilization), whether work waits for it (saturation) and whether it
// fails (errors), as numbers, then a bottleneck verdict.
//
// Probes read the resources: CPUProbe (the target's /proc and cgroup v1/v2
// CPU accounting and limit, read through package cgroup), MachineProbe
// (the rest of the machine: what neither the target nor knee uses, with the
// busiest other commands named), GeneratorProbe (knee's own CPU
// and send lag), PromProbe (a /metrics scrape through Mappings) and
// PostgresProbe (pg_stat_activity wait events). A value a probe cannot read
// is a Reading marked not measured with why, never a zero; counters become
// rates by the difference between two samples.
//
// A Target (a PID or cgroup, a /metrics URL, a PostgreSQL DSN) builds and
// checks the probes of what a user names. A Sampler runs the probes every
// second and writes resources.jsonl; ReadSamples reads it back. Scan is
// knee use: sample for a while, summarize, judge. Summarize turns the samples of a time range
// into a Table, and Judge turns per-step tables, in order of offered rate,
// into a Verdict: the resource that saturated first, its evidence, and why
// every other resource is not the bottleneck.
//
// Concurrency: a probe is used by one goroutine at a time (the Sampler
// guarantees it); Sampler.Samples may be called while Sampler.Run runs.
// Tables and verdicts are plain values.
package use
