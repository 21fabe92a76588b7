package report

import (
	"math"

	"github.com/linkbench/linkbench/internal/stats"
)

// quantilePoints are an op's summary percentiles as (fraction, ms) pairs:
// a piecewise-linear picture of its latency distribution.
func quantilePoints(p stats.Percentiles) [][2]float64 {
	return [][2]float64{{0, p.Min}, {0.25, p.P25}, {0.5, p.P50}, {0.75, p.P75}, {0.9, p.P90},
		{0.95, p.P95}, {0.99, p.P99}, {0.999, p.P999}, {1, p.Max}}
}

// cdfAt is the fraction of a distribution given by quantile points at or
// below x, interpolating between the points linearly in log(latency):
// latencies spread over decades, and between a p99 of 0.01 ms and a
// p99.9 of 4 ms most of the mass lies near the lower end, which a linear
// interpolation would spread evenly.
func cdfAt(pts [][2]float64, x float64) float64 {
	if x < pts[0][1] {
		return 0
	}
	for i := 1; i < len(pts); i++ {
		lo, hi := pts[i-1], pts[i]
		if x < hi[1] {
			if hi[1] <= lo[1] {
				return hi[0]
			}
			f := (x - lo[1]) / (hi[1] - lo[1])
			if lo[1] > 0 {
				f = math.Log(x/lo[1]) / math.Log(hi[1]/lo[1])
			}
			return lo[0] + (hi[0]-lo[0])*f
		}
	}
	return 1
}

// MixtureQuantiles estimates percentiles (fractions in qs) of the latency
// of all the given ops together from their per-op summaries: the mixture
// of their distributions weighted by their counts, each distribution
// interpolated between its summary percentiles. An interval of a run keeps
// only per-op summaries, not histograms, so this is how its all-ops line
// is drawn; the whole run's all-ops figures come from the exact merged
// histograms instead (AllOpsSummary). NaN when no op has samples.
func MixtureQuantiles(ops []stats.OpSummary, qs []float64) []float64 {
	type comp struct {
		w   float64
		pts [][2]float64
	}
	var comps []comp
	total := 0.0
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, o := range ops {
		if o.Name == "RANGE_SIZE" || o.Count <= 0 {
			continue
		}
		pts := quantilePoints(o.Percentiles)
		comps = append(comps, comp{float64(o.Count), pts})
		total += float64(o.Count)
		lo, hi = math.Min(lo, pts[0][1]), math.Max(hi, pts[len(pts)-1][1])
	}
	out := make([]float64, len(qs))
	for i, q := range qs {
		if total == 0 {
			out[i] = math.NaN()
			continue
		}
		a, b := lo, hi
		for it := 0; it < 60 && b-a > 1e-9*math.Max(1e-6, b); it++ {
			m := (a + b) / 2
			if a > 0 {
				m = math.Sqrt(a * b) // bisect in log space
			}
			f := 0.0
			for _, c := range comps {
				f += c.w * cdfAt(c.pts, m)
			}
			if f/total < q {
				a = m
			} else {
				b = m
			}
		}
		out[i] = b
	}
	return out
}
