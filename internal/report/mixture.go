package report

import (
	"math"

	"github.com/linkbench/linkbench/internal/stats"
)

// quantilePoints are an op's summary percentiles as (normal score,
// latency) pairs: a piecewise picture of its distribution. Its minimum and
// maximum of n samples stand at the fractions 0.5/n and 1 - 0.5/n.
func quantilePoints(p stats.Percentiles, n int64) [][2]float64 {
	edge := 0.5 / float64(max(n, 2))
	fr := []float64{edge, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999, 1 - edge}
	vals := []float64{p.Min, p.P25, p.P50, p.P75, p.P90, p.P95, p.P99, p.P999, p.Max}
	var out [][2]float64
	for i, f := range fr {
		// With few samples the high percentiles lie beyond the maximum's
		// fraction: they are the maximum.
		if i > 0 && f >= 1-edge && i < len(fr)-1 {
			continue
		}
		out = append(out, [2]float64{probit(f), vals[i]})
	}
	return out
}

// probit is the standard normal quantile of p.
func probit(p float64) float64 { return math.Sqrt2 * math.Erfinv(2*p-1) }

// normalCDF is the standard normal distribution function.
func normalCDF(z float64) float64 { return 0.5 * (1 + math.Erf(z/math.Sqrt2)) }

// cdfAt is the fraction of a distribution given by quantile points at or
// below x. Between two points, log(latency) is taken as linear in the
// normal score: exact for a log-normal latency, the usual shape of one
// operation's latency, and a fair bend for others (latencies spread over
// decades, and between a p99 of 0.01 ms and a p99.9 of 4 ms most of the
// mass lies near the lower end).
func cdfAt(pts [][2]float64, x float64) float64 {
	if x < pts[0][1] {
		return 0
	}
	for i := 1; i < len(pts); i++ {
		lo, hi := pts[i-1], pts[i]
		if x < hi[1] {
			if hi[1] <= lo[1] {
				return normalCDF(hi[0])
			}
			f := (x - lo[1]) / (hi[1] - lo[1])
			if lo[1] > 0 {
				f = math.Log(x/lo[1]) / math.Log(hi[1]/lo[1])
			}
			return normalCDF(lo[0] + (hi[0]-lo[0])*f)
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
		pts := quantilePoints(o.Percentiles, o.Count)
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
