package report

import (
	"encoding/csv"
	"io"
	"strconv"

	"github.com/linkbench/linkbench/internal/stats"
)

// CSVStatsHeader is the -csvstats header: the reference's columns first
// (its bucket bounds become the exact value twice), then ours.
var CSVStatsHeader = []string{
	"op", "count", "p25_low", "p25_high", "p50_low", "p50_high", "p75_low", "p75_high",
	"p95_low", "p95_high", "p99_low", "p99_high", "max", "mean", "threads",
	"p99_9", "min", "p90", "errors", "retries", "ops_per_sec",
}

func ff(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// WriteCSVStats writes the final per-op table (values in ms).
func WriteCSVStats(w io.Writer, ops []stats.OpSummary, threads int) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(CSVStatsHeader); err != nil {
		return err
	}
	for _, s := range ops {
		rec := []string{s.Name, strconv.FormatInt(s.Count, 10),
			ff(s.P25), ff(s.P25), ff(s.P50), ff(s.P50), ff(s.P75), ff(s.P75),
			ff(s.P95), ff(s.P95), ff(s.P99), ff(s.P99), ff(s.Max), ff(s.Mean), strconv.Itoa(threads),
			ff(s.P999), ff(s.Min), ff(s.P90), strconv.FormatInt(s.Errors, 10), strconv.FormatInt(s.Retries, 10), ff(s.OpsPerSec)}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// CSVStreamHeader is the -csvstream header: the reference's columns, then
// ours. Rows aggregate all threads (threadID is "all"); sampleDuration is
// in milliseconds as the reference actually wrote it despite its header.
var CSVStreamHeader = []string{
	"threadID", "timestamp", "op", "totalops", "totalerrors", "ops", "sampleDuration_us", "sampleOps",
	"mean_us", "min_us", "p25_us", "p50_us", "p75_us", "p90_us", "p95_us", "p99_us", "max_us",
	"p99_9_us", "retries", "ops_per_sec",
}

// StreamWriter writes one -csvstream row per op per interval.
type StreamWriter struct {
	cw     *csv.Writer
	totals map[string][2]int64
}

// NewStreamWriter writes the header and returns the writer.
func NewStreamWriter(w io.Writer) (*StreamWriter, error) {
	cw := csv.NewWriter(w)
	if err := cw.Write(CSVStreamHeader); err != nil {
		return nil, err
	}
	cw.Flush()
	return &StreamWriter{cw: cw, totals: map[string][2]int64{}}, cw.Error()
}

// Write adds the rows of one interval and flushes them.
func (s *StreamWriter) Write(iv stats.Interval) error {
	us := func(ms float64) string { return ff(ms * 1000) }
	durMs := (iv.End - iv.Start).Milliseconds()
	for _, o := range iv.Ops {
		t := s.totals[o.Name]
		t[0] += o.Count
		t[1] += o.Errors
		s.totals[o.Name] = t
		rec := []string{"all", strconv.FormatInt(iv.EndTime.Unix(), 10), o.Name,
			strconv.FormatInt(t[0], 10), strconv.FormatInt(t[1], 10), strconv.FormatInt(o.Count, 10),
			strconv.FormatInt(durMs, 10), strconv.FormatInt(o.Count, 10),
			us(o.Mean), us(o.Min), us(o.P25), us(o.P50), us(o.P75), us(o.P90), us(o.P95), us(o.P99), us(o.Max),
			us(o.P999), strconv.FormatInt(o.Retries, 10), ff(o.OpsPerSec)}
		if o.Name == "RANGE_SIZE" {
			for i := 8; i <= 17; i++ {
				rec[i] = ff(map[int]float64{8: o.Mean, 9: o.Min, 10: o.P25, 11: o.P50, 12: o.P75, 13: o.P90, 14: o.P95, 15: o.P99, 16: o.Max, 17: o.P999}[i])
			}
		}
		if err := s.cw.Write(rec); err != nil {
			return err
		}
	}
	s.cw.Flush()
	return s.cw.Error()
}
