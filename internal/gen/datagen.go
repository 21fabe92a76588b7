package gen

import (
	"fmt"
	"math/rand/v2"
)

// DataGen fills payloads. Implementations are immutable after construction
// and safe for concurrent use with distinct *rand.Rand values.
type DataGen interface {
	Fill(r *rand.Rand, dst []byte)
}

// chunk is the largest piece a motif generator fills at once.
const chunk = 128

// NewDataGen builds the generator of spec; the motif buffer is drawn from seed.
func NewDataGen(spec DataGenSpec, seed uint64) (DataGen, error) {
	if spec.StartByte < 0 || spec.EndByte > 255 || spec.StartByte > spec.EndByte {
		return nil, fmt.Errorf("byte range [%d, %d] must lie within [0, 255] with start <= end", spec.StartByte, spec.EndByte)
	}
	u := uniformGen{start: byte(spec.StartByte), span: uint64(spec.EndByte-spec.StartByte) + 1}
	switch spec.Kind {
	case "uniform":
		return u, nil
	case "motif", "":
		if spec.Uniqueness < 0 || spec.Uniqueness > 1 {
			return nil, fmt.Errorf("uniqueness %v must be in [0, 1]", spec.Uniqueness)
		}
		n := spec.MotifLength
		if n <= 0 {
			n = 512
		}
		m := &motifGen{uniformGen: u, uniqueness: spec.Uniqueness, motif: make([]byte, n)}
		u.Fill(rand.New(rand.NewPCG(seed, 0x6d6f746966)), m.motif)
		return m, nil
	}
	return nil, fmt.Errorf("unknown data generator %q (expected motif or uniform)", spec.Kind)
}

// uniformGen draws every byte uniformly from [start, start+span).
type uniformGen struct {
	start byte
	span  uint64
}

func (g uniformGen) Fill(r *rand.Rand, dst []byte) {
	for len(dst) >= 8 {
		x := r.Uint64()
		for i := 0; i < 8; i++ {
			dst[i] = g.start + byte(((x>>(8*i))&0xff)*g.span>>8)
		}
		dst = dst[8:]
	}
	if len(dst) > 0 {
		x := r.Uint64()
		for i := range dst {
			dst[i] = g.start + byte(((x>>(8*i))&0xff)*g.span>>8)
		}
	}
}

// motifGen fills chunks either with fresh random bytes (probability
// uniqueness) or with a copy of a random window of its motif buffer, so
// lower uniqueness gives more compressible payloads.
type motifGen struct {
	uniformGen
	uniqueness float64
	motif      []byte
}

func (g *motifGen) Fill(r *rand.Rand, dst []byte) {
	for len(dst) > 0 {
		n := min(len(dst), chunk, len(g.motif))
		if r.Float64() < g.uniqueness {
			g.uniformGen.Fill(r, dst[:n])
		} else {
			off := r.IntN(len(g.motif) - n + 1)
			copy(dst[:n], g.motif[off:off+n])
		}
		dst = dst[n:]
	}
}
