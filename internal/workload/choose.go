package workload

import (
	"math/rand/v2"

	"github.com/linkbench/linkbench/internal/dist"
)

// picker maps one access distribution's draws to ids: a popularity rank
// through the reference's shuffler for that kind of access, or, when shuf
// is nil, an offset from startid1 used as it is (the reference's
// arithmetic modes).
type picker struct {
	access dist.Access
	shuf   *dist.Shuffler
}

func (p picker) pick(r *rand.Rand, start int64) int64 {
	v := p.access.Next(r)
	if p.shuf != nil {
		v = p.shuf.Permute(v)
	}
	return start + v
}

// idChooser picks a link id1: from the correlated distribution (ranks
// mapped through the degree shuffler, so hot ids are high-degree ids),
// or, with probability blend, from the uncorrelated one (the uncorrelated
// shuffler, shared by reads and writes as in the reference).
type idChooser struct {
	start  int64
	corr   picker
	uncorr picker // access nil: no blend
	blend  float64
}

func (c *idChooser) choose(r *rand.Rand) int64 {
	if c.uncorr.access != nil && r.Float64() < c.blend {
		return c.uncorr.pick(r, c.start)
	}
	return c.corr.pick(r, c.start)
}

// nodeChooser picks node ids through the node shuffler, shared by node
// reads, updates and deletes.
type nodeChooser struct {
	start int64
	picker
}

func (c *nodeChooser) choose(r *rand.Rand) int64 { return c.pick(r, c.start) }
