package stats

import (
	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/linkbench/linkbench/internal/graph"
)

// PercentilesOf summarises a latency histogram of op (values in ns; list
// lengths for RANGE_SIZE) the way the collector does, for histograms built
// elsewhere (a window of a run, a merge of bundles).
func PercentilesOf(op graph.Op, h *hdr.Histogram) Percentiles {
	scale := 1e6
	if op == graph.RangeSize {
		scale = 1
	}
	return percentiles(h, scale)
}
