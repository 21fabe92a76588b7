package stats

import (
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/linkbench/linkbench/internal/graph"
)

// OpSummary is one op's figures over a period. Latencies are in ms (for
// RANGE_SIZE they are list lengths).
type OpSummary struct {
	Op        graph.Op `json:"-"`
	Name      string   `json:"op"`
	Count     int64    `json:"count"`
	Errors    int64    `json:"errors"`
	Retries   int64    `json:"retries"`
	OpsPerSec float64  `json:"ops_per_sec"`
	Percentiles
	// Service holds the same percentiles of service time (from the actual
	// send) when it was tracked separately from latency.
	Service *Percentiles `json:"service,omitempty"`
}

// Percentiles of one histogram in ms.
type Percentiles struct {
	Min  float64 `json:"min_ms"`
	P25  float64 `json:"p25_ms"`
	P50  float64 `json:"p50_ms"`
	P75  float64 `json:"p75_ms"`
	P90  float64 `json:"p90_ms"`
	P95  float64 `json:"p95_ms"`
	P99  float64 `json:"p99_ms"`
	P999 float64 `json:"p99_9_ms"`
	Max  float64 `json:"max_ms"`
	Mean float64 `json:"mean_ms"`
}

// Interval is the summary of one tick period.
type Interval struct {
	Start   time.Duration `json:"-"`
	End     time.Duration `json:"-"`
	EndTime time.Time     `json:"time"`
	// DurationSec is the length of the interval; the last one of a run is
	// usually shorter than the tick.
	DurationSec float64 `json:"duration_sec"`
	Count       int64   `json:"count"`
	Errors      int64   `json:"errors"`
	OpsPerSec   float64 `json:"ops_per_sec"`
	// Reconnects are the operations that failed on a lost connection.
	Reconnects int64       `json:"reconnects,omitempty"`
	Ops        []OpSummary `json:"ops"`
}

// quantiles are those of Percentiles in one scan of the counts: the 0th
// is the histogram's Min and the 100th its Max (TestPercentilesScanGivesMinAndMax),
// each of which would otherwise walk the buckets once more.
var quantiles = []float64{0, 25, 50, 75, 90, 95, 99, 99.9, 100}

func percentiles(h *hdr.Histogram, scale float64) Percentiles {
	if h == nil || h.TotalCount() == 0 {
		return Percentiles{}
	}
	v := h.ValueAtPercentilesSlice(quantiles)
	return Percentiles{
		Min: float64(v[0]) / scale,
		P25: float64(v[1]) / scale, P50: float64(v[2]) / scale, P75: float64(v[3]) / scale,
		P90: float64(v[4]) / scale, P95: float64(v[5]) / scale, P99: float64(v[6]) / scale,
		P999: float64(v[7]) / scale, Max: float64(v[8]) / scale, Mean: h.Mean() / scale,
	}
}

func summarize(op graph.Op, r *opRec, secs float64) OpSummary {
	scale := 1e6 // ns -> ms
	if op == graph.RangeSize {
		scale = 1
	}
	p := percentiles(r.latency, scale)
	s := OpSummary{Op: op, Name: op.String(), Count: r.count, Errors: r.errors, Retries: r.retries, Percentiles: p}
	if secs > 0 {
		s.OpsPerSec = float64(r.count) / secs
	}
	if r.service != nil && r.service.TotalCount() > 0 {
		sp := percentiles(r.service, scale)
		s.Service = &sp
	}
	return s
}
