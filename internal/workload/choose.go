package workload

import (
	"math/rand/v2"

	"github.com/linkbench/linkbench/internal/dist"
)

// Seeds of the fixed permutations that map access ranks to ids. They do not
// depend on any configured seed, so a request phase in another process maps
// ranks exactly as every other run does.
const (
	readUncorrPermSeed  = 0x5eed_0001_72ea_d001
	writeUncorrPermSeed = 0x5eed_0002_a71e_0002
	nodePermSeed        = 0x5eed_0003_70de_0003
)

// idChooser picks an id in [start, start+n) from a correlated access
// distribution (ranks mapped through the degree permutation, so hot ids
// are high-degree ids), blended with an uncorrelated one (its own
// permutation) for blend percent of picks.
type idChooser struct {
	start       int64
	corr        dist.Access
	corrPerm    *dist.Perm
	uncorr      dist.Access
	uncorrPerm  *dist.Perm
	blend       float64 // percent of picks that use uncorr
	uncorrAlone bool    // no correlated distribution: always uncorr
}

func (c *idChooser) choose(r *rand.Rand) int64 {
	if c.uncorr != nil && (c.uncorrAlone || r.Float64()*100 < c.blend) {
		return c.start + c.uncorrPerm.Apply(c.uncorr.Next(r))
	}
	return c.start + c.corrPerm.Inverse(c.corr.Next(r))
}

// nodeChooser picks node ids through the shared node permutation.
type nodeChooser struct {
	start  int64
	access dist.Access
	perm   *dist.Perm
}

func (c *nodeChooser) choose(r *rand.Rand) int64 {
	return c.start + c.perm.Apply(c.access.Next(r))
}
