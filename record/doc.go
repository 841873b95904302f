// Package record owns every latency knee measures: sharded HdrHistogram
// recorders rotated every interval, counters, HdrHistogram interval logs
// (.hlog) read and written, and merges.
//
// It is the only package that imports hdrhistogram-go and the only place a
// percentile is computed. Everything else aggregates by merging Histograms.
// A percentile is the nearest rank, exactly as HdrHistogram's Java
// implementation computes it (getValueAtPercentile, getMean, getMaxValue),
// which java_test.go checks against Java itself.
//
// Units: a Histogram holds microseconds, from 1 µs to 1 h at 3 significant
// digits. Values outside that range are clamped to it and counted
// (Histogram.Clamped), never dropped. A Histogram read from a log stays
// packed (its non-empty buckets, a few KB) until it is changed, so reading
// back a long run costs megabytes, not ~190 KB per interval and series.
//
// Concurrency: a Histogram is not safe for concurrent use. A Recorder is:
// each goroutine that records takes its own Shard. Shards are spread over
// two stripes per CPU, at most MaxStripes (a 1 µs .. 1 h histogram is
// ~190 KB, too much for one per VU, and the cap keeps a request name's
// memory bounded on any core count), each with its own mutex, so recorders
// rarely wait on each other, and Rotate holds a stripe's mutex only for a
// pointer swap.
package record
