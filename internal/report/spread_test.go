package report

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/linkbench/linkbench/internal/stats"
)

// runValues draws the whole-run figures of n runs whose figure varies
// between runs by a relative sd of sigma around mu (log-normal).
func runValues(rng *rand.Rand, n int, mu, sigma float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = mu * math.Exp(sigma*rng.NormFloat64())
	}
	return out
}

// TestBetweenRunsCalibration: sides of three runs of one distribution are
// called different in 5% of comparisons. Over 400 comparisons the count
// is Binomial(400, 0.05): mean 20, standard deviation 4.4; fewer than 3
// or more than 38 (four deviations) means the t interval is mis-sized.
func TestBetweenRunsCalibration(t *testing.T) {
	rng := rand.New(rand.NewPCG(30, 1))
	const k = 400
	n := 0
	for i := 0; i < k; i++ {
		if iv, df, _ := betweenRuns(runValues(rng, 3, 1000, 0.05), runValues(rng, 3, 1000, 0.05)); df != 4 || !iv.Known {
			t.Fatalf("3 against 3 runs: %+v on %d degrees of freedom", iv, df)
		} else if iv.Significant() {
			n++
		}
	}
	t.Logf("%d of %d equal pairs of sides called different (expected 20 ± 4.4)", n, k)
	if n < 3 || n > 38 {
		t.Fatalf("%d of %d equal pairs of sides called different; expected about 20", n, k)
	}
}

// TestBetweenRunsFindsAShift: a 30% change between sides of three runs
// that differ by 5% is log(1.3)/(0.05 sqrt(2/3)) = 6.4 standard errors;
// on 4 degrees of freedom the t test at 2.776 misses it with probability
// under 2% (the estimated deviation would have to come out 2.3 times too
// large, chi-square(4) > 21: 3e-4, or the draw fall 3.7 deviations short:
// 1e-4). Over 100 comparisons, 4 misses or more would be a wrong width.
func TestBetweenRunsFindsAShift(t *testing.T) {
	rng := rand.New(rand.NewPCG(30, 2))
	const k = 100
	found := 0
	for i := 0; i < k; i++ {
		iv, _, _ := betweenRuns(runValues(rng, 3, 1000, 0.05), runValues(rng, 3, 1300, 0.05))
		if iv.Significant() && iv.Lo > 0 {
			found++
		}
	}
	t.Logf("a 30%% shift found in %d of %d comparisons", found, k)
	if found < k-3 {
		t.Fatalf("a 30%% shift found in only %d of %d comparisons", found, k)
	}
	// One run against one: no spread between runs to measure.
	if iv, _, _ := betweenRuns([]float64{1}, []float64{2}); iv.Known {
		t.Error("one run against one gave a between-run interval")
	}
	// One run against two: the pair's spread, on one degree of freedom.
	if iv, df, _ := betweenRuns([]float64{100}, []float64{110, 90}); !iv.Known || df != 1 || iv.Lo > -0.5 || iv.Hi < 0.5 {
		t.Errorf("one run against two: %+v on %d degrees of freedom", iv, df)
	}
}

// TestDriftGuardsOneRunPerSide: with one run per side, a change smaller
// than how far either run's own tenths wander is within noise, although
// the second-by-second bootstrap alone calls it (runs that climb from 950
// to 1050 requests/s, 4% apart); a change beyond that wander is still
// marked beyond the noise within runs, and neither is called significant.
func TestDriftGuardsOneRunPerSide(t *testing.T) {
	rng := rand.New(rand.NewPCG(30, 3))
	climb := func(scale float64) ratioSeries {
		var s ratioSeries
		for i := 0; i < 60; i++ {
			s = s.add(scale*(950+100*float64(i)/59)*(1+0.005*rng.NormFloat64()), 1)
		}
		return s
	}
	a := climb(1)
	if d := a.drift(); math.Abs(d-math.Log(1000.0/955)) > 0.01 {
		t.Errorf("drift of a 950 to 1050 climb %.4f, want about log(1000/955) = %.4f", d, math.Log(1000.0/955))
	}
	for _, c := range []struct {
		scale float64
		want  bool
	}{{1.04, false}, {1.25, true}} {
		b := climb(c.scale)
		d := Delta{Change: b.value()/a.value() - 1, Noise: changeInterval(a, b, "x"), Drift: math.Max(a.drift(), b.drift())}
		if !d.Noise.Significant() {
			t.Fatalf("%+.0f%%: the bootstrap alone does not see it; the test shows nothing", 100*(c.scale-1))
		}
		if d.Beyond() != c.want || d.Significant() {
			t.Errorf("%+.1f%% change, drift %.3f, bootstrap ±%.3f: beyond the noise within runs %v, want %v; significant %v, want false (one run per side)",
				100*d.Change, d.Drift, d.Noise.HalfWidth(), d.Beyond(), c.want, d.Significant())
		}
	}
	var short ratioSeries
	for i := 0; i < 4; i++ {
		short = short.add(1, 1)
	}
	if !math.IsNaN(short.drift()) {
		t.Error("4 intervals gave a drift")
	}
}

// TestTQuantile: the table and the expansion beyond it against exact
// 97.5% quantiles of Student's t.
func TestTQuantile(t *testing.T) {
	for df, want := range map[int]float64{1: 12.706, 4: 2.776, 30: 2.042, 31: 2.0395, 60: 2.0003, 120: 1.9799, 1000: 1.9623} {
		if got := tQuantile975(df); math.Abs(got-want) > 5e-4 {
			t.Errorf("t(0.975, %d) = %.4f, want %.4f", df, got, want)
		}
	}
}

// TestSidesWithRunsLackingFigures: a run of a side without the
// efficiency or all-ops figures the first run has leaves those figures
// out of the comparison instead of failing it.
func TestSidesWithRunsLackingFigures(t *testing.T) {
	bare := sampleResults("sqlite", 1.01)
	bare.Efficiency, bare.AllOps = nil, nil
	full := sampleResults("sqlite", 1)
	full.AllOps = &stats.OpSummary{Percentiles: stats.Percentiles{P50: 0.1, P99: 1, P999: 1.5}}
	sides := []Side{{Runs: []*Results{full, bare}, RunNames: []string{"a", "b"}}, {Runs: []*Results{full}, RunNames: []string{"c"}}}
	for _, d := range CompareSides(sides)[0].Deltas {
		if strings.HasPrefix(d.Metric, "all ops") || strings.Contains(d.Metric, "CPU") || strings.HasPrefix(d.Metric, "KB") {
			t.Errorf("%s compared although a run lacks it", d.Metric)
		}
	}
}

// TestStudentP: the p-values of the t distribution's 97.5% quantiles are
// 5%, on 1, 4, 30 and a million degrees of freedom; 0 for an infinite t,
// 1 for t = 0.
func TestStudentP(t *testing.T) {
	for df, q := range map[int]float64{1: 12.706, 4: 2.776, 30: 2.042, 1000000: 1.95997} {
		if p := studentP(q, df); math.Abs(p-0.05) > 2e-4 {
			t.Errorf("p(t=%v, %d df) = %.5f, want 0.05", q, df, p)
		}
	}
	if studentP(math.Inf(1), 3) != 0 || math.Abs(studentP(0, 3)-1) > 1e-12 {
		t.Errorf("p(inf) = %v, p(0) = %v", studentP(math.Inf(1), 3), studentP(0, 3))
	}
}

// comparisonsOfSides makes k comparisons of sides of three runs over 39
// figures (5% apart between runs), of which the first shifted figures
// change by 30%, and counts the comparisons that call any unchanged
// figure significant, the unchanged figures called and the shifted ones.
func comparisonsOfSides(seed uint64, k, shifted int) (alarms, falseCalls, found int) {
	rng := rand.New(rand.NewPCG(31, seed))
	for i := 0; i < k; i++ {
		ps := make([]float64, 39)
		for f := range ps {
			mu := 1000.0
			if f < shifted {
				mu = 1300
			}
			a, b := runValues(rng, 3, 1000, 0.05), runValues(rng, 3, mu, 0.05)
			_, df, se := betweenRuns(a, b)
			ps[f] = studentP(math.Log(mean(b)/mean(a))/se, df)
		}
		alarm := false
		for f, sig := range falseDiscoveries(ps, 0.05) {
			switch {
			case sig && f < shifted:
				found++
			case sig:
				alarm = true
				falseCalls++
			}
		}
		if alarm {
			alarms++
		}
	}
	return alarms, falseCalls, found
}

// TestIdenticalSidesRarelyCallAnything: Benjamini-Hochberg at 5% over a
// comparison's 39 figures calls any figure of identical sides significant
// in at most 5% of comparisons (each figure alone is beyond its 95%
// interval in 5%, so a comparison has one in 86% of cases). Over 200
// comparisons the count is at most Binomial(200, 0.05): mean 10,
// deviation 3.1; 23 or more is four deviations. With ten figures changed
// by 30% (6.4 standard errors on 4 degrees of freedom), at most 5% x
// 29/39 = 3.7% of the figures called are expected to be unchanged ones:
// over 100 comparisons about 900 calls, of which 34 false, deviation
// about 6; 60 would be four deviations. The changed figures are found
// when their t passes about 4.6 (BH's threshold with nine calls among 39),
// in 88% of cases: 800 of 1,000 is four deviations of the count below.
func TestIdenticalSidesRarelyCallAnything(t *testing.T) {
	alarms, _, _ := comparisonsOfSides(1, 200, 0)
	t.Logf("%d of 200 comparisons of identical sides called a figure significant", alarms)
	if alarms > 22 {
		t.Errorf("%d of 200 comparisons of identical sides called a figure significant; at most about 10 expected", alarms)
	}
	_, falseCalls, found := comparisonsOfSides(2, 100, 10)
	t.Logf("with 10 figures changed by 30%%: %d of 1000 found, %d unchanged figures called", found, falseCalls)
	if found < 800 || falseCalls > 60 {
		t.Errorf("with 10 figures changed by 30%%: %d of 1000 found, %d unchanged figures called", found, falseCalls)
	}
}
