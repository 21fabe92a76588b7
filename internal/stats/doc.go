// Package stats records every operation's latency with HdrHistogram
// precision without a shared lock on the hot path: each worker records into
// its own Handle, and one ticker (Collector.Tick) merges the handles into an
// interval snapshot and the cumulative histograms.
//
// Latencies are recorded in nanoseconds; summaries are reported in
// milliseconds. The RANGE_SIZE pseudo-op records list sizes (a count, not
// a time).
package stats
