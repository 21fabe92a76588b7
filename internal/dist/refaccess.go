package dist

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"sync"
	"sync/atomic"
)

// RefShared is the state the reference's access distributions share
// between the workers of one request phase: Zipf samplers (their set-up is
// costly, the samplers immutable) and the cursors of its real
// distributions, which are process-wide in the reference. Safe for
// concurrent use.
type RefShared struct {
	mu    sync.Mutex
	zipfs map[zipfKey]*RefZipf
	real  map[string]*refRealTable
}

type zipfKey struct {
	n     int64
	shape float64
}

// NewRefShared makes the shared state of one request phase.
func NewRefShared() *RefShared {
	return &RefShared{zipfs: map[zipfKey]*RefZipf{}, real: map[string]*refRealTable{}}
}

func (s *RefShared) zipf(n int64, shape float64) (*RefZipf, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := zipfKey{n, shape}
	if z, ok := s.zipfs[k]; ok {
		return z, nil
	}
	z, err := NewRefZipf(n, shape)
	if err == nil {
		s.zipfs[k] = z
	}
	return z, err
}

// RefOptions are what the reference's access distributions need beyond
// their spec.
type RefOptions struct {
	// Start is startid1: the reference's arithmetic modes compute ids,
	// which the workload turns back into offsets from it.
	Start int64
	// Prev, when set, is the id the worker used last, which the reference's
	// round robin continues from. Its link operations pass a fresh link's
	// id1, always 0, so they leave Prev nil and stay on startid1.
	Prev *int64
	// Shared is the phase's shared state (required).
	Shared *RefShared
}

// NewRefAccess builds the reference's sampler for spec over n ids. When
// shuffled is true it yields popularity ranks for the workload to map
// through a Shuffler, as the reference does for its probability
// distributions; otherwise it yields offsets from startid1 to use as they
// are (the reference's arithmetic modes are never shuffled, and can step
// outside [0, n) exactly where the reference does).
func NewRefAccess(spec AccessSpec, n int64, data *DataFile, o RefOptions) (a Access, shuffled bool, err error) {
	if n < 1 {
		return nil, false, fmt.Errorf("empty id range")
	}
	switch spec.Kind {
	case Zipf:
		z, err := o.Shared.zipf(n, spec.Shape)
		return z, true, err
	case Uniform:
		return uniformAccess{n}, true, nil
	case Geometric:
		return NewRefGeometric(geometricP(spec), 0, n), true, nil
	case LogNormal:
		if err := checkLogNormal(spec); err != nil {
			return nil, false, err
		}
		return refLogNormal{d: NewLogNormal(spec.Median, spec.Sigma), start: o.Start, n: n}, true, nil
	case Real:
		if data == nil {
			return nil, false, fmt.Errorf("a real distribution needs data_file")
		}
		t, err := o.Shared.realTable(data, spec.Section)
		if err != nil {
			return nil, false, err
		}
		return &refRealAccess{t: t, n: n}, true, nil
	case RoundRobin, Reciprocal, Multiple, Power, PerfectPower:
		c := int64(spec.Config)
		if spec.Kind != RoundRobin && spec.Kind != Reciprocal && c < 1 {
			return nil, false, fmt.Errorf("%s needs config >= 1, got %v", spec.Kind, spec.Config)
		}
		return &refArith{kind: spec.Kind, start: o.Start, end: o.Start + n, cfg: c, prev: o.Prev}, false, nil
	}
	return nil, false, fmt.Errorf("unknown distribution %q", spec.Kind)
}

// refLogNormal is the reference's log-normal access: the draw rounded and
// clipped to [startid1, maxid1).
type refLogNormal struct {
	d        *LogNormalDist
	start, n int64
}

func (l refLogNormal) Next(r *rand.Rand) int64 {
	v := JavaRound(l.d.Sample(r))
	return min(max(v, l.start), l.start+l.n-1) - l.start
}

// refArith is one of the reference's arithmetic access modes. They draw a
// uniform id u in [start, end) and compute an id from it; the result is
// returned as an offset from start.
type refArith struct {
	kind       Kind
	start, end int64
	cfg        int64
	prev       *int64
}

func (a *refArith) Next(r *rand.Rand) int64 {
	var id int64
	switch a.kind {
	case RoundRobin:
		prev := int64(0)
		if a.prev != nil {
			prev = *a.prev
		}
		id = a.start
		if prev > a.start && prev+1 < a.end {
			id = prev + 1
		}
	case Reciprocal:
		u := a.start + r.Int64N(a.end-a.start)
		id = javaF2L(math.Ceil(float64(a.end-a.start) / float64(u)))
		id = min(max(id, a.start), a.end) // the reference allows end itself
	case Multiple:
		u := a.start + r.Int64N(a.end-a.start)
		id = a.cfg * (u / a.cfg) // integer division: may fall below start
	case Power:
		u := a.start + r.Int64N(a.end-a.start)
		e := math.Ceil(math.Log(float64(u)) / math.Log(float64(a.cfg)))
		id = min(a.end-1, javaF2L(javaPow(float64(a.cfg), e)))
	case PerfectPower:
		u := a.start + r.Int64N(a.end-a.start)
		root := javaF2L(math.Ceil(javaPow(float64(u), 1/float64(a.cfg))))
		id = min(a.end-1, javaF2L(javaPow(float64(root), float64(a.cfg))))
	}
	return id - a.start
}

// maxRealTable bounds the reference's real-distribution table (one entry
// per count value up to the section's largest).
const maxRealTable = 1 << 24

// refRealTable is the reference's sampling table of one data section: cs
// is the cumulative sum of the complementary CDF over the count values
// 1..max, and next holds one cursor per count value.
type refRealTable struct {
	cs   []float64
	next []atomic.Int64
}

// realTable returns the shared table of section. The reference's node
// update distribution reads the link_nwrites data (and shares its cursors
// with the link writes); node_nwrites is never sampled.
func (s *RefShared) realTable(data *DataFile, section string) (*refRealTable, error) {
	if section == "node_nwrites" {
		section = "link_nwrites"
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if t, ok := s.real[section]; ok {
		return t, nil
	}
	e, ok := data.Section(section)
	if !ok {
		return nil, fmt.Errorf("%s has no section %q", data.Name, section)
	}
	top := e.Max()
	if top >= maxRealTable {
		return nil, fmt.Errorf("%s: section %s has counts up to %d, too many for the reference's real distribution table (at most %d); use workload_semantics = corrected", data.Name, section, top, maxRealTable-1)
	}
	pdf := make([]float64, top+1)
	for i, v := range e.values {
		if i == 0 {
			pdf[v] = e.prob[0]
		} else {
			pdf[v] = e.prob[i] - e.prob[i-1]
		}
	}
	ccdf := make([]float64, len(pdf))
	ccdf[len(pdf)-1] = pdf[len(pdf)-1]
	for i := len(pdf) - 2; i >= 0; i-- {
		ccdf[i] = ccdf[i+1] + pdf[i]
	}
	t := &refRealTable{cs: make([]float64, len(pdf)), next: make([]atomic.Int64, len(pdf))}
	for i := 1; i < len(pdf); i++ {
		t.cs[i] = t.cs[i-1] + ccdf[i]
	}
	s.real[section] = t
	return t, nil
}

// refRealAccess is the reference's real access distribution: a count
// value v >= 1 is chosen with probability proportional to the share of
// ids accessed at least v times, and the rank returned is that value's
// cursor, which then advances (modulo n). Every value's cursor starts at
// rank 0, so the hottest ranks are visited by every value and the set of
// hot ranks widens as the run goes on. The cursors are shared by every
// worker of the phase, as the reference's are shared by its threads.
type refRealAccess struct {
	t *refRealTable
	n int64
}

func (a *refRealAccess) Next(r *rand.Rand) int64 {
	cs := a.t.cs
	if len(cs) < 2 {
		return 0
	}
	p := cs[len(cs)-1] * r.Float64()
	idx := sort.SearchFloat64s(cs, p)
	idx = min(max(idx, 1), len(cs)-1)
	return (a.t.next[idx].Add(1) - 1) % a.n
}
