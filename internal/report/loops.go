package report

import (
	"strconv"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/linkbench/linkbench/internal/graph"
	"github.com/linkbench/linkbench/internal/stats"
	"github.com/linkbench/linkbench/internal/sysmon"
)

// Loop is one measurement window of a request phase run with loops > 1:
// its own totals, per-op figures and resource use.
type Loop struct {
	Loop int `json:"loop"`
	// StartSec and EndSec are measured from the start of the phase's
	// measurement (the end of the warm-up).
	StartSec   float64           `json:"start_sec"`
	EndSec     float64           `json:"end_sec"`
	StartedAt  time.Time         `json:"started_at"`
	Totals     Totals            `json:"totals"`
	Ops        []stats.OpSummary `json:"ops"`
	Usage      *sysmon.Usage     `json:"usage,omitempty"`
	Efficiency *sysmon.PerOp     `json:"efficiency,omitempty"`
	SizeOnDisk int64             `json:"size_on_disk_bytes,omitempty"`
	// Partial is set on a last loop cut short (interrupted, or the
	// requests limit reached before the loop's time).
	Partial bool `json:"partial,omitempty"`
	// Hists are the loop's own latency histograms (for loops.hlog).
	Hists map[graph.Op]*hdr.Histogram `json:"-"`
}

// DiffHistograms returns cur - prev per op: the histograms of a window of
// a run from the run's cumulative histograms at the window's two ends.
// Histograms of the collector share one geometry; a pair that does not is
// returned as cur.
func DiffHistograms(cur, prev map[graph.Op]*hdr.Histogram) map[graph.Op]*hdr.Histogram {
	out := map[graph.Op]*hdr.Histogram{}
	for op, h := range cur {
		p, ok := prev[op]
		if !ok || p == nil {
			out[op] = h.Clone()
			continue
		}
		a, b := h.Export(), p.Export()
		if len(b.Counts) != len(a.Counts) || a.SignificantFigures != b.SignificantFigures || a.LowestTrackableValue != b.LowestTrackableValue {
			out[op] = h.Clone()
			continue
		}
		for i := range a.Counts {
			a.Counts[i] -= b.Counts[i]
		}
		if d := hdr.Import(a); d.TotalCount() > 0 {
			out[op] = d
		}
	}
	return out
}

// WindowOps summarises the ops of a window: counts, errors and retries
// summed over its intervals, percentiles from its histograms.
func WindowOps(ivs []stats.Interval, hists map[graph.Op]*hdr.Histogram, secs float64) []stats.OpSummary {
	var byOp [graph.NumOps]*stats.OpSummary
	for _, iv := range ivs {
		for _, o := range iv.Ops {
			s := byOp[o.Op]
			if s == nil {
				s = &stats.OpSummary{Op: o.Op, Name: o.Name}
				byOp[o.Op] = s
			}
			s.Count += o.Count
			s.Errors += o.Errors
			s.Retries += o.Retries
		}
	}
	var out []stats.OpSummary
	for op, s := range byOp {
		if s == nil {
			continue
		}
		if h := hists[graph.Op(op)]; h != nil {
			s.Percentiles = stats.PercentilesOf(graph.Op(op), h)
		}
		if secs > 0 {
			s.OpsPerSec = float64(s.Count) / secs
		}
		out = append(out, *s)
	}
	return out
}

// loopsLogEntries are every loop's histograms for one HdrHistogram log:
// one interval histogram per op and loop, tagged "L<n>/<OP>", stamped with
// the loop's start and end.
func loopsLogEntries(loops []Loop) []hlogEntry {
	var out []hlogEntry
	for _, l := range loops {
		end := l.StartedAt.Add(time.Duration((l.EndSec - l.StartSec) * float64(time.Second)))
		for op := graph.Op(0); op < graph.NumOps; op++ {
			if h, ok := l.Hists[op]; ok {
				out = append(out, hlogEntry{tag: "L" + strconv.Itoa(l.Loop) + "/" + op.String(), h: h, start: l.StartedAt, end: end})
			}
		}
	}
	return out
}

// AllOpsSummary merges the latency histograms of the request ops into one
// summary: the latency of any request, whatever its kind (nil without
// request ops). secs gives the rate.
func AllOpsSummary(hists map[graph.Op]*hdr.Histogram, secs float64) *stats.OpSummary {
	var all *hdr.Histogram
	for op := graph.Op(0); op < graph.Op(graph.NumRequestOps); op++ {
		h := hists[op]
		if h == nil || h.TotalCount() == 0 {
			continue
		}
		if all == nil {
			all = h.Clone()
			continue
		}
		all.Merge(h)
	}
	if all == nil {
		return nil
	}
	s := &stats.OpSummary{Name: "ALL_OPS", Count: all.TotalCount(), Percentiles: stats.PercentilesOf(graph.AddLink, all)}
	if secs > 0 {
		s.OpsPerSec = float64(s.Count) / secs
	}
	return s
}
