package dist

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// ZipfDist draws ranks in [0, n) with P(k) proportional to 1/(k+1)^shape,
// for any shape > 0, by rejection-inversion sampling (Hörmann and
// Derflinger, 1996): exact, O(1) expected time per draw, no tables.
type ZipfDist struct {
	n        int64
	s        float64
	hX1      float64 // H(1.5) - 1
	hN       float64 // H(n + 0.5)
	sParam   float64
	harmonic float64 // sum of 1/k^s, for Pdf
}

// NewZipf makes a Zipf distribution over n ranks with exponent shape.
func NewZipf(n int64, shape float64) (*ZipfDist, error) {
	if err := checkZipf(n, shape); err != nil {
		return nil, err
	}
	z := &ZipfDist{n: n, s: shape}
	z.hX1 = z.hIntegral(1.5) - 1
	z.hN = z.hIntegral(float64(n) + 0.5)
	z.sParam = 2 - z.hIntegralInv(z.hIntegral(2.5)-z.h(2))
	return z, nil
}

func checkZipf(n int64, shape float64) error {
	if n < 1 {
		return fmt.Errorf("zipf: need at least one rank, got %d", n)
	}
	if !(shape > 0) || math.IsInf(shape, 0) {
		return fmt.Errorf("zipf: shape must be a positive number, got %v", shape)
	}
	return nil
}

// h is the unnormalised density x^-s.
func (z *ZipfDist) h(x float64) float64 { return math.Exp(-z.s * math.Log(x)) }

// hIntegral is the antiderivative of h: (x^(1-s) - 1)/(1-s), log x at s=1.
func (z *ZipfDist) hIntegral(x float64) float64 {
	lx := math.Log(x)
	return expm1OverX((1-z.s)*lx) * lx
}

func (z *ZipfDist) hIntegralInv(x float64) float64 {
	t := x * (1 - z.s)
	if t < -1 {
		t = -1 // rounding guard: the inverse is defined for t >= -1
	}
	return math.Exp(log1pOverX(t) * x)
}

// expm1OverX is (e^x - 1)/x, continuous at 0.
func expm1OverX(x float64) float64 {
	if math.Abs(x) > 1e-8 {
		return math.Expm1(x) / x
	}
	return 1 + x/2*(1+x/3*(1+x/4))
}

// log1pOverX is log(1+x)/x, continuous at 0.
func log1pOverX(x float64) float64 {
	if math.Abs(x) > 1e-8 {
		return math.Log1p(x) / x
	}
	return 1 - x*(0.5-x*(1.0/3-0.25*x))
}

// Next draws a rank in [0, n); rank 0 is the most likely.
func (z *ZipfDist) Next(r *rand.Rand) int64 {
	for {
		u := z.hN + r.Float64()*(z.hX1-z.hN)
		x := z.hIntegralInv(u)
		k := int64(x + 0.5)
		if k < 1 {
			k = 1
		} else if k > z.n {
			k = z.n
		}
		if float64(k)-x <= z.sParam || u >= z.hIntegral(float64(k)+0.5)-z.h(float64(k)) {
			return k - 1
		}
	}
}

// N is the number of ranks.
func (z *ZipfDist) N() int64 { return z.n }

// Pdf is the probability of rank k (computing the normalising sum once,
// in O(n) time, on first use).
func (z *ZipfDist) Pdf(k int64) float64 {
	if k < 0 || k >= z.n {
		return 0
	}
	if z.harmonic == 0 {
		z.harmonic = generalizedHarmonic(z.n, z.s)
	}
	return math.Pow(float64(k+1), -z.s) / z.harmonic
}

// generalizedHarmonic is sum_{k=1..n} k^-s, summed exactly up to a
// million terms and by the Euler-Maclaurin formula beyond.
func generalizedHarmonic(n int64, s float64) float64 {
	const exact = 1 << 20
	sum := 0.0
	m := min(n, exact)
	for k := m; k >= 1; k-- { // small terms first for accuracy
		sum += math.Pow(float64(k), -s)
	}
	if n > m {
		a, b := float64(m), float64(n)
		var integral float64
		if s == 1 {
			integral = math.Log(b / a)
		} else {
			integral = (math.Pow(b, 1-s) - math.Pow(a, 1-s)) / (1 - s)
		}
		// Terms m+1..n: integral from m to n plus the endpoint correction.
		sum += integral + (math.Pow(b, -s)-math.Pow(a, -s))/2 - s/12*(math.Pow(b, -s-1)-math.Pow(a, -s-1))
	}
	return sum
}
