package gen

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/linkbench/linkbench/internal/dist"
)

// TestHeavyFindsExactlyTheLongLists compares Heavy with a pass over every
// id, for every degree mode and bounds that leave none, some or all ids.
func TestHeavyFindsExactlyTheLongLists(t *testing.T) {
	data := shippedData(t)
	const start, end = 7, 300_007
	for _, c := range []NLinksSpec{
		{Func: "real"},
		{Func: "dist", Dist: dist.AccessSpec{Kind: dist.Zipf, Shape: 1.2, Mean: 40, HasMean: true}},
		{Func: "dist", Dist: dist.AccessSpec{Kind: dist.Uniform, Mean: 90, HasMean: true}},
		{Func: "const", Default: 9},
		{Func: "reciprocal", Default: 1},
		{Func: "multiples", Config: 1000, Default: 3},
		{Func: "multiples", Config: 1, Default: 3},
		{Func: "exponential", Config: 3, Default: 2},
		{Func: "perfect_powers", Config: 2, Default: 2},
		{Func: "perfect_powers", Config: 3, Default: 2},
		{Func: "perfect_powers", Config: 1, Default: 2},
	} {
		g, err := NewGraph(GraphSpec{StartID1: start, MaxID1: end, LinkTypeCount: 2, NLinks: c, Data: data,
			LinkDataSize: 10, NodeDataSize: 10, LinkGen: motif, NodeGen: motif, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		for _, minPer := range []int64{0, 1, 2, 4, 40, 1000, 100_000, 1 << 40} {
			var want []int64
			for id := int64(start); id < end; id++ {
				if g.LinksPerType(id) > minPer {
					want = append(want, id)
				}
			}
			got := slices.Collect(g.Heavy(minPer))
			if !slices.Equal(got, want) {
				t.Errorf("%+v, lists longer than %d: Heavy found %d ids %s, a pass over every id %d %s", c, minPer, len(got), head(got), len(want), head(want))
			}
		}
	}
}

func head(ids []int64) string {
	if len(ids) > 5 {
		return fmt.Sprint(ids[:5], "...")
	}
	return fmt.Sprint(ids)
}

// TestHeavyIsQuickAtOneBillion: the super nodes of a billion-id graph are
// found without a pass over the ids (a pass takes tens of seconds).
func TestHeavyIsQuickAtOneBillion(t *testing.T) {
	g := newGraph(t, 1_000_000_001, shippedData(t))
	t0 := time.Now()
	n := 0
	for id := range g.Heavy(1 << 16) {
		if g.LinksPerType(id) <= 1<<16 {
			t.Fatalf("id %d has %d links per type", id, g.LinksPerType(id))
		}
		n++
	}
	if d := time.Since(t0); d > time.Second || n == 0 {
		t.Fatalf("%d super nodes found in %v", n, d)
	}
	t.Logf("%d super nodes of 10^9 ids found in %v", n, time.Since(t0))
}
