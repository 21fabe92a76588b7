package report

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"time"

	"github.com/linkbench/linkbench/internal/stats"
)

// LoadLine is the reference's load completion line, which existing
// scripts parse: the maintained fork's format by default, the upstream
// format when upstream is set (the fork prints it with never_change=true).
// Per-node figures divide by the expected nodes when no node was loaded
// (the reference prints Infinity or NaN there).
func LoadLine(nodes, expectedNodes, links, counts int64, elapsed time.Duration, upstream bool) string {
	perNode := func(n int64) float64 {
		switch {
		case nodes > 0:
			return float64(n) / float64(nodes)
		case expectedNodes > 0:
			return float64(n) / float64(expectedNodes)
		}
		return 0
	}
	secs := max(elapsed, 0).Seconds()
	rate := func(n int64) int64 {
		if secs <= 0 {
			return 0
		}
		return int64(math.Floor(float64(n)/secs + 0.5)) // Java's Math.round
	}
	if upstream {
		return fmt.Sprintf("LOAD PHASE COMPLETED.  Loaded %d nodes (Expected %d). Loaded %d links (%.2f links per node).  Took %.1f seconds.  Links/second = %d",
			nodes, expectedNodes, links, perNode(links), secs, rate(links))
	}
	return fmt.Sprintf("LOAD PHASE COMPLETED. Loaded %d nodes (Expected %d), %d links (%.2f /node), %d counts (%.2f /node). %.1f seconds, %d Links/s, %d (link+count)/s, %d (link+count+node)/s",
		nodes, expectedNodes, links, perNode(links), counts, perNode(counts), secs, rate(links), rate(links+counts), rate(links+counts+nodes))
}

// RequestLine is the reference's request completion line.
func RequestLine(requests int64, elapsed time.Duration) string {
	ms := max(elapsed, 0).Milliseconds()
	rate := int64(0)
	if ms > 0 {
		rate = 1000 * requests / ms
	}
	return fmt.Sprintf("REQUEST PHASE COMPLETED. %d requests done in %d seconds. Requests/second = %d", requests, ms/1000, rate)
}

// FormatMs prints a millisecond figure with 3 significant digits (the
// precision of the histograms), without exponent notation.
func FormatMs(v float64) string {
	if v == 0 {
		return "0"
	}
	digits := 3 - int(math.Floor(math.Log10(math.Abs(v)))) - 1
	digits = max(digits, 0)
	return strconv.FormatFloat(v, 'f', digits, 64)
}

// WriteOpLines writes one line per op in the reference's layout
// ("OP count = N  p25 = Xms ...") extended with p99.9, errors and retries.
func WriteOpLines(w io.Writer, ops []stats.OpSummary, threads int) error {
	for _, s := range ops {
		unit := "ms"
		if s.Name == "RANGE_SIZE" {
			unit = ""
		}
		f := func(v float64) string { return FormatMs(v) + unit }
		if _, err := fmt.Fprintf(w, "%s count = %d  p25 = %s  p50 = %s  p75 = %s  p95 = %s  p99 = %s  p99.9 = %s  max = %s  mean = %s  errors = %d  retries = %d threads = %d\n",
			s.Name, s.Count, f(s.P25), f(s.P50), f(s.P75), f(s.P95), f(s.P99), f(s.P999), f(s.Max), f(s.Mean), s.Errors, s.Retries, threads); err != nil {
			return err
		}
	}
	return nil
}

// WriteTable writes an aligned, human-friendly per-op table.
func WriteTable(w io.Writer, ops []stats.OpSummary) error {
	if _, err := fmt.Fprintf(w, "%-16s %10s %8s %8s %10s %9s %9s %9s %9s %9s %9s %9s %9s\n",
		"op", "count", "errors", "retries", "ops/s", "p25 ms", "p50 ms", "p75 ms", "p95 ms", "p99 ms", "p99.9 ms", "max ms", "mean ms"); err != nil {
		return err
	}
	for _, s := range ops {
		if s.Name == "RANGE_SIZE" {
			continue
		}
		if _, err := fmt.Fprintf(w, "%-16s %10d %8d %8d %10.0f %9s %9s %9s %9s %9s %9s %9s %9s\n",
			s.Name, s.Count, s.Errors, s.Retries, s.OpsPerSec, FormatMs(s.P25), FormatMs(s.P50), FormatMs(s.P75),
			FormatMs(s.P95), FormatMs(s.P99), FormatMs(s.P999), FormatMs(s.Max), FormatMs(s.Mean)); err != nil {
			return err
		}
	}
	return nil
}
