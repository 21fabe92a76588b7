package dist

import (
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
)

func rng(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed^0xdead)) }

func TestZipfTopOnePercentShare(t *testing.T) {
	const n, draws = 10_000_000, 1_000_000
	z, err := NewZipf(n, 0.8)
	if err != nil {
		t.Fatal(err)
	}
	r := rng(1)
	top := 0
	for i := 0; i < draws; i++ {
		if z.Next(r) < n/100 {
			top++
		}
	}
	share := 100 * float64(top) / draws
	exact := 100 * generalizedHarmonic(n/100, 0.8) / generalizedHarmonic(n, 0.8)
	// SPEC sanity figure: about 38%. Sampling error is 0.05 points (one
	// standard error); 1 point is the acceptance tolerance.
	if math.Abs(share-38) > 1 || math.Abs(share-exact) > 0.3 {
		t.Fatalf("top 1%% of ranks got %.2f%% of draws (exact %.2f%%), want about 38%%", share, exact)
	}
}

func TestZipfMatchesPdf(t *testing.T) {
	for _, shape := range []float64{0.3, 0.8, 1, 1.5, 3} {
		const n, draws = 50, 400_000
		z, _ := NewZipf(n, shape)
		r := rng(uint64(shape * 100))
		var hits [n]int
		for i := 0; i < draws; i++ {
			k := z.Next(r)
			if k < 0 || k >= n {
				t.Fatalf("rank %d out of range", k)
			}
			hits[k]++
		}
		for k := 0; k < n; k++ {
			p := z.Pdf(int64(k))
			want := p * draws
			// 5 binomial standard errors, plus 1 for tiny expectations.
			tol := 5*math.Sqrt(want*(1-p)) + 1
			if math.Abs(float64(hits[k])-want) > tol {
				t.Errorf("shape %v rank %d: %d draws, want %.0f ± %.0f", shape, k, hits[k], want, tol)
			}
		}
	}
	if _, err := NewZipf(10, 0); err == nil {
		t.Error("shape 0 accepted")
	}
	if _, err := NewZipf(0, 1); err == nil {
		t.Error("n 0 accepted")
	}
}

func TestGeometricMean(t *testing.T) {
	g := NewGeometric(0.382, 1, 128)
	if m := g.Mean(); math.Abs(m-2.618) > 0.01 {
		t.Fatalf("exact mean %v, want 2.618", m)
	}
	r := rng(3)
	const n = 200_000
	sum := 0.0
	for i := 0; i < n; i++ {
		k := g.Next(r)
		if k < 1 || k > 128 {
			t.Fatalf("%d out of [1,128]", k)
		}
		sum += float64(k)
	}
	// Variance of a geometric is q/p^2 = 4.23; standard error 0.0046.
	if got := sum / n; math.Abs(got-g.Mean()) > 5*math.Sqrt(0.618/(0.382*0.382)/n) {
		t.Fatalf("sample mean %v, want %v", got, g.Mean())
	}
	small := NewGeometric(0.1, 5, 7)
	for i := 0; i < 1000; i++ {
		if k := small.Next(r); k < 5 || k > 7 {
			t.Fatalf("truncation: %d", k)
		}
	}
}

func TestLogNormalMedian(t *testing.T) {
	l := NewLogNormal(168, 1)
	r := rng(4)
	const n = 100_001
	below := 0
	for i := 0; i < n; i++ {
		if l.Sample(r) < 168 {
			below++
		}
	}
	// Half the draws fall below the median; standard error 0.16%.
	if f := float64(below) / n; math.Abs(f-0.5) > 5*0.5/math.Sqrt(n) {
		t.Fatalf("%.4f of draws below the median", f)
	}
	if q := l.Quantile(0.5); math.Abs(q-168) > 1e-9 {
		t.Fatalf("quantile(0.5) = %v", q)
	}
}

func TestEmpiricalQuantile(t *testing.T) {
	e, err := NewEmpirical("x", []int64{1, 2, 10}, []float64{50, 90, 100})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		u    float64
		want int64
	}{{0, 1}, {0.5, 1}, {0.5000001, 2}, {0.9, 2}, {0.95, 10}, {1, 10}} {
		if got := e.Quantile(c.u); got != c.want {
			t.Errorf("Quantile(%v) = %d, want %d", c.u, got, c.want)
		}
	}
	if m := e.Mean(); math.Abs(m-(0.5+0.8+1)) > 1e-9 {
		t.Errorf("mean %v", m)
	}
}

// Reliability(input): empty or garbled Distribution.dat | the file, line and problem
func TestParseDataFileErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", "no sections"},
		{"1 50\n", "before any section"},
		{"nlinks\n1 50\n2 40\n", "must increase"},
		{"nlinks\n1 50\nabc 60\n", "expected a non-negative integer"},
		{"nlinks\n1 50\n2 101\n", "percent in [0, 100]"},
		{"nlinks\n1 50\n2 90\n", "last cumulative percent is 90"},
		{"bogus\n1 100\n", "unknown section"},
		{"nlinks\n1 100\nnlinks\n1 100\n", "appears twice"},
		{"nlinks\n1 2 3\n", "expected \"value cumulative_percent\""},
		{"nlinks\n1 NaN\n", "percent in [0, 100]"},
	} {
		_, err := ParseDataFile(strings.NewReader(c.in), "d.dat")
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "d.dat") {
			t.Errorf("%q: got %v, want an error naming d.dat and containing %q", c.in, err, c.want)
		}
	}
}

func shippedData(t testing.TB) *DataFile {
	for _, p := range []string{"../../config/Distribution.dat", "../../../shared/reference/Distribution.dat"} {
		if _, err := os.Stat(p); err == nil {
			d, err := LoadDataFile(p)
			if err != nil {
				t.Fatal(err)
			}
			return d
		}
	}
	t.Skip("Distribution.dat not found")
	return nil
}

func TestShippedDataFile(t *testing.T) {
	d := shippedData(t)
	for _, s := range []string{"nlinks", "link_nreads", "link_nwrites", "node_nreads", "node_nwrites"} {
		if _, ok := d.Section(s); !ok {
			t.Errorf("section %s missing", s)
		}
	}
	nl, _ := d.Section("nlinks")
	if nl.Max() != 4181357 || nl.Quantile(1) != 4181357 {
		t.Fatalf("nlinks max %d", nl.Max())
	}
	if len(d.Hash()) != 64 {
		t.Fatal("hash")
	}
}

func TestRealAccessFollowsCounts(t *testing.T) {
	e, _ := NewEmpirical("x", []int64{1, 9}, []float64{90, 100})
	// n=100: ranks 0..9 have 9 accesses each, ranks 10..99 have 1 each:
	// the top 10 ranks get 90/(90+90) = half the draws.
	a := newRealAccess(e, 100)
	r := rng(5)
	const n = 100_000
	top := 0
	for i := 0; i < n; i++ {
		k := a.Next(r)
		if k < 0 || k >= 100 {
			t.Fatalf("rank %d", k)
		}
		if k < 10 {
			top++
		}
	}
	if f := float64(top) / n; math.Abs(f-0.5) > 5*0.5/math.Sqrt(n) {
		t.Fatalf("top ranks got %.4f of draws, want 0.5", f)
	}
}

func TestAccessKinds(t *testing.T) {
	const n = 1000
	r := rng(6)
	for _, s := range []AccessSpec{
		{Kind: Zipf, Shape: 0.8}, {Kind: Uniform}, {Kind: Geometric, Shape: 0.1}, {Kind: LogNormal, Median: 100, Sigma: 1},
		{Kind: RoundRobin}, {Kind: Reciprocal}, {Kind: Multiple, Config: 7}, {Kind: Power, Config: 2}, {Kind: PerfectPower, Config: 2},
	} {
		a, err := NewAccess(s, n, nil)
		if err != nil {
			t.Fatalf("%v: %v", s.Kind, err)
		}
		for i := 0; i < 10000; i++ {
			if k := a.Next(r); k < 0 || k >= n {
				t.Fatalf("%v: rank %d out of [0,%d)", s.Kind, k, n)
			}
		}
	}
	if _, err := NewAccess(AccessSpec{Kind: Real, Section: "link_nreads"}, n, nil); err == nil {
		t.Error("real without data accepted")
	}
}

func BenchmarkZipfNext(b *testing.B) {
	z, _ := NewZipf(10_000_000, 0.8)
	r := rng(1)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		z.Next(r)
	}
}
