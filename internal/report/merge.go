package report

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/linkbench/linkbench/internal/graph"
	"github.com/linkbench/linkbench/internal/stats"
)

// ReadHistograms reads a bundle's histograms.hlog: one cumulative
// histogram per op, keyed by the op's tag.
func ReadHistograms(dir string) (map[graph.Op]*hdr.Histogram, error) {
	f, err := os.Open(filepath.Join(dir, "histograms.hlog"))
	if err != nil {
		return nil, fmt.Errorf("%s has no histograms.hlog: %w", dir, err)
	}
	defer f.Close()
	r := hdr.NewHistogramLogReader(f)
	out := map[graph.Op]*hdr.Histogram{}
	for {
		h, err := r.NextIntervalHistogram()
		if err != nil {
			return nil, fmt.Errorf("%s/histograms.hlog: %w", dir, err)
		}
		if h == nil {
			return out, nil
		}
		op, ok := graph.ParseOp(h.Tag())
		if !ok {
			return nil, fmt.Errorf("%s/histograms.hlog: unknown op tag %q", dir, h.Tag())
		}
		out[op] = h
	}
}

// Merge combines the bundles of driver processes that ran side by side
// (--shard) into one result: totals and per-op counts are summed, per-op
// percentiles come from the merged raw histograms (exact, not averaged),
// and the interval series are aligned on wall-clock seconds (their
// per-op percentiles are dropped: only whole histograms merge exactly).
func Merge(runs []*Results, hists []map[graph.Op]*hdr.Histogram) (*Results, map[graph.Op]*hdr.Histogram, error) {
	if len(runs) == 0 {
		return nil, nil, fmt.Errorf("nothing to merge")
	}
	out := *runs[0]
	out.Config, out.Resources, out.Usage, out.Efficiency, out.Threads, out.Stages = runs[0].Config, nil, nil, nil, nil, nil
	out.Totals = Totals{}
	merged := map[graph.Op]*hdr.Histogram{}
	counts := map[graph.Op]*stats.OpSummary{}
	var elapsed float64
	for i, r := range runs {
		if r.Phase != runs[0].Phase {
			return nil, nil, fmt.Errorf("cannot merge a %s bundle with a %s bundle", r.Phase, runs[0].Phase)
		}
		if r.StartedAt.Before(out.StartedAt) {
			out.StartedAt = r.StartedAt
		}
		elapsed = max(elapsed, r.ElapsedSec)
		t := r.Totals
		out.Totals.Requests += t.Requests
		out.Totals.Errors += t.Errors
		out.Totals.OpsPerSec += t.OpsPerSec
		out.Totals.Nodes += t.Nodes
		out.Totals.Links += t.Links
		out.Totals.Counts += t.Counts
		out.Totals.LinksPerSec += t.LinksPerSec
		for _, o := range r.Ops {
			op, ok := graph.ParseOp(o.Name) // Op itself is not in the JSON
			if !ok {
				return nil, nil, fmt.Errorf("unknown op %q", o.Name)
			}
			c, ok := counts[op]
			if !ok {
				c = &stats.OpSummary{Op: op, Name: o.Name}
				counts[op] = c
			}
			c.Count += o.Count
			c.Errors += o.Errors
			c.Retries += o.Retries
			c.OpsPerSec += o.OpsPerSec
		}
		for op, h := range hists[i] {
			if merged[op] == nil {
				merged[op] = hdr.New(h.LowestTrackableValue(), h.HighestTrackableValue(), int(h.SignificantFigures()))
			}
			merged[op].Merge(h)
		}
	}
	out.ElapsedSec = elapsed
	var ops []graph.Op
	for op := range counts {
		ops = append(ops, op)
	}
	sort.Slice(ops, func(i, j int) bool { return ops[i] < ops[j] })
	out.Ops = nil
	for _, op := range ops {
		s := *counts[op]
		if h := merged[op]; h != nil {
			s.Percentiles = stats.PercentilesOf(op, h)
		}
		out.Ops = append(out.Ops, s)
	}
	out.Curves = PercentileCurves(merged)
	out.AllOps = AllOpsSummary(merged, elapsed)
	out.Intervals = alignIntervals(runs)
	// Per-process loops, summary lines and load progress do not add up
	// into one run's: the merged bundle has none.
	out.Loops, out.SummaryLines, out.LoadProgress = nil, nil, nil
	return &out, merged, nil
}

// alignIntervals sums the runs' intervals that end in the same wall-clock second.
func alignIntervals(runs []*Results) []stats.Interval {
	bySec := map[int64]*stats.Interval{}
	for _, r := range runs {
		for _, iv := range r.Intervals {
			sec := iv.EndTime.Unix()
			m, ok := bySec[sec]
			if !ok {
				m = &stats.Interval{EndTime: time.Unix(sec, 0).UTC(), DurationSec: iv.DurationSec}
				bySec[sec] = m
			}
			m.Count += iv.Count
			m.Errors += iv.Errors
			m.OpsPerSec += iv.OpsPerSec
		}
	}
	var secs []int64
	for s := range bySec {
		secs = append(secs, s)
	}
	sort.Slice(secs, func(i, j int) bool { return secs[i] < secs[j] })
	out := make([]stats.Interval, 0, len(secs))
	for _, s := range secs {
		out = append(out, *bySec[s])
	}
	return out
}
