package report

import (
	"hash/fnv"
	"math"
	"math/rand/v2"
	"sort"
)

// How a comparison decides whether a difference between two runs exceeds
// their noise (docs/results.md explains the choice).
//
// Every compared figure is a ratio of sums over the run's 1-second
// intervals: requests / seconds for throughput, sum(p99 x count) / count
// for an op's p99 (the count-weighted mean of its interval p99s), CPU
// seconds / requests for CPU per request. The noise of a run is the
// variation of that figure when the run's intervals are resampled: a
// moving-block bootstrap, whose blocks of consecutive intervals keep the
// short-range correlation of a benchmark's seconds (a compaction, a
// checkpoint lasts several of them) that an interval-by-interval
// resampling would ignore. The two runs are resampled independently; the
// 2.5% and 97.5% quantiles of (B*/A* - 1) over the replicates are the 95%
// interval of the relative change. A change is significant when that
// interval excludes 0.
const (
	bootstrapReplicates = 1000
	// maxBootstrapPoints caps the intervals resampled: longer runs are
	// summed into consecutive groups first (the ratios are unchanged).
	maxBootstrapPoints = 400
	// minBootstrapPoints is the fewest intervals a noise estimate needs.
	minBootstrapPoints = 5
)

// ratioSeries is a figure of a run as per-interval numerators and
// denominators: the figure is sum(num) / sum(den).
type ratioSeries struct{ num, den []float64 }

func (s ratioSeries) add(num, den float64) ratioSeries {
	s.num, s.den = append(s.num, num), append(s.den, den)
	return s
}

// value is sum(num) / sum(den) (NaN when den sums to 0).
func (s ratioSeries) value() float64 {
	var n, d float64
	for i := range s.num {
		n, d = n+s.num[i], d+s.den[i]
	}
	if d == 0 {
		return math.NaN()
	}
	return n / d
}

// grouped sums consecutive points so that at most max remain.
func (s ratioSeries) grouped(max int) ratioSeries {
	n := len(s.num)
	if n <= max {
		return s
	}
	per := (n + max - 1) / max
	var out ratioSeries
	for i := 0; i < n; i += per {
		var a, b float64
		for j := i; j < min(i+per, n); j++ {
			a, b = a+s.num[j], b+s.den[j]
		}
		out = out.add(a, b)
	}
	return out
}

// blockLen is the bootstrap block length for n points: n^(1/3), the
// order that balances the bias and variance of the moving-block bootstrap
// of a mean (Hall, Horowitz and Jing 1995).
func blockLen(n int) int { return max(1, int(math.Round(math.Cbrt(float64(n))))) }

// resample draws one moving-block bootstrap replicate of s with blocks of
// l points and returns its ratio.
func (s ratioSeries) resample(rng *rand.Rand, l int) float64 {
	n := len(s.num)
	l = min(max(l, 1), n)
	var a, b float64
	for got := 0; got < n; {
		start := rng.IntN(n - l + 1)
		for j := start; j < start+l && got < n; j++ {
			a, b = a+s.num[j], b+s.den[j]
			got++
		}
	}
	if b == 0 {
		return math.NaN()
	}
	return a / b
}

// Interval95 is the 95% bootstrap interval of a relative change.
type Interval95 struct {
	Lo, Hi float64
	// Known is false when a run has too few intervals for an estimate.
	Known bool
}

// changeInterval bootstraps the relative change of the figure from run a
// to run b. seed fixes the replicates, so a comparison prints the same
// figures every time it is made.
func changeInterval(a, b ratioSeries, seed string) Interval95 {
	return sidesInterval([]ratioSeries{a}, []ratioSeries{b}, seed, 0)
}

// changeIntervalBlocks is changeInterval with blocks of l points.
func changeIntervalBlocks(a, b ratioSeries, seed string, l int) Interval95 {
	return sidesInterval([]ratioSeries{a}, []ratioSeries{b}, seed, l)
}

// sidesInterval bootstraps the relative change of the mean figure of the
// runs of side a to that of side b, each run resampled on its own (its
// within-run noise only), with blocks of l points (0: blockLen of each
// run's points).
func sidesInterval(a, b []ratioSeries, seed string, l int) Interval95 {
	group := func(side []ratioSeries) ([]ratioSeries, []int, bool) {
		out, ls := make([]ratioSeries, len(side)), make([]int, len(side))
		for i, s := range side {
			out[i] = s.grouped(maxBootstrapPoints)
			if len(out[i].num) < minBootstrapPoints {
				return nil, nil, false
			}
			ls[i] = l
			if l == 0 {
				ls[i] = blockLen(len(out[i].num))
			}
		}
		return out, ls, len(side) > 0
	}
	a, la, okA := group(a)
	b, lb, okB := group(b)
	if !okA || !okB {
		return Interval95{}
	}
	h := fnv.New64a()
	h.Write([]byte(seed))
	rng := rand.New(rand.NewPCG(h.Sum64(), 0x5eed))
	replicate := func(side []ratioSeries, ls []int) float64 {
		m := 0.0
		for i, s := range side {
			m += s.resample(rng, ls[i]) / float64(len(side))
		}
		return m
	}
	rel := make([]float64, 0, bootstrapReplicates)
	for i := 0; i < bootstrapReplicates; i++ {
		va, vb := replicate(a, la), replicate(b, lb)
		if va > 0 && !math.IsNaN(vb) {
			rel = append(rel, vb/va-1)
		}
	}
	if len(rel) < bootstrapReplicates/2 {
		return Interval95{}
	}
	sort.Float64s(rel)
	q := func(p float64) float64 {
		x := p * float64(len(rel)-1)
		i := int(x)
		if i+1 >= len(rel) {
			return rel[len(rel)-1]
		}
		return rel[i] + (x-float64(i))*(rel[i+1]-rel[i])
	}
	return Interval95{Lo: q(0.025), Hi: q(0.975), Known: true}
}

// Significant reports whether the interval excludes no change.
func (iv Interval95) Significant() bool { return iv.Known && (iv.Lo > 0 || iv.Hi < 0) }

// HalfWidth is the noise: half the width of the interval.
func (iv Interval95) HalfWidth() float64 { return (iv.Hi - iv.Lo) / 2 }
