package report

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// series makes n one-second intervals of a throughput with mean mu and
// standard deviation sigma; phi > 0 makes consecutive seconds correlated
// (an AR(1) process with the same marginal variance).
func series(rng *rand.Rand, n int, mu, sigma, phi float64) ratioSeries {
	var s ratioSeries
	e := rng.NormFloat64()
	for i := 0; i < n; i++ {
		e = phi*e + math.Sqrt(1-phi*phi)*rng.NormFloat64()
		s = s.add(mu+sigma*e, 1)
	}
	return s
}

// With n intervals of relative noise c on each side, the relative change
// of the means has a standard error of c*sqrt(2/n) (delta method).
const (
	nIntervals = 120
	relNoise   = 0.05
)

var changeSE = relNoise * math.Sqrt(2.0/nIntervals)

// TestNoiseCalibration: two runs of the same distribution are called
// different in 5% of comparisons. Over 200 comparisons the count is
// Binomial(200, 0.05): mean 10, standard deviation 3.1; 0 or more than
// 22 (four standard deviations) means the intervals are mis-sized.
func TestNoiseCalibration(t *testing.T) {
	const k = 200
	flagged := comparisons(1, k, 1000, func(iv Interval95) bool { return iv.Significant() })
	t.Logf("%d of %d equal pairs called different (expected 10 ± 3.1)", flagged, k)
	if flagged == 0 || flagged > 22 {
		t.Fatalf("%d of %d equal pairs called different; expected about 10", flagged, k)
	}
}

// comparisons compares k pairs of runs with means 1000 and mu2 (5% noise)
// and counts those that pass.
func comparisons(seed uint64, k int, mu2 float64, pass func(Interval95) bool) int {
	rng := rand.New(rand.NewPCG(20, seed))
	n := 0
	for i := 0; i < k; i++ {
		a, b := series(rng, nIntervals, 1000, 1000*relNoise, 0), series(rng, nIntervals, mu2, mu2*relNoise, 0)
		if pass(changeInterval(a, b, fmt.Sprint(i))) {
			n++
		}
	}
	return n
}

// TestNoiseDetectsAShift: a 3% change is 4.65 standard errors, which a 5%
// two-sided test finds with probability Phi(4.65-1.96) = 0.996; over 100
// comparisons the expected misses are 0.36 and 4 or more happen with
// probability 5e-4.
func TestNoiseDetectsAShift(t *testing.T) {
	const k = 100
	found := comparisons(2, k, 1030, func(iv Interval95) bool { return iv.Significant() && iv.Lo > 0 })
	t.Logf("a 3%% shift (%.2f standard errors) found in %d of %d comparisons", 0.03/changeSE, found, k)
	if found < k-3 {
		t.Fatalf("a 3%% shift found in only %d of %d comparisons", found, k)
	}
}

// TestNoiseWidthMatchesTheory: the interval's half-width averages
// 1.96 standard errors. One estimate varies by about 9%: a block
// bootstrap's variance estimate has a relative deviation of
// sqrt(4L/3n) = 24% (blocks of L = 5 of n = 120 points), 12% on the
// deviation of each run, and the 2.5% and 97.5% quantiles of 1,000
// replicates add 3%. The mean of 200 estimates varies by 0.63%; the block
// bootstrap's downward bias on independent data is of the order of L/n
// in variance, 2% in width. 6% covers 2% and four deviations.
func TestNoiseWidthMatchesTheory(t *testing.T) {
	const k = 200
	sum := 0.0
	comparisons(3, k, 1000, func(iv Interval95) bool { sum += iv.HalfWidth(); return true })
	got, want := sum/k, 1.96*changeSE
	t.Logf("mean half-width %.4f, theory %.4f", got, want)
	if math.Abs(got/want-1) > 0.06 {
		t.Fatalf("mean half-width %.4f, want %.4f ± 6%%", got, want)
	}
}

// TestBlocksWidenForCorrelatedSeconds: when consecutive seconds are
// correlated (AR(1), phi = 0.6) the standard error of the mean is
// sqrt((1+phi)/(1-phi)) = 2 times the independent one. Resampling second
// by second misses that; blocks of 7 (n = 400) recover
// sqrt(1 + 2 sum_{k<7} (1-k/7) phi^k) = 1.72 of it. The mean ratio of the
// widths over 20 pairs must exceed 1.4.
func TestBlocksWidenForCorrelatedSeconds(t *testing.T) {
	rng := rand.New(rand.NewPCG(20, 4))
	const k, n = 20, 400
	ratio := 0.0
	for i := 0; i < k; i++ {
		a, b := series(rng, n, 1000, 50, 0.6), series(rng, n, 1000, 50, 0.6)
		blocks := changeInterval(a, b, fmt.Sprint(i)).HalfWidth()
		single := changeIntervalBlocks(a, b, fmt.Sprint(i), 1).HalfWidth()
		ratio += blocks / single / k
	}
	t.Logf("block/second-by-second width ratio %.2f (theory 1.72)", ratio)
	if ratio < 1.4 {
		t.Fatalf("blocks widen the interval by only %.2f on correlated seconds", ratio)
	}
}

// TestGroupingKeepsTheRatio: summing consecutive intervals (long runs)
// leaves the figure unchanged.
func TestGroupingKeepsTheRatio(t *testing.T) {
	rng := rand.New(rand.NewPCG(20, 5))
	s := series(rng, 1001, 1000, 50, 0)
	g := s.grouped(maxBootstrapPoints)
	if len(g.num) > maxBootstrapPoints || math.Abs(g.value()-s.value()) > 1e-9*s.value() {
		t.Fatalf("grouped to %d points, ratio %v vs %v", len(g.num), g.value(), s.value())
	}
	if iv := changeInterval(series(rng, 3, 1, 0.1, 0), s, "x"); iv.Known {
		t.Fatal("3 intervals gave a noise estimate")
	}
}
