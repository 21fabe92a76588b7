package dist

import (
	"math"
	"math/rand/v2"
)

// GeometricDist is a geometric distribution truncated to [min, max]:
// P(k) proportional to p(1-p)^(k-min). Its mean is about min - 1 + 1/p
// when max is far away (2.62 for p = 0.382, min = 1).
type GeometricDist struct {
	min, max int64
	logQ     float64 // log(1-p)
	tail     float64 // (1-p)^(max-min+1): the mass cut off beyond max
	p        float64
}

// NewGeometric makes the truncated geometric distribution; p is clamped to
// (0, 1] and max to at least min.
func NewGeometric(p float64, min, max int64) *GeometricDist {
	if !(p > 0) {
		p = 1e-9
	}
	p = math.Min(p, 1)
	max = int64(math.Max(float64(max), float64(min)))
	g := &GeometricDist{min: min, max: max, p: p}
	if p < 1 {
		g.logQ = math.Log1p(-p)
		g.tail = math.Exp(g.logQ * float64(max-min+1))
	}
	return g
}

// Next draws a value in [min, max] by inversion.
func (g *GeometricDist) Next(r *rand.Rand) int64 {
	if g.p >= 1 {
		return g.min
	}
	u := r.Float64()
	k := int64(math.Floor(math.Log1p(-u*(1-g.tail)) / g.logQ))
	return min(g.min+k, g.max)
}

// Mean is the exact mean of the truncated distribution.
func (g *GeometricDist) Mean() float64 {
	if g.p >= 1 {
		return float64(g.min)
	}
	q := 1 - g.p
	m := float64(g.max - g.min + 1)
	// Mean of k in [0, m) with weights q^k, shifted by min.
	return float64(g.min) + q/g.p - m*g.tail/(1-g.tail)
}

// LogNormalDist draws median * exp(sigma * N(0,1)).
type LogNormalDist struct {
	Median, Sigma float64
}

// NewLogNormal makes a log-normal distribution with the given median and sigma.
func NewLogNormal(median, sigma float64) *LogNormalDist {
	return &LogNormalDist{Median: median, Sigma: sigma}
}

// Sample draws one value.
func (l *LogNormalDist) Sample(r *rand.Rand) float64 {
	return l.Median * math.Exp(l.Sigma*r.NormFloat64())
}

// Quantile is the value below which a fraction u of draws fall.
func (l *LogNormalDist) Quantile(u float64) float64 {
	return l.Median * math.Exp(l.Sigma*math.Sqrt2*math.Erfinv(2*u-1))
}
