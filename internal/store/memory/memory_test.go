package memory

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/linkbench/linkbench/internal/graph"

	"github.com/linkbench/linkbench/internal/store"
	"github.com/linkbench/linkbench/internal/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return New() })
}

// TestListIndexAgainstModel drives one large list with random adds,
// updates, hides and expunges (enough to compact its dead slots several
// times) and compares it after every step with a plain map; once starting
// empty and once from a bulk load (duplicate id2s, hidden links), whose
// records EndLoad lays out again in list order.
func TestListIndexAgainstModel(t *testing.T) {
	for _, bulk := range []bool{false, true} {
		t.Run(fmt.Sprintf("bulk=%v", bulk), func(t *testing.T) { testListIndexAgainstModel(t, bulk) })
	}
}

func testListIndexAgainstModel(t *testing.T, bulk bool) {
	ctx := context.Background()
	s := New()
	const id1, lt = 7, graph.DefaultLinkType
	type val struct {
		vis  uint8
		time int64
		data string
	}
	model := map[int64]val{}
	rng := rand.New(rand.NewPCG(1, 2))
	check := func(step int) {
		t.Helper()
		var want []graph.Link
		for id2, v := range model {
			if v.vis == graph.VisibilityDefault {
				want = append(want, graph.Link{ID2: id2, Time: v.time, Data: []byte(v.data)})
			}
		}
		sort.Slice(want, func(i, j int) bool {
			return want[i].Time > want[j].Time || want[i].Time == want[j].Time && want[i].ID2 > want[j].ID2
		})
		got, err := s.GetLinkList(ctx, graph.ListQuery{ID1: id1, LinkType: lt, MaxTime: 1 << 62, Limit: 100000}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("step %d: %d visible links, model %d", step, len(got), len(want))
		}
		for i := range got {
			if got[i].ID2 != want[i].ID2 || got[i].Time != want[i].Time || string(got[i].Data) != string(want[i].Data) {
				t.Fatalf("step %d: link %d is %+v, model %+v", step, i, got[i], want[i])
			}
		}
		if c, _ := s.CountLinks(ctx, id1, lt); c != int64(len(want)) {
			t.Fatalf("step %d: count %d, model %d", step, c, len(want))
		}
		a := rng.Int64N(400)
		probe := []int64{a, (a + 1) % 400, (a + 2) % 400}
		m, _ := s.MultigetLinks(ctx, id1, lt, probe, nil)
		n := 0
		for _, id2 := range probe {
			if _, ok := model[id2]; ok {
				n++
			}
		}
		if len(m) != n {
			t.Fatalf("step %d: multiget of %v found %d, model %d", step, probe, len(m), n)
		}
	}
	inserts := 0
	if bulk {
		var links []graph.Link
		for i := 0; i < 300; i++ {
			id2 := rng.Int64N(400)
			v := val{vis: graph.VisibilityDefault, time: rng.Int64N(50), data: fmt.Sprint("bulk", i)}
			if rng.IntN(4) == 0 {
				v.vis = graph.VisibilityHidden
			}
			links = append(links, graph.Link{ID1: id1, LinkType: lt, ID2: id2, Visibility: v.vis, Time: v.time, Data: []byte(v.data), Version: 1})
			model[id2] = v
		}
		if err := s.LoadLinks(ctx, links); err != nil {
			t.Fatal(err)
		}
		visible := 0
		for _, v := range model {
			if v.vis == graph.VisibilityDefault {
				visible++
			}
		}
		if err := s.LoadCounts(ctx, []graph.Count{{ID1: id1, LinkType: lt, Count: int64(visible)}}); err != nil {
			t.Fatal(err)
		}
		if err := s.EndLoad(ctx, store.LoadInfo{MaxID1: 1}); err != nil {
			t.Fatal(err)
		}
		inserts = len(model)
		check(-1)
	}
	for step := 0; step < 6000; step++ {
		id2 := rng.Int64N(400)
		switch op := rng.IntN(10); {
		case op < 5:
			v := val{vis: graph.VisibilityDefault, time: rng.Int64N(50), data: fmt.Sprint(step)}
			if rng.IntN(5) == 0 {
				v.vis = graph.VisibilityHidden
			}
			if _, ok := model[id2]; !ok {
				inserts++
			}
			s.AddLink(ctx, &graph.Link{ID1: id1, LinkType: lt, ID2: id2, Visibility: v.vis, Time: v.time, Data: []byte(v.data), Version: 1})
			model[id2] = v
		case op < 7:
			if ok, _ := s.DeleteLink(ctx, id1, lt, id2, false); ok {
				v := model[id2]
				v.vis = graph.VisibilityHidden
				model[id2] = v
			}
		default:
			s.DeleteLink(ctx, id1, lt, id2, true)
			delete(model, id2)
		}
		if step%50 == 0 {
			check(step)
		}
	}
	check(6000)
	if a := s.shard(id1, lt).lists[key{id1, lt}]; len(a.recs) >= inserts {
		t.Fatalf("%d records after %d inserts: the dead slots were never compacted", len(a.recs), inserts)
	}
}
