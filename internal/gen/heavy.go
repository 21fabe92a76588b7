package gen

import (
	"iter"
	"math"
	"slices"
)

// Heavy yields, in increasing order, every id whose adjacency lists are
// longer than minPer links (LinksPerType(id) > minPer), without visiting
// the other ids, so that one process of a --shard load finds the super
// nodes it shares with the others in time independent of maxid1.
//
// The degree modes placed by rank ("real", "dist") give fewer links to a
// higher rank: the heavy ids are the ranks below a bound found by binary
// search, mapped through the degree shuffler (dist.Shuffler.Permuted). "reciprocal"
// gives fewer links to a higher id: the heavy ids are a prefix. The other
// arithmetic modes give every id at least nlinks_default and more only
// to the ids they single out (multiples, powers, perfect powers), which
// are enumerated as the reference computes them. When every id is heavy
// (a constant degree above minPer) every id is yielded.
func (g *Graph) Heavy(minPer int64) iter.Seq[int64] {
	start, end := g.spec.StartID1, g.spec.MaxID1
	types := int64(len(g.types))
	heavy := func(total int64) bool { return max(total, types)/types > minPer }
	span := func(lo, hi int64) iter.Seq[int64] {
		return func(yield func(int64) bool) {
			for id := lo; id < hi; id++ {
				if !yield(id) {
					return
				}
			}
		}
	}
	list := func(ids []int64) iter.Seq[int64] {
		return func(yield func(int64) bool) {
			for _, id := range ids {
				if !yield(id) {
					return
				}
			}
		}
	}
	s := g.spec.NLinks
	switch s.Func {
	case "real", "dist":
		k := firstFalse(0, g.n, func(p int64) bool { return heavy(g.totalAtRank(p)) })
		if k == g.n {
			return span(start, end)
		}
		return func(yield func(int64) bool) {
			for off := range g.degree.Permuted(k) {
				if !yield(start + off) {
					return
				}
			}
		}
	case "reciprocal":
		return span(start, firstFalse(start, end, func(id int64) bool { return heavy(g.TotalLinks(id)) }))
	}
	if heavy(s.Default) {
		return span(start, end) // nlinks_default is every id's least
	}
	// The ids an arithmetic mode singles out, as the reference computes
	// them, in increasing order; each is checked below.
	var candidates []int64
	switch c := s.Config; s.Func {
	case "multiples":
		if c == 1 {
			return span(start, firstFalse(start, end, func(id int64) bool { return heavy(g.TotalLinks(id)) }))
		}
		return func(yield func(int64) bool) {
			if !heavy(s.Default + c) {
				return
			}
			for id := (start + c - 1) / c * c; id < end; id += c {
				if !yield(id) {
					return
				}
			}
		}
	case "exponential":
		for k := 0.0; ; k++ {
			v := int64(math.Pow(float64(c), k))
			if v >= end || v < 1 {
				break
			}
			candidates = append(candidates, v)
		}
	case "perfect_powers":
		if c == 1 {
			// Every id is its own first power: one more link than the default.
			if heavy(s.Default + 1) {
				return span(start, end)
			}
			return list(nil)
		}
		for r := 1.0; ; r++ {
			v := int64(math.Pow(r, float64(c)))
			if v >= end || v < 1 {
				break
			}
			candidates = append(candidates, v)
		}
	}
	slices.Sort(candidates)
	candidates = slices.Compact(candidates)
	ids := candidates[:0]
	for _, id := range candidates {
		if id >= start && heavy(g.TotalLinks(id)) {
			ids = append(ids, id)
		}
	}
	return list(ids)
}

// firstFalse is the first x in [lo, hi) where f is false, for f true on a
// prefix of the range (hi when f is true everywhere).
func firstFalse(lo, hi int64, f func(int64) bool) int64 {
	for lo < hi {
		mid := lo + (hi-lo)/2
		if f(mid) {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}
