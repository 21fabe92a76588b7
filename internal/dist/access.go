package dist

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
)

// Access draws popularity ranks in [0, n); rank 0 is the hottest. The
// workload maps ranks to ids through a permutation. An Access may keep
// per-worker state (round robin), so each requester builds its own.
type Access interface {
	Next(r *rand.Rand) int64
}

// NewAccess builds the access distribution of spec over n ranks. data is
// required for Real distributions.
func NewAccess(spec AccessSpec, n int64, data *DataFile) (Access, error) {
	if n < 1 {
		return nil, fmt.Errorf("empty id range")
	}
	c := spec.Config
	switch spec.Kind {
	case Zipf:
		return NewZipf(n, spec.Shape)
	case Uniform:
		return uniformAccess{n}, nil
	case Geometric:
		return NewGeometric(geometricP(spec), 0, n-1), nil
	case LogNormal:
		if err := checkLogNormal(spec); err != nil {
			return nil, err
		}
		return logNormalAccess{d: NewLogNormal(spec.Median, spec.Sigma), n: n}, nil
	case Real:
		if data == nil {
			return nil, fmt.Errorf("a real distribution needs data_file")
		}
		e, ok := data.Section(spec.Section)
		if !ok {
			return nil, fmt.Errorf("%s has no section %q", data.Name, spec.Section)
		}
		return newRealAccess(e, n), nil
	case RoundRobin:
		return &roundRobin{n: n}, nil
	case Reciprocal:
		return reciprocalAccess{n}, nil
	case Multiple:
		if c < 1 {
			return nil, fmt.Errorf("multiple needs config >= 1, got %v", c)
		}
		return multipleAccess{n: n, m: int64(c)}, nil
	case Power:
		if !(c > 0) {
			return nil, fmt.Errorf("power needs config > 0, got %v", c)
		}
		return powerAccess{n: n, e: c}, nil
	case PerfectPower:
		if !(c >= 1) {
			return nil, fmt.Errorf("perfect_power needs config >= 1, got %v", c)
		}
		return perfectPowerAccess{e: c, roots: int64(math.Floor(math.Pow(float64(n), 1/c)))}, nil
	}
	return nil, fmt.Errorf("unknown distribution %q", spec.Kind)
}

// geometricP is the parameter of a geometric access distribution: its
// shape when in (0, 1], else 1/(1 + mean), else 0.5.
func geometricP(spec AccessSpec) float64 {
	switch {
	case spec.Shape > 0 && spec.Shape <= 1:
		return spec.Shape
	case spec.HasMean && spec.Mean > 0:
		return 1 / (1 + spec.Mean)
	}
	return 0.5
}

func checkLogNormal(spec AccessSpec) error {
	if !(spec.Median > 0) || !(spec.Sigma > 0) {
		return fmt.Errorf("lognormal needs median > 0 and sigma > 0")
	}
	return nil
}

type uniformAccess struct{ n int64 }

func (u uniformAccess) Next(r *rand.Rand) int64 { return r.Int64N(u.n) }

type logNormalAccess struct {
	d *LogNormalDist
	n int64
}

func (l logNormalAccess) Next(r *rand.Rand) int64 {
	return min(max(int64(l.d.Sample(r)), 0), l.n-1)
}

// roundRobin visits every rank in turn.
type roundRobin struct{ n, next int64 }

func (rr *roundRobin) Next(*rand.Rand) int64 {
	v := rr.next
	rr.next = (rr.next + 1) % rr.n
	return v
}

// reciprocalAccess draws rank n/k - 1 for k uniform in [1, n]: P ~ 1/x^2 tail.
type reciprocalAccess struct{ n int64 }

func (a reciprocalAccess) Next(r *rand.Rand) int64 { return a.n/(1+r.Int64N(a.n)) - 1 }

// multipleAccess draws uniformly among the multiples of m.
type multipleAccess struct{ n, m int64 }

func (a multipleAccess) Next(r *rand.Rand) int64 { return r.Int64N((a.n+a.m-1)/a.m) * a.m }

// powerAccess draws floor(n * U^e): e > 1 skews toward rank 0.
type powerAccess struct {
	n int64
	e float64
}

func (a powerAccess) Next(r *rand.Rand) int64 {
	return min(int64(float64(a.n)*math.Pow(r.Float64(), a.e)), a.n-1)
}

// perfectPowerAccess draws k^e - 1 for k uniform in [1, n^(1/e)].
type perfectPowerAccess struct {
	e     float64
	roots int64
}

func (a perfectPowerAccess) Next(r *rand.Rand) int64 {
	k := 1 + r.Int64N(max(a.roots, 1))
	return int64(math.Round(math.Pow(float64(k), a.e))) - 1
}

// realAccess draws ranks with probability proportional to the access
// count the empirical distribution gives them. As for the out-degree, rank
// i's count is the smallest value whose cumulative percent is at least
// 100*(1-i/n); the ranks sharing one value form a group, a group is chosen
// by its total weight and a rank uniformly inside it.
type realAccess struct {
	lo, hi []int64   // group g covers ranks [lo[g], hi[g])
	cum    []float64 // cumulative weight up to and including group g
}

func newRealAccess(e *Empirical, n int64) *realAccess {
	ra := &realAccess{}
	total := 0.0
	hi := int64(0)
	// Walk from the largest value (rank 0) down.
	for i := len(e.values) - 1; i >= 0; i-- {
		lowerPct := 0.0
		if i > 0 {
			lowerPct = e.cumPct[i-1]
		}
		// Ranks i with 100*(1-i/n) in (lowerPct, cumPct[i]] get values[i]:
		// i in [n(1-cum/100), n(1-lower/100)).
		gLo := hi
		gHi := int64(math.Ceil(float64(n) * (1 - lowerPct/100)))
		gHi = min(max(gHi, gLo), n)
		if gHi > gLo && e.values[i] > 0 {
			total += float64(e.values[i]) * float64(gHi-gLo)
			ra.lo = append(ra.lo, gLo)
			ra.hi = append(ra.hi, gHi)
			ra.cum = append(ra.cum, total)
		}
		hi = gHi
	}
	if len(ra.cum) == 0 { // every count is zero: fall back to uniform
		ra.lo, ra.hi, ra.cum = []int64{0}, []int64{n}, []float64{1}
	}
	return ra
}

func (ra *realAccess) Next(r *rand.Rand) int64 {
	u := r.Float64() * ra.cum[len(ra.cum)-1]
	g := sort.SearchFloat64s(ra.cum, u)
	if g >= len(ra.cum) {
		g = len(ra.cum) - 1
	}
	return ra.lo[g] + r.Int64N(ra.hi[g]-ra.lo[g])
}
