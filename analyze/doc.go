// Package analyze turns a run directory into answers: the end-of-run summary,
// windows against the merged distribution, coordinated omission (detected and
// corrected), thresholds, repetitions and comparisons, the throughput-latency
// curve, its knee and collapse, and the USL fit.
//
// Every function is pure: it reads a *rundir.Dir (or rundir.Summary values) and
// returns plain values with snake_case JSON tags, ready for --summary-export.
// Nothing here does I/O, sorts latencies or computes a latency percentile:
// latencies are aggregated only by merging record.Histograms, and every
// percentile comes from package record. The few medians computed here are
// over run-level numbers (one per repetition), never over latencies.
//
// Percentiles cannot be averaged: Windows shows the average of per-window
// p99 values next to the merged p99 only so that the difference is visible.
package analyze
