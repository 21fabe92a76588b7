package report

import (
	"math"
	"sort"
)

// What one run cannot show. The bootstrap of noise.go measures how a
// figure varies within a run, second to second. Two runs of one
// configuration also differ by what differs between them: run order,
// database growth, checkpoints and compactions, the machine's other load.
// Two identical SQLite runs one after the other were 25 of 39 figures
// apart beyond their within-run noise (issue 68). A comparison of one run
// per side cannot measure that; it can only refuse to call a change
// significant while it stays inside how far the figure wanders within
// either run over times of the order of the run itself (drift below). A
// comparison with two or more runs on a side measures the spread between
// runs instead (betweenRuns).

// driftParts is how many consecutive parts of a run drift compares: a
// tenth of the run is long enough to average out single seconds and short
// enough to see a run's slow changes (a checkpoint every few minutes of a
// 60 s run shows in one or two tenths).
const driftParts = 10

// drift is how far the figure of any tenth of s strays from the figure of
// the whole of s, as |log(part/whole)|: 0.1 is 10%. A part without a
// value (no requests in it) is left out; a part whose figure is 0 while
// the whole's is not makes the drift infinite (no relative change is
// beyond a figure that was 0 for a tenth of the run). Fewer than
// minBootstrapPoints points give NaN: unknown.
func (s ratioSeries) drift() float64 {
	n := len(s.num)
	if n < minBootstrapPoints {
		return math.NaN()
	}
	whole := s.value()
	if !(whole > 0) {
		return math.NaN()
	}
	k := min(driftParts, n)
	d := 0.0
	for p := 0; p < k; p++ {
		var a, b float64
		for j := p * n / k; j < (p+1)*n/k; j++ {
			a, b = a+s.num[j], b+s.den[j]
		}
		if b <= 0 {
			continue
		}
		d = math.Max(d, math.Abs(math.Log(a/b/whole)))
	}
	return d
}

// betweenRuns is the 95% interval of the relative change of the mean of
// a figure from the runs of side a to those of side b, from the spread
// between runs: a two-sample t interval on the logarithms of the runs'
// figures with their variance pooled over both sides (a side of one run
// adds nothing to the variance and takes the other's), centred on the
// change of the means; and the standard error of that logarithm of the
// change, on df degrees of freedom. It needs three runs in all; Known is
// false otherwise, or when a figure is not positive.
func betweenRuns(a, b []float64) (iv Interval95, df int, se float64) {
	na, nb := len(a), len(b)
	df = na + nb - 2
	if na == 0 || nb == 0 || df < 1 {
		return Interval95{}, 0, 0
	}
	ss := 0.0
	for _, side := range [][]float64{a, b} {
		m := 0.0
		for _, v := range side {
			if !(v > 0) {
				return Interval95{}, 0, 0
			}
			m += math.Log(v) / float64(len(side))
		}
		for _, v := range side {
			ss += (math.Log(v) - m) * (math.Log(v) - m)
		}
	}
	se = math.Sqrt(ss/float64(df)) * math.Sqrt(1/float64(na)+1/float64(nb))
	c := math.Log(mean(b) / mean(a))
	h := tQuantile975(df) * se
	return Interval95{Lo: math.Exp(c-h) - 1, Hi: math.Exp(c+h) - 1, Known: true}, df, se
}

// studentP is the two-sided p-value of t on df degrees of freedom: the
// regularized incomplete beta function I_x(df/2, 1/2) at x = df/(df+t²).
func studentP(t float64, df int) float64 {
	if math.IsNaN(t) {
		return math.NaN()
	}
	if math.IsInf(t, 0) {
		return 0
	}
	n := float64(df)
	return betaInc(n/2, 0.5, n/(n+t*t))
}

// betaInc is the regularized incomplete beta function I_x(a, b), by its
// continued fraction (modified Lentz), on the side of x where it
// converges fast.
func betaInc(a, b, x float64) float64 {
	switch {
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	}
	la, _ := math.Lgamma(a)
	lb, _ := math.Lgamma(b)
	lab, _ := math.Lgamma(a + b)
	front := math.Exp(lab - la - lb + a*math.Log(x) + b*math.Log1p(-x))
	if x > (a+1)/(a+b+2) {
		return 1 - betaInc(b, a, 1-x)
	}
	const tiny = 1e-300
	c, d := 1.0, 1-(a+b)*x/(a+1)
	if math.Abs(d) < tiny {
		d = tiny
	}
	d = 1 / d
	f := d
	for m := 1; m <= 300; m++ {
		fm := float64(m)
		for _, num := range []float64{fm * (b - fm) * x / ((a + 2*fm - 1) * (a + 2*fm)), -(a + fm) * (a + b + fm) * x / ((a + 2*fm) * (a + 2*fm + 1))} {
			d = 1 + num*d
			if math.Abs(d) < tiny {
				d = tiny
			}
			c = 1 + num/c
			if math.Abs(c) < tiny {
				c = tiny
			}
			d = 1 / d
			f *= c * d
		}
		if math.Abs(c*d-1) < 1e-14 {
			break
		}
	}
	return front * f / a
}

// falseDiscoveries is the Benjamini-Hochberg procedure at level q: which
// of the p-values (NaN: not tested) to call significant so that at most a
// fraction q of those called are expected to be false, and, when none is
// really different, any is called in at most a fraction q of
// comparisons.
func falseDiscoveries(ps []float64, q float64) []bool {
	var tested []float64
	for _, p := range ps {
		if !math.IsNaN(p) {
			tested = append(tested, p)
		}
	}
	sort.Float64s(tested)
	cut := -1.0
	for k := len(tested); k >= 1; k-- {
		if tested[k-1] <= float64(k)/float64(len(tested))*q {
			cut = tested[k-1]
			break
		}
	}
	out := make([]bool, len(ps))
	for i, p := range ps {
		out[i] = !math.IsNaN(p) && p <= cut
	}
	return out
}

func mean(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// t975 are the 97.5% quantiles of Student's t for 1 to 30 degrees of
// freedom.
var t975 = [...]float64{12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
	2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
	2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042}

// tQuantile975 is the 97.5% quantile of Student's t with df degrees of
// freedom: the table to 30, then the Cornish-Fisher expansion to its
// second term, within 0.0002 of the exact value beyond 30.
func tQuantile975(df int) float64 {
	if df <= len(t975) {
		return t975[max(df, 1)-1]
	}
	const z = 1.959964
	n := float64(df)
	return z + (z*z*z+z)/(4*n) + (5*math.Pow(z, 5)+16*z*z*z+3*z)/(96*n*n)
}
