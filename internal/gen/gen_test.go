package gen

import (
	"bytes"
	"compress/flate"
	"math"
	"math/rand/v2"
	"reflect"
	"sort"
	"testing"

	"github.com/linkbench/linkbench/internal/dist"
	"github.com/linkbench/linkbench/internal/graph"
)

func shippedData(t testing.TB) *dist.DataFile {
	for _, p := range []string{"../../config/Distribution.dat", "../../../shared/reference/Distribution.dat"} {
		if d, err := dist.LoadDataFile(p); err == nil {
			return d
		}
	}
	t.Skip("Distribution.dat not found")
	return nil
}

var motif = DataGenSpec{Kind: "motif", StartByte: 32, EndByte: 100, Uniqueness: 0.225, MotifLength: 128}

func newGraph(t testing.TB, maxid1 int64, data *dist.DataFile) *Graph {
	t.Helper()
	g, err := NewGraph(GraphSpec{StartID1: 1, MaxID1: maxid1, LinkTypeCount: 2, NLinks: NLinksSpec{Func: "real"}, Data: data,
		LinkDataSize: 23, NodeDataSize: 168, LinkGen: motif, NodeGen: motif, Seed: 42, NowMs: 1_700_000_000_000})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestDegreeMultisetMatchesCDF compares the degrees of every id with the
// multiset computed straight from the CDF: rank p gets the smallest value
// whose cumulative percent is >= 100*(1-p/n).
func TestDegreeMultisetMatchesCDF(t *testing.T) {
	data := shippedData(t)
	const maxid1 = 1000001
	g := newGraph(t, maxid1, data)
	n := int64(maxid1 - 1)
	nl, _ := data.Section("nlinks")
	got := make([]int64, 0, n)
	for id := int64(1); id < maxid1; id++ {
		got = append(got, g.TotalLinks(id))
	}
	want := make([]int64, 0, n)
	for p := int64(0); p < n; p++ {
		want = append(want, max(nl.Quantile(1-float64(p)/float64(n)), 2))
	}
	sort.Slice(got, func(i, j int) bool { return got[i] < got[j] })
	sort.Slice(want, func(i, j int) bool { return want[i] < want[j] })
	if !reflect.DeepEqual(got, want) {
		t.Fatal("degree multiset differs from the CDF")
	}
	if got[n-1] != 4181357 {
		t.Fatalf("largest degree %d, want 4181357", got[n-1])
	}
	top := g.DegreeShuffler().Permute(0) + 1
	if g.TotalLinks(top) != 4181357 {
		t.Fatalf("rank 0 (id %d) has %d links", top, g.TotalLinks(top))
	}
}

func TestLinksAreIndependentOfSplit(t *testing.T) {
	g := newGraph(t, 1001, shippedData(t))
	w1, w2 := g.NewWorker(), g.NewWorker()
	for _, id1 := range []int64{1, 17, 500} {
		for typ := 0; typ < 2; typ++ {
			whole := clone(w1.Links(id1, typ, 0, 300, nil))
			var parts []graph.Link
			for _, cut := range [][2]int64{{0, 7}, {7, 8}, {8, 150}, {150, 300}} {
				parts = append(parts, clone(w2.Links(id1, typ, cut[0], cut[1], nil))...)
			}
			if !reflect.DeepEqual(whole, parts) {
				t.Fatalf("id1 %d type %d: split generation differs", id1, typ)
			}
			for j, l := range whole {
				if l.ID2 != id1+int64(j) || l.Visibility != 1 || l.LinkType != g.LinkTypes()[typ] || l.Version != 0 {
					t.Fatalf("link %d: %+v", j, l)
				}
				if l.Time > 1_700_000_000_000 || l.Time < 1_700_000_000_000-(1<<32) || len(l.Data) > 255 {
					t.Fatalf("link %d: time %d, %d bytes", j, l.Time, len(l.Data))
				}
				for _, b := range l.Data {
					if b < 32 || b > 100 {
						t.Fatalf("byte %d out of range", b)
					}
				}
			}
		}
	}
}

func clone(ls []graph.Link) []graph.Link {
	out := make([]graph.Link, len(ls))
	for i, l := range ls {
		l.Data = append([]byte(nil), l.Data...)
		out[i] = l
	}
	return out
}

func TestNodesAreDeterministic(t *testing.T) {
	g := newGraph(t, 1001, shippedData(t))
	a, b := g.NewWorker(), g.NewWorker()
	b.Node(5) // a different history must not matter
	for id := int64(1); id < 100; id++ {
		x := a.Node(id)
		x.Data = append([]byte(nil), x.Data...)
		y := b.Node(id)
		if !reflect.DeepEqual(x, y) || x.Type != graph.NodeType || x.Version != 1 || len(x.Data) >= graph.MaxNodeData {
			t.Fatalf("node %d differs or is malformed: %+v", id, x)
		}
	}
	if g.Count(3, 1).Count != g.LinksPerType(3) {
		t.Fatal("count row")
	}
}

func TestEveryNodeHasALinkOfEachType(t *testing.T) {
	g := newGraph(t, 10001, shippedData(t))
	for id := int64(1); id < 10001; id++ {
		if g.LinksPerType(id) < 1 {
			t.Fatalf("id %d has no links", id)
		}
	}
}

func TestMotifCompressibilityFollowsUniqueness(t *testing.T) {
	prev := 0.0
	for _, u := range []float64{0, 0.5, 1} {
		gen, err := NewDataGen(DataGenSpec{Kind: "motif", StartByte: 0, EndByte: 255, Uniqueness: u}, 1)
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 1<<16)
		gen.Fill(rand.New(rand.NewPCG(1, 2)), buf)
		var out bytes.Buffer
		w, _ := flate.NewWriter(&out, flate.BestCompression)
		w.Write(buf)
		w.Close()
		ratio := float64(out.Len()) / float64(len(buf))
		if ratio <= prev {
			t.Fatalf("uniqueness %v: compressed ratio %.3f not above %.3f", u, ratio, prev)
		}
		prev = ratio
	}
	if _, err := NewDataGen(DataGenSpec{Kind: "motif", StartByte: 10, EndByte: 5}, 1); err == nil {
		t.Fatal("bad byte range accepted")
	}
}

func TestArithmeticModes(t *testing.T) {
	for _, c := range []struct {
		s    NLinksSpec
		id   int64
		want int64
	}{
		{NLinksSpec{Func: "const", Default: 5}, 7, 5},
		{NLinksSpec{Func: "multiples", Config: 3, Default: 1}, 9, 4},
		{NLinksSpec{Func: "multiples", Config: 3, Default: 1}, 10, 1},
		{NLinksSpec{Func: "perfect_powers", Config: 2, Default: 0}, 16, 7},
		{NLinksSpec{Func: "exponential", Config: 2, Default: 0}, 16, 8},
		{NLinksSpec{Func: "reciprocal", Default: 0}, 11, 10},
	} {
		if got := arithmeticLinks(c.s, c.id, 1, 101); got != c.want {
			t.Errorf("%s(%d) = %d, want %d", c.s.Func, c.id, got, c.want)
		}
	}
}

func BenchmarkLinks(b *testing.B) {
	g := newGraph(b, 100001, shippedData(b))
	w := g.NewWorker()
	var dst []graph.Link
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		dst = w.Links(int64(i%100000)+1, 0, 0, 100, dst[:0])
	}
	b.ReportMetric(float64(b.N*100)/b.Elapsed().Seconds(), "links/s")
}

func BenchmarkTotalLinks(b *testing.B) {
	g := newGraph(b, 10000001, shippedData(b))
	for i := 0; i < b.N; i++ {
		g.TotalLinks(int64(i%10000000) + 1)
	}
	_ = math.Pi
}
