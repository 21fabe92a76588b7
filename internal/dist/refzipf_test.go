package dist

import (
	"math"
	"strings"
	"sync"
	"testing"
	"time"
)

// Vectors printed by the reference (mdcallag/linkbench at 9ef9cc8):
// ApproxHarmonic.generalizedHarmonic, ZipfDistribution.quantile (minus
// min) and GeometricDistribution.quantile.

func TestRefHarmonicMatchesReference(t *testing.T) {
	shapes := []float64{0.3, 0.606, 0.625, 0.741, 0.8, 1.0}
	for _, c := range []struct {
		n    int64
		bits []uint64
	}{
		{3000, []uint64{4645519133885862890, 4633290613029642559, 4632455412074821772, 4628407882007359329, 4626424050765664334, 4621021839655491115}},
		{99999, []uint64{4661688089968016736, 4642467975285503768, 4641165385176151042, 4634826938508342554, 4631609156679248535, 4622995759625922327}},
		{100000, []uint64{4661688168912099313, 4642469124731487379, 4641166480344725314, 4634828490905408292, 4631611632028735239, 4622995762440676797}},
		{1000000, []uint64{4671952582466202889, 4648355702334034327, 4647013259755493947, 4638953209046698954, 4634965734268065475, 4624292002611526402}},
		{10000000, []uint64{4682534329275316470, 4654100070727390093, 4652651347084362254, 4642920393079256584, 4638227301772716757, 4625392530045937700}},
	} {
		for i, s := range shapes {
			got, want := refApproxHarmonic(c.n, s), math.Float64frombits(c.bits[i])
			// The sums use Java's pow; ours may differ in the last bit.
			if math.Abs(got-want) > 1e-13*want {
				t.Errorf("H(%d, %v) = %.17g, the reference's is %.17g", c.n, s, got, want)
			}
		}
	}
}

func TestRefZipfQuantilesMatchReference(t *testing.T) {
	us := []float64{0.0, 0.01, 0.02, 0.03, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.9, 0.99, 0.999, 0.999999}
	for _, c := range []struct {
		n     int64
		shape float64
		ranks []int64
	}{
		{3000, 0.8, []int64{0, 0, 0, 0, 1, 2, 12, 37, 203, 712, 1942, 2877, 2987, 2999}},
		{3000, 0.741, []int64{0, 0, 0, 0, 1, 4, 21, 63, 296, 886, 2082, 2896, 2989, 2999}},
		{3000, 0.625, []int64{0, 0, 1, 1, 3, 13, 57, 147, 515, 1203, 2287, 2923, 2992, 2999}},
		{3000, 1.5, []int64{0, 0, 0, 0, 0, 0, 0, 0, 1, 4, 37, 930, 2574, 2999}},
		{100000, 0.8, []int64{0, 0, 0, 1, 3, 16, 134, 590, 4660, 20025, 61829, 95499, 99542, 99999}},
		{100000, 0.741, []int64{0, 0, 1, 3, 8, 44, 353, 1347, 7995, 26924, 67716, 96342, 99629, 99999}},
		{100000, 0.625, []int64{0, 2, 7, 17, 51, 265, 1503, 4264, 16131, 39030, 75708, 97379, 99735, 99999}},
		{100000, 0.606, []int64{0, 3, 10, 23, 68, 338, 1806, 4908, 17528, 40755, 76688, 97499, 99748, 99999}},
		{100000, 1.5, []int64{0, 0, 0, 0, 0, 0, 0, 0, 1, 5, 44, 3152, 46709, 99907}},
		{10000000, 0.8, []int64{0, 1, 3, 9, 35, 369, 5965, 35276, 367880, 1803603, 6014515, 9525842, 9951751, 9999951}},
		{10000000, 0.741, []int64{0, 3, 16, 46, 209, 2048, 23993, 106559, 720737, 2573637, 6692222, 9623903, 9961908, 9999961}},
		{10000000, 0.625, []int64{0, 68, 360, 994, 3676, 22386, 139158, 407377, 1581667, 3870138, 7554175, 9735972, 9973398, 9999973}},
		{10000000, 0.606, []int64{0, 110, 560, 1496, 5269, 29738, 170231, 474090, 1726775, 4049420, 7656064, 9748429, 9974668, 9999974}},
	} {
		z, err := NewRefZipf(c.n, c.shape)
		if err != nil {
			t.Fatal(err)
		}
		for i, u := range us {
			if got := z.Quantile(u); got != c.ranks[i] {
				t.Errorf("n %d shape %v: quantile(%v) = %d, the reference's is %d", c.n, c.shape, u, got, c.ranks[i])
			}
		}
	}
}

func TestRefGeometricIsTheReferenceMultigetSize(t *testing.T) {
	g := NewRefGeometric(0.382, 1, 128)
	us := []float64{0.0, 0.01, 0.02, 0.03, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.9, 0.99, 0.999, 0.999999}
	want := []int64{1, 2, 2, 2, 2, 2, 2, 2, 3, 4, 6, 11, 16, 30}
	for i, u := range us {
		if got := g.Quantile(u); got != want[i] {
			t.Errorf("quantile(%v) = %d, the reference's is %d", u, got, want[i])
		}
	}
	// The reference sampled 10^7 sizes: mean 3.6172, none of size 1. The
	// mean is 1 + 1/p = 3.618 (the cut at 127 removes 1e-26 of the mass);
	// the standard deviation is sqrt(1-p)/p = 2.06, so 10^6 draws give a
	// standard error of 0.002.
	r := rng(8)
	const n = 1_000_000
	sum, ones := 0.0, 0
	for range n {
		k := g.Next(r)
		if k < 1 || k > 127 {
			t.Fatalf("size %d outside [1, 127]", k)
		}
		if k == 1 {
			ones++
		}
		sum += float64(k)
	}
	if m := sum / n; math.Abs(m-(1+1/0.382)) > 5*0.002 || ones > 0 {
		t.Fatalf("mean size %.4f (want 3.618), %d of size 1 (want 0)", m, ones)
	}
}

func TestRefRealAccessWalksEachValueFromRankZero(t *testing.T) {
	e, err := NewEmpirical("link_nreads", []int64{0, 1, 3}, []float64{50, 80, 100})
	if err != nil {
		t.Fatal(err)
	}
	d := &DataFile{Name: "t.dat", sections: map[string]*Empirical{"link_nreads": e, "link_nwrites": e}}
	sh := NewRefShared()
	// pdf = [.5 .3 0 .2], ccdf = [1 .5 .2 .2], cs = [0 .5 .7 .9]: value 1
	// is chosen 5/9 of the time, values 2 and 3 2/9 each.
	if tab, _ := sh.realTable(d, "link_nreads"); len(tab.cs) != 4 || math.Abs(tab.cs[3]-0.9) > 1e-15 || math.Abs(tab.cs[1]-0.5) > 1e-15 {
		t.Fatalf("table %v", tab.cs)
	}
	a, shuffled, err := NewRefAccess(AccessSpec{Kind: Real, Section: "link_nreads"}, 1000, d, RefOptions{Start: 1, Shared: sh})
	if err != nil || !shuffled {
		t.Fatalf("%v %v", err, shuffled)
	}
	// Every value's cursor starts at rank 0: the first draws stay at the
	// lowest ranks, and after k draws no rank beyond k has been seen.
	r := rng(9)
	seen := map[int64]int{}
	for i := 0; i < 300; i++ {
		k := a.Next(r)
		if k > int64(i) {
			t.Fatalf("draw %d reached rank %d", i, k)
		}
		seen[k]++
	}
	if seen[0] != 3 {
		t.Fatalf("rank 0 seen %d times, want once per count value (3)", seen[0])
	}
	// Workers share the cursors: concurrent draws hand out each (value,
	// rank) once.
	b, _, _ := NewRefAccess(AccessSpec{Kind: Real, Section: "link_nreads"}, 1_000_000, d, RefOptions{Start: 1, Shared: NewRefShared()})
	var wg sync.WaitGroup
	counts := make([]map[int64]int, 4)
	for w := range counts {
		counts[w] = map[int64]int{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rng(uint64(10 + w))
			for range 20000 {
				counts[w][b.Next(r)]++
			}
		}()
	}
	wg.Wait()
	total := map[int64]int{}
	for _, c := range counts {
		for k, v := range c {
			total[k] += v
		}
	}
	if total[0] != 3 {
		t.Fatalf("rank 0 handed out %d times by 4 workers, want 3 (once per count value)", total[0])
	}
	// The node update distribution reads link_nwrites, as the reference's.
	if _, err := sh.realTable(&DataFile{Name: "x.dat", sections: map[string]*Empirical{}}, "node_nwrites"); err == nil || !strings.Contains(err.Error(), "link_nwrites") {
		t.Fatalf("node_nwrites resolved to %v", err)
	}
}

func TestRefArithmeticModes(t *testing.T) {
	r := rng(11)
	prev := int64(7) // as if another node op had just used id 7
	rr, shuffled, _ := NewRefAccess(AccessSpec{Kind: RoundRobin}, 10, nil, RefOptions{Start: 5, Prev: &prev, Shared: NewRefShared()})
	if shuffled {
		t.Fatal("the reference does not shuffle its arithmetic modes")
	}
	var got []int64
	for range 12 {
		o := rr.Next(r)
		got = append(got, o)
		prev = 5 + o
	}
	// From id 7 it walks to the end of [5, 15), wraps to startid1, and
	// then stays there: the reference continues from the previous id only
	// when that id is above startid1.
	if want := []int64{3, 4, 5, 6, 7, 8, 9, 0, 0, 0, 0, 0}; !equal(got, want) {
		t.Fatalf("round robin offsets %v, want %v", got, want)
	}
	stuck, _, _ := NewRefAccess(AccessSpec{Kind: RoundRobin}, 10, nil, RefOptions{Start: 5, Shared: NewRefShared()})
	for range 5 {
		if o := stuck.Next(r); o != 0 {
			t.Fatalf("round robin without a previous id moved to offset %d; the reference's link ops stay on startid1", o)
		}
	}
	for _, s := range []AccessSpec{{Kind: Reciprocal}, {Kind: Multiple, Config: 7}, {Kind: Power, Config: 2}, {Kind: PerfectPower, Config: 2}} {
		a, _, err := NewRefAccess(s, 1000, nil, RefOptions{Start: 1, Shared: NewRefShared()})
		if err != nil {
			t.Fatal(err)
		}
		for range 2000 {
			o := a.Next(r)
			id := 1 + o
			ok := id >= 0 && id <= 1001
			switch s.Kind {
			case Multiple:
				ok = ok && id%7 == 0
			case Power:
				ok = ok && (id&(id-1) == 0 || id == 1000)
			case PerfectPower:
				root := int64(math.Round(math.Sqrt(float64(id))))
				ok = ok && (root*root == id || id == 1000)
			}
			if !ok {
				t.Fatalf("%s: id %d", s.Kind, id)
			}
		}
	}
}

func equal(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func BenchmarkRefZipfNext(b *testing.B) {
	z, _ := NewRefZipf(10_000_000, 0.8)
	r := rng(1)
	b.ReportAllocs()
	var sink int64
	for i := 0; i < b.N; i++ {
		sink += z.Next(r)
	}
	_ = sink
}

// TestRefHarmonicFast: above refExactTerms terms the harmonic number of a
// shape above 1 is within 1e-14 of the reference's sum of every term, so
// the sampler's quantiles and the out-degrees it rounds are the same; and
// it takes moments at 10^12 ids.
func TestRefHarmonicFast(t *testing.T) {
	for _, m := range []float64{1.01, 1.5, 3} {
		for _, n := range []int64{refExactTerms, refExactTerms + 1, 3_000_000} {
			exact, fast := refHarmonic(n, m), refHarmonicFast(n, m)
			if rel := math.Abs(fast-exact) / exact; rel > 1e-14 {
				t.Errorf("H(%d, %v): %.17g, the reference's sum %.17g (%.1e apart)", n, m, fast, exact, rel)
			}
			a, b := &RefZipf{n: n, shape: m, zetan: exact}, &RefZipf{n: n, shape: m, zetan: fast}
			for _, z := range []*RefZipf{a, b} {
				z.alpha = 1 / (1 - m)
				z.eta = (1 - javaPow(2/float64(n), 1-m)) / (1 - refHarmonic(2, m)/z.zetan)
				z.half = javaPow(0.5, m)
			}
			for i := range 100_000 {
				u := float64(i) / 100_000
				if a.Quantile(u) != b.Quantile(u) {
					t.Fatalf("n %d shape %v: quantile(%v) is %d with the reference's sum, %d with the fast one", n, m, u, a.Quantile(u), b.Quantile(u))
				}
			}
			for r := int64(0); r < n; r += 1 + r/64 {
				if JavaRound(a.ExpectedCount(r, float64(n)*30)) != JavaRound(b.ExpectedCount(r, float64(n)*30)) {
					t.Fatalf("n %d shape %v: the out-degree of rank %d differs", n, m, r)
				}
			}
		}
	}
	t0 := time.Now()
	if _, err := NewRefZipf(1_000_000_000_000, 1.5); err != nil || time.Since(t0) > time.Second {
		t.Fatalf("NewRefZipf(10^12, 1.5) took %v (%v)", time.Since(t0), err)
	}
}
