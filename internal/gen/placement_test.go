package gen

import (
	"testing"

	"github.com/linkbench/linkbench/internal/dist"
)

// The figures in this file were printed by the reference (mdcallag/linkbench
// at 9ef9cc8, ID2Chooser.calcTotalLinkCount with the shipped 2017
// Distribution.dat, link_type_count = 2): the out-degree of given ids, and a
// digest of the degrees of every id (h = h*1000003 + degree, in id order,
// in wrapping 64-bit arithmetic) with their sum and maximum.

type degreeVector struct {
	start, end  int64
	digest      int64
	total       int64
	superNode   int64 // the id with the largest degree, 4,181,357
	ids, degree []int64
}

var realDegreeVectors = []degreeVector{
	{1, 100001, -4613146386447827138, 4603850, 14337,
		[]int64{1, 2, 3, 4, 8, 100, 1001, 14337, 100000}, []int64{2, 2, 2, 2, 2, 2, 2, 4181357, 2}},
	{1, 1000001, 2332701409185473670, 8628470, 389121,
		[]int64{1, 2, 3, 4, 8, 100, 1001, 14337, 1000000}, []int64{2, 2, 2, 2, 2, 2, 2, 2, 2}},
	{1, 10000001, 6305120827259845937, 49736849, 355329,
		[]int64{1, 2, 3, 4, 8, 100, 1001, 14337, 10000000}, []int64{2, 2, 2, 2, 2, 2, 2, 2, 2}},
	{5, 100005, -4613146386447827138, 4603850, 14341,
		[]int64{5, 6, 7, 8, 12, 104, 1005, 14341, 100004}, []int64{2, 2, 2, 2, 2, 2, 2, 4181357, 2}},
	{1000, 1101, 6089045227800397073, 4181599, 1000,
		[]int64{1000, 1001, 1002, 1003, 1007, 1099, 1100}, []int64{4181357, 22, 10, 7, 3, 2, 2}},
}

func graphOver(t testing.TB, start, end int64, nl NLinksSpec, data *dist.DataFile) *Graph {
	t.Helper()
	g, err := NewGraph(GraphSpec{StartID1: start, MaxID1: end, LinkTypeCount: 2, NLinks: nl, Data: data,
		LinkDataSize: 23, NodeDataSize: 168, LinkGen: motif, NodeGen: motif, Seed: 42, NowMs: 1_700_000_000_000})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// degreeDigest walks every id as the reference's digest did.
func degreeDigest(g *Graph, start, end int64) (digest, total, maxID int64) {
	best := int64(-1)
	for id := start; id < end; id++ {
		d := g.TotalLinks(id)
		digest = digest*1000003 + d
		total += d
		if d > best {
			best, maxID = d, id
		}
	}
	return digest, total, maxID
}

// TestDegreesAreTheReferences pins the degree of every id at maxid1 =
// 100001, 1,000,001 and 10,000,001 (and two other ranges) to the
// reference's.
func TestDegreesAreTheReferences(t *testing.T) {
	data := shippedData(t)
	for _, v := range realDegreeVectors {
		g := graphOver(t, v.start, v.end, NLinksSpec{Func: "real"}, data)
		for i, id := range v.ids {
			if got := g.TotalLinks(id); got != v.degree[i] {
				t.Errorf("[%d, %d): id %d has %d links, the reference gives it %d", v.start, v.end, id, got, v.degree[i])
			}
		}
		if got := g.LinksPerType(v.superNode); got != 2090678 {
			t.Errorf("[%d, %d): super node %d has %d links per type, the reference 2,090,678", v.start, v.end, v.superNode, got)
		}
		if testing.Short() && v.end > 1000001 {
			continue
		}
		digest, total, top := degreeDigest(g, v.start, v.end)
		if digest != v.digest || total != v.total || top != v.superNode {
			t.Errorf("[%d, %d): degree digest %d, total %d, super node %d; the reference's: %d, %d, %d",
				v.start, v.end, digest, total, top, v.digest, v.total, v.superNode)
		}
	}
}

// TestZipfDegreesAreTheReferences: a Zipf nlinks_func (shape 0.8) gets the
// reference's rounding of its expected count, scaled by n * nlinks_mean,
// or by 1 without a mean (then every id gets one link per type).
func TestZipfDegreesAreTheReferences(t *testing.T) {
	for _, c := range []struct {
		mean          float64
		hasMean       bool
		digest, total int64
	}{
		{5, true, 8357753552130873393, 527765},
		{0, false, -6751106981753923456, 200000},
	} {
		nl := NLinksSpec{Func: "dist", Dist: dist.AccessSpec{Kind: dist.Zipf, Shape: 0.8, Mean: c.mean, HasMean: c.hasMean}}
		g := graphOver(t, 1, 100001, nl, nil)
		if digest, total, _ := degreeDigest(g, 1, 100001); digest != c.digest || total != c.total {
			t.Errorf("zipf nlinks, mean %v: digest %d total %d; the reference's: %d, %d", c.mean, digest, total, c.digest, c.total)
		}
	}
}
