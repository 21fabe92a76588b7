package gen

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/linkbench/linkbench/internal/dist"
	"github.com/linkbench/linkbench/internal/graph"
)

// PlacementVersion names the way degrees are placed on ids; load records
// it with the graph, and the request phase refuses a graph placed another
// way (its correlated accesses and id2 choices would aim at the wrong
// ids). Version 2 is the reference's: the degree rank of an id is the
// inverse of the reference's InvertibleShuffler (seed 20343988438726021,
// 1024 groups), so every id has the degree the reference gives it. Graphs
// loaded before this field existed used a Feistel permutation (version 1).
const PlacementVersion = "2"

// GraphSpec configures the generated graph.
type GraphSpec struct {
	StartID1, MaxID1 int64
	LinkTypeCount    int
	RandomID2Max     int64
	NLinks           NLinksSpec
	Data             *dist.DataFile
	LinkDataSize     float64
	NodeDataSize     float64
	LinkGen, NodeGen DataGenSpec
	Seed             int64
	// NowMs is the load's start time; link times are up to 2^32 ms before it.
	NowMs int64
}

// Graph is the deterministic graph generator. It is immutable and safe for
// concurrent use; per-goroutine state lives in a Worker.
type Graph struct {
	spec     GraphSpec
	n        int64
	types    []int64
	degree   *dist.Shuffler
	nlinks   *dist.Empirical
	zipf     *dist.RefZipf
	linkGen  DataGen
	nodeGen  DataGen
	linkSize *dist.LogNormalDist
	nodeSize *dist.LogNormalDist
}

// NewGraph validates spec and builds the generator.
func NewGraph(spec GraphSpec) (*Graph, error) {
	if spec.StartID1 < 1 || spec.MaxID1 <= spec.StartID1 {
		return nil, fmt.Errorf("id range [%d, %d) is empty or starts below 1", spec.StartID1, spec.MaxID1)
	}
	if spec.LinkTypeCount < 1 {
		return nil, fmt.Errorf("link_type_count must be at least 1, got %d", spec.LinkTypeCount)
	}
	g := &Graph{spec: spec, n: spec.MaxID1 - spec.StartID1}
	for i := 0; i < spec.LinkTypeCount; i++ {
		g.types = append(g.types, graph.DefaultLinkType+int64(i))
	}
	g.degree = dist.NewShuffler(dist.DegreeShufflerSeed, dist.ShuffleGroups, g.n)
	switch spec.NLinks.Func {
	case "real":
		if spec.Data == nil {
			return nil, fmt.Errorf("nlinks_func = real needs data_file")
		}
		e, ok := spec.Data.Section("nlinks")
		if !ok {
			return nil, fmt.Errorf("%s has no nlinks section", spec.Data.Name)
		}
		g.nlinks = e
	case "const", "reciprocal", "multiples", "perfect_powers", "exponential":
		if spec.NLinks.Func != "const" && spec.NLinks.Func != "reciprocal" && spec.NLinks.Config < 1 {
			return nil, fmt.Errorf("nlinks_func = %s needs nlinks_config >= 1", spec.NLinks.Func)
		}
		if spec.NLinks.Func == "exponential" && spec.NLinks.Config < 2 {
			return nil, fmt.Errorf("nlinks_func = exponential needs nlinks_config >= 2")
		}
	case "dist":
		switch spec.NLinks.Dist.Kind {
		case dist.Zipf:
			z, err := dist.NewRefZipf(g.n, spec.NLinks.Dist.Shape)
			if err != nil {
				return nil, fmt.Errorf("nlinks: %w", err)
			}
			g.zipf = z
		case dist.Uniform:
		default:
			return nil, fmt.Errorf("nlinks_func: distribution %q is not supported for out-degrees (use real, zipf, uniform or an arithmetic mode)", spec.NLinks.Dist.Kind)
		}
	default:
		return nil, fmt.Errorf("unknown nlinks_func %q", spec.NLinks.Func)
	}
	var err error
	if g.linkGen, err = NewDataGen(spec.LinkGen, uint64(spec.Seed)^0x11); err != nil {
		return nil, fmt.Errorf("link_add_datagen: %w", err)
	}
	if g.nodeGen, err = NewDataGen(spec.NodeGen, uint64(spec.Seed)^0x22); err != nil {
		return nil, fmt.Errorf("node_add_datagen: %w", err)
	}
	g.linkSize = dist.NewLogNormal(spec.LinkDataSize, 1)
	g.nodeSize = dist.NewLogNormal(spec.NodeDataSize, 1)
	return g, nil
}

// N is the number of ids, MaxID1 - StartID1.
func (g *Graph) N() int64 { return g.n }

// LinkTypes are the link types, 123456789 + i.
func (g *Graph) LinkTypes() []int64 { return g.types }

// DegreeShuffler is the reference's degree shuffler: Invert maps id -
// startid1 to its degree rank (0 = highest degree), Permute maps a rank of
// a correlated access distribution to the offset of the id with that rank.
func (g *Graph) DegreeShuffler() *dist.Shuffler { return g.degree }

// TotalLinks is the out-degree of id1 over all link types (at least one
// per type), the reference's for every id.
func (g *Graph) TotalLinks(id1 int64) int64 {
	s := g.spec.NLinks
	switch s.Func {
	case "real", "dist":
		return g.totalAtRank(g.degree.Invert(id1 - g.spec.StartID1))
	}
	return max(arithmeticLinks(s, id1, g.spec.StartID1, g.spec.MaxID1), int64(len(g.types)))
}

// totalAtRank is TotalLinks of the id of degree rank p, for the modes
// that place degrees by rank ("real", "dist"): it never increases with p.
func (g *Graph) totalAtRank(p int64) int64 {
	var total int64
	s := g.spec.NLinks
	switch s.Func {
	case "real":
		total = g.nlinks.Quantile(1 - float64(p)/float64(g.n))
	case "dist":
		// The reference rounds the distribution's expected count of the
		// rank, scaled by n * nlinks_mean when the mean is set and by 1
		// when it is not (so without a mean nearly every id gets the
		// minimum of one link per type).
		scale := 1.0
		if s.Dist.HasMean {
			scale = float64(g.n) * s.Dist.Mean
		}
		if g.zipf != nil {
			total = dist.JavaRound(g.zipf.ExpectedCount(p, scale))
		} else {
			total = dist.JavaRound(scale / float64(g.n))
		}
	}
	return max(total, int64(len(g.types)))
}

// arithmeticLinks implements the reference's arithmetic out-degree modes;
// they use the id itself, not a permuted rank.
func arithmeticLinks(s NLinksSpec, id1, start, end int64) int64 {
	switch s.Func {
	case "const":
		return s.Default
	case "reciprocal":
		off := max(id1-start, 1)
		return s.Default + (end-start+off-1)/off
	case "multiples":
		if id1%s.Config == 0 {
			return s.Default + s.Config
		}
		return s.Default
	case "exponential":
		k := math.Ceil(math.Log(float64(id1)) / math.Log(float64(s.Config)))
		if int64(math.Pow(float64(s.Config), k)) == id1 {
			return s.Default + id1 - int64(math.Pow(float64(s.Config), k-1))
		}
		return s.Default
	case "perfect_powers":
		root := math.Ceil(math.Pow(float64(id1), 1/float64(s.Config)))
		if int64(math.Pow(root, float64(s.Config))) == id1 {
			return s.Default + id1 - int64(math.Pow(root-1, float64(s.Config)))
		}
		return s.Default
	}
	return s.Default
}

// LinksPerType is floor(TotalLinks / link_type_count): the length of each
// of id1's adjacency lists.
func (g *Graph) LinksPerType(id1 int64) int64 {
	return g.TotalLinks(id1) / int64(len(g.types))
}

// Count is the count row the load writes for (id1, type index).
func (g *Graph) Count(id1 int64, typeIdx int) graph.Count {
	return graph.Count{ID1: id1, LinkType: g.types[typeIdx], Count: g.LinksPerType(id1), Time: g.spec.NowMs, Version: 0}
}

// Worker generates rows without allocating. It is owned by one goroutine.
type Worker struct {
	g   *Graph
	pcg *rand.PCG
	r   *rand.Rand
	buf []byte
}

// NewWorker returns a generator for one goroutine.
func (g *Graph) NewWorker() *Worker {
	pcg := rand.NewPCG(0, 0)
	return &Worker{g: g, pcg: pcg, r: rand.New(pcg)}
}

// mix derives a well-spread 64-bit stream key from the parts.
func mix(parts ...uint64) uint64 {
	h := uint64(0x6c62_6c69_6e6b_6265)
	for _, p := range parts {
		h ^= p
		h *= 0x9e3779b97f4a7c15
		h ^= h >> 29
	}
	return h
}

// Links appends the links j in [from, to) of (id1, LinkTypes()[typeIdx]).
// Their Data slices point into a buffer owned by the worker, valid until
// its next Links or Node call.
func (w *Worker) Links(id1 int64, typeIdx int, from, to int64, dst []graph.Link) []graph.Link {
	g := w.g
	if to <= from {
		return dst
	}
	need := int(to-from) * graph.MaxLinkData
	if cap(w.buf) < need {
		w.buf = make([]byte, 0, need)
	}
	buf := w.buf[:0]
	key := mix(uint64(g.spec.Seed), uint64(id1), uint64(typeIdx), 1)
	lt := g.types[typeIdx]
	for j := from; j < to; j++ {
		w.pcg.Seed(key, uint64(j))
		l := graph.Link{ID1: id1, LinkType: lt, ID2: id1 + j, Visibility: graph.VisibilityDefault, Version: 0}
		if g.spec.RandomID2Max > 0 {
			l.ID2 = w.r.Int64N(g.spec.RandomID2Max)
		}
		l.Time = g.spec.NowMs - int64(w.r.Uint64()>>32)
		// The reference's log-normal sizes stop at 254 (max - 1).
		n := clampLen(g.linkSize.Sample(w.r), graph.MaxLinkData-1)
		s := len(buf)
		buf = buf[:s+n]
		g.linkGen.Fill(w.r, buf[s:])
		l.Data = buf[s : s+n : s+n]
		dst = append(dst, l)
	}
	w.buf = buf
	return dst
}

func clampLen(x float64, limit int) int {
	n := int(math.Round(x))
	return min(max(n, 0), limit)
}

// Node returns the node id. Its Data points into a buffer owned by the
// worker, valid until its next Links or Node call.
func (w *Worker) Node(id int64) graph.Node {
	g := w.g
	w.pcg.Seed(mix(uint64(g.spec.Seed), uint64(id), 2), 0)
	n := clampLen(g.nodeSize.Sample(w.r), graph.MaxNodeData-1)
	if cap(w.buf) < n {
		w.buf = make([]byte, 0, max(n, 4096))
	}
	data := w.buf[:n]
	g.nodeGen.Fill(w.r, data)
	return graph.Node{ID: id, Type: graph.NodeType, Version: 1, Time: int32(g.spec.NowMs / 1000), Data: data[:n:n]}
}
