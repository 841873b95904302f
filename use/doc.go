// Package use applies the USE method (Brendan Gregg) to a load test's
// target: for each resource, in order (target CPU, Go scheduler, HTTP
// server, connection pool, database, machine, generator), how busy it is
// (utilization), whether work waits for it (saturation) and whether it
// fails (errors), as numbers, then a bottleneck verdict.
//
// This package is the model and the judgement, and does no I/O: a Reading
// is one value a probe read (or could not read, with why, never a zero), a
// Sample one probe's readings at one tick (a line of resources.jsonl,
// WriteSample and ReadSamples), the Metric names and Mappings say what each
// value is. Summarize turns the samples of a time range into a Table, and
// Judge turns per-step tables, in order of offered rate, into a Verdict: the
// resource that saturated first, its evidence, and why every other resource
// is not the bottleneck. The probes that read a live target, and the sampler
// that runs them, are package use/probe.
//
// Tables and verdicts are plain values.
package use
