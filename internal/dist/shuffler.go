package dist

import (
	"container/heap"
	"iter"
	"math"
)

// Seeds and group count of the reference's shufflers. They are constants
// of the benchmark, not configuration: every run of every driver maps
// ranks to the same ids.
const (
	// DegreeShufflerSeed places out-degrees on ids and aims the correlated
	// link reads and writes (rank k of a correlated distribution is the id
	// with the k-th largest degree).
	DegreeShufflerSeed int64 = 20343988438726021
	// UncorrShufflerSeed maps the uncorrelated link reads and writes: one
	// seed for both, so the ids most read are the ids most written.
	UncorrShufflerSeed int64 = 53238253823453
	// NodeShufflerSeed maps node reads, updates and deletes.
	NodeShufflerSeed int64 = 4766565305853767165
	// ShuffleGroups is the reference's group count for every shuffler.
	ShuffleGroups = 1024
)

// Shuffler is the reference's invertible shuffle of [0, n): the range is
// dealt into g residue classes modulo g (g = min(1024, n)), and each class
// is rotated by its own amount, drawn once from java.util.Random seeded
// with the shuffler's seed. Permute maps a popularity rank to an offset
// from startid1; Invert maps an offset back to its rank. Both are O(1),
// allocate nothing and are safe for concurrent use.
//
// The result is the reference's bit for bit: the same seed and n give the
// same permutation, so a graph loaded here has every degree on the id the
// reference gives it, and every access rank reaches the reference's id.
type Shuffler struct {
	n       int64
	groups  int64
	mask    int64 // groups-1 when groups is a power of two, else -1
	minSize int64 // members of the smaller classes: n / groups
	nBig    int64 // classes [0, nBig) have minSize+1 members
	ringBig int64 // span of a large class: groups*(minSize+1)
	ringSm  int64 // span of a small class: groups*minSize
	rot     []int64
}

// NewShuffler builds the shuffler of [0, n) for seed with the given group
// count (the reference always uses ShuffleGroups). n < 1 gives a shuffler
// of the empty range.
func NewShuffler(seed int64, groups int, n int64) *Shuffler {
	s := &Shuffler{n: n, mask: -1}
	if n < 1 {
		return s
	}
	g := int64(max(groups, 1))
	if g > n {
		g = n // never more classes than items
	}
	s.groups = g
	if g&(g-1) == 0 {
		s.mask = g - 1
	}
	// The reference computes the class size from n cast to a 32-bit int,
	// which only works below 2^31 ids; above that (a graph the reference
	// cannot load) the size is computed in 64 bits.
	if n <= math.MaxInt32 {
		s.minSize = int64(int32(n) / int32(g))
	} else {
		s.minSize = n / g
	}
	s.nBig = n % g
	s.ringBig = g * (s.minSize + 1)
	s.ringSm = g * s.minSize
	r := NewJavaRandom(seed)
	s.rot = make([]int64, g)
	for i := range s.rot {
		if s.minSize <= math.MaxInt32 {
			s.rot[i] = int64(r.NextIntN(int32(s.minSize)))
		} else {
			s.rot[i] = int64(uint64(r.NextLong())>>1) % s.minSize
		}
	}
	return s
}

// N is the size of the shuffled range.
func (s *Shuffler) N() int64 { return s.n }

// Permute maps i in [0, n) to its shuffled position (a rank to an offset).
func (s *Shuffler) Permute(i int64) int64 { return s.shift(i, false) }

// Invert is the inverse of Permute: Invert(Permute(i)) == i.
func (s *Shuffler) Invert(j int64) int64 { return s.shift(j, true) }

// shift rotates i inside its residue class. A class of m members spans
// groups*m ids, so one subtraction replaces the reference's modulo.
func (s *Shuffler) shift(i int64, inverse bool) int64 {
	var class int64
	if s.mask >= 0 {
		class = i & s.mask
	} else {
		class = i % s.groups
	}
	rot, size, ring := s.rot[class], s.minSize, s.ringSm
	if class < s.nBig {
		size, ring = s.minSize+1, s.ringBig
	}
	if inverse {
		rot = size - rot
	}
	j := i + s.groups*rot
	if j >= s.n {
		j -= ring
	}
	return j
}

// Permuted yields Permute(p) for every p < k, in increasing order, in
// O(k log groups) time and O(groups) memory: within a residue class the
// shuffle is a rotation, so the first ranks of each class land on at most
// two runs of the class's members, merged here.
func (s *Shuffler) Permuted(k int64) iter.Seq[int64] {
	return func(yield func(int64) bool) {
		k = min(k, s.n)
		if k <= 0 {
			return
		}
		var h runs
		for c := range min(s.groups, k) {
			size := s.minSize
			if c < s.nBig {
				size++
			}
			m := (k - c + s.groups - 1) / s.groups // ranks c, c+g, ... below k
			a, b := s.rot[c], s.rot[c]+m           // their members' indexes, mod size
			if b <= size {
				h = append(h, run{next: c + s.groups*a, last: c + s.groups*(b-1)})
			} else {
				h = append(h, run{next: c + s.groups*a, last: c + s.groups*(size-1)}, run{next: c, last: c + s.groups*(b-size-1)})
			}
		}
		heap.Init(&h)
		for len(h) > 0 {
			if !yield(h[0].next) {
				return
			}
			if h[0].next += s.groups; h[0].next > h[0].last {
				heap.Pop(&h)
			} else {
				heap.Fix(&h, 0)
			}
		}
	}
}

// run is the ids next, next+groups, ..., last of one residue class.
type run struct{ next, last int64 }

// runs is a min-heap of runs by their next id.
type runs []run

func (h runs) Len() int           { return len(h) }
func (h runs) Less(i, j int) bool { return h[i].next < h[j].next }
func (h runs) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *runs) Push(x any)        { *h = append(*h, x.(run)) }
func (h *runs) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
