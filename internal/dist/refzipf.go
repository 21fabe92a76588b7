package dist

import (
	"math"
	"math/rand/v2"
)

// RefZipf is the reference's Zipf sampler: the quantile approximation of
// Gray et al. ("Quickly Generating Billion-Record Synthetic Databases",
// SIGMOD 1994) over n ranks, with the reference's approximation of the
// generalized harmonic number. Ranks 0 and 1 get their exact Zipf
// probabilities; beyond them the distribution follows a continuous
// approximation of the tail. It is what every published LinkBench figure
// was measured with. Immutable and safe for concurrent use.
type RefZipf struct {
	n     int64
	shape float64
	zetan float64 // the harmonic number H(n, shape), as the reference computes it
	eta   float64
	alpha float64 // 1 / (1 - shape)
	half  float64 // 0.5^shape: rank 1's weight relative to rank 0
}

// NewRefZipf builds the reference's Zipf sampler. Its set-up is bounded
// whatever n: the harmonic sums it needs take at most refExactTerms terms
// (see refHarmonicFast); share one instance between workers.
func NewRefZipf(n int64, shape float64) (*RefZipf, error) {
	if err := checkZipf(n, shape); err != nil {
		return nil, err
	}
	z := &RefZipf{n: n, shape: shape}
	if shape <= 1 {
		z.zetan = refApproxHarmonic(n, shape)
	} else {
		z.zetan = refHarmonicFast(n, shape)
	}
	z.alpha = 1 / (1 - shape) // +Inf at shape 1, as in the reference
	z.eta = (1 - javaPow(2/float64(n), 1-shape)) / (1 - refHarmonic(2, shape)/z.zetan)
	z.half = javaPow(0.5, shape)
	return z, nil
}

// Next draws a rank in [0, n).
func (z *RefZipf) Next(r *rand.Rand) int64 { return z.Quantile(r.Float64()) }

// Quantile maps u in [0, 1) to a rank as the reference does.
func (z *RefZipf) Quantile(u float64) int64 {
	uz := u * z.zetan
	if uz < 1 {
		return 0
	}
	if uz < 1+z.half {
		return min(1, z.n-1)
	}
	off := javaF2L(float64(z.n) * javaPow(z.eta*u-z.eta+1, z.alpha))
	if off >= z.n {
		return z.n - 1
	}
	return off
}

// ExpectedCount is scale * P(rank), computed as the reference's
// expectedCount (the out-degree of a Zipf nlinks_func before rounding).
func (z *RefZipf) ExpectedCount(rank int64, scale float64) float64 {
	if rank < 0 || rank >= z.n {
		return 0
	}
	return scale / javaPow(float64(rank+1), z.shape) / z.zetan
}

// refHarmonic is the generalized harmonic number H(n, m), summed from the
// smallest term up, as the reference sums it.
func refHarmonic(n int64, m float64) float64 {
	v := 0.0
	for k := n; k > 0; k-- {
		v += 1 / math.Pow(float64(k), m)
	}
	return v
}

// refExactTerms is the largest n whose harmonic number H(n, m) for m > 1
// is summed term by term, as the reference sums it (about 40 ms).
const refExactTerms = 1 << 20

// refHarmonicFast is H(n, m) for m > 1 in bounded time: the reference's
// sum up to refExactTerms terms; beyond, the terms above 2^16 by the
// Euler-Maclaurin formula (its next term is below 1e-30 of the sum) and
// the others summed as the reference sums them, smallest first. The
// reference sums every term; the two differ by the rounding of that long
// sum, a few parts in 10^16 (docs/compatibility.md, TestRefHarmonicFast).
func refHarmonicFast(n int64, m float64) float64 {
	if n <= refExactTerms {
		return refHarmonic(n, m)
	}
	const head = 1 << 16
	a, b := float64(head), float64(n)
	f := func(x float64) float64 { return math.Pow(x, -m) }
	d1 := func(x float64) float64 { return -m * math.Pow(x, -m-1) }
	d3 := func(x float64) float64 { return -m * (m + 1) * (m + 2) * math.Pow(x, -m-3) }
	// Terms head+1 .. n.
	v := (math.Pow(b, 1-m)-math.Pow(a, 1-m))/(1-m) + (f(b)-f(a))/2 + (d1(b)-d1(a))/12 - (d3(b)-d3(a))/720
	for k := int64(head); k > 0; k-- {
		v += 1 / math.Pow(float64(k), m)
	}
	return v
}

// refApproxHarmonic is the reference's fast approximation of H(n, m) for
// 0 <= m <= 1: exact below 100,000 terms, else the integral of x^-m plus
// an empirical correction of 0.58 - 1/(1-m) (for m = 1, ln n plus the
// Euler-Mascheroni constant; the reference's 1/(2n) term is an integer
// division, always 0).
func refApproxHarmonic(n int64, m float64) float64 {
	if n < 100000 {
		return refHarmonic(n, m)
	}
	if m == 1 {
		return math.Log(float64(n)) + 0.5772156649015329
	}
	return (1/(1-m))*math.Pow(float64(n), 1-m) + (0.58 - 1/(1-m))
}

// RefGeometric is the reference's geometric sampler on [min, max): the
// inverse of the geometric CDF counted from 1, shifted by min, so that it
// never yields min itself (except for a draw of exactly 0) and its mean is
// about min + 1/p; values beyond max-1 become max-1. The reference uses it
// for the multiget size: with min 1, max 128 and p 0.382 the mean is 3.62
// and no multiget asks for a single id2.
type RefGeometric struct {
	min, max int64
	logQ     float64 // log(1 - p)
}

// NewRefGeometric makes the reference's geometric sampler.
func NewRefGeometric(p float64, min, max int64) *RefGeometric {
	return &RefGeometric{min: min, max: max, logQ: math.Log(1 - p)}
}

// Next draws a value.
func (g *RefGeometric) Next(r *rand.Rand) int64 { return g.Quantile(r.Float64()) }

// Quantile maps u in [0, 1) to a value as the reference does.
func (g *RefGeometric) Quantile(u float64) int64 {
	if u == 0 {
		return g.min
	}
	x := g.min + javaF2L(math.Ceil(math.Log(1-u)/g.logQ))
	return min(x, g.max-1)
}

// javaPow is math.Pow with Java's answers where the two differ: Java
// gives NaN for a NaN exponent and for (+-1)^(+-Inf).
func javaPow(x, y float64) float64 {
	if math.IsNaN(y) || (math.IsInf(y, 0) && math.Abs(x) == 1) {
		return math.NaN()
	}
	return math.Pow(x, y)
}

// javaF2L converts as Java's (long) cast: NaN is 0, out-of-range values
// saturate, the rest truncate toward zero.
func javaF2L(x float64) int64 {
	switch {
	case math.IsNaN(x):
		return 0
	case x >= math.MaxInt64:
		return math.MaxInt64
	case x <= math.MinInt64:
		return math.MinInt64
	}
	return int64(x)
}

// JavaRound is Java's Math.round for the non-negative values the
// reference rounds (out-degrees): half rounds up.
func JavaRound(x float64) int64 {
	f := math.Floor(x)
	if x-f >= 0.5 {
		f++
	}
	return javaF2L(f)
}
