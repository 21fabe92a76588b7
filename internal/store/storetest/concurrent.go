package storetest

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/linkbench/linkbench/internal/graph"
	"github.com/linkbench/linkbench/internal/store"
)

// testConcurrent races writers over a small key space and then checks the
// invariant: every count equals the number of visible links.
// Reliability(store): deadlock / serialization failure / lock-wait timeout / SQLITE_BUSY | retried with capped, jittered backoff (`retry_attempts`), retries counted per op (every store's conformance suite)
func testConcurrent(t *testing.T, s store.Store, o Options, sessions bool) {
	const ids1, types, ids2 = 3, 2, 20
	// The writers start from a loaded graph, as a run's requesters do: the
	// lists of half the key space, visible, with their counts, and the
	// statistics the load refreshes at its end. Without statistics MyRocks
	// plans a link UPDATE over a new table as a range of its list, and
	// locks the list (the reference's statements, which name no index).
	if lo, ok := s.(store.BulkLoader); ok {
		info := store.LoadInfo{StartID1: 100, MaxID1: 100 + ids1}
		var links []graph.Link
		var counts []graph.Count
		for id1 := int64(100); id1 < 100+ids1; id1++ {
			for typ := lt; typ < lt+types; typ++ {
				for id2 := int64(1); id2 <= ids2; id2 += 2 {
					links = append(links, graph.Link{ID1: id1, LinkType: typ, ID2: id2, Visibility: graph.VisibilityDefault, Data: []byte("l"), Time: 1})
				}
				counts = append(counts, graph.Count{ID1: id1, LinkType: typ, Count: (ids2 + 1) / 2, Time: 1})
			}
		}
		for _, err := range []error{lo.BeginLoad(ctx, info), lo.LoadLinks(ctx, links), lo.LoadCounts(ctx, counts), lo.EndLoad(ctx, info)} {
			if err != nil {
				t.Fatalf("loading the writers' lists: %v", err)
			}
		}
	}
	policy := store.DefaultRetryPolicy
	policy.MaxAttempts = 50
	var wg sync.WaitGroup
	errs := make(chan error, o.Writers)
	for w := 0; w < o.Writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := s
			if sessions {
				sess := s.(store.Sessioner).Session()
				defer sess.Close()
				s = sess
			}
			// Every other writer writes blind (store.Blind), as the
			// request phase does.
			wr := store.Reported(s)
			if w%2 == 1 {
				wr = store.Blind(s)
			}
			r := rand.New(rand.NewPCG(uint64(w), 99))
			for i := 0; i < o.Ops; i++ {
				id1 := int64(100 + r.IntN(ids1))
				typ := lt + int64(r.IntN(types))
				id2 := int64(1 + r.IntN(ids2))
				var op string
				_, err := policy.Do(ctx, func() error {
					var e error
					switch k := r.IntN(10); {
					case k < 4:
						op = "add"
						l := graph.Link{ID1: id1, LinkType: typ, ID2: id2, Visibility: uint8(r.IntN(4) % 3 % 2), Data: []byte("c"), Time: int64(i)}
						e = wr.AddLinkBlind(ctx, &l)
					case k < 6:
						op = "update"
						l := graph.Link{ID1: id1, LinkType: typ, ID2: id2, Visibility: uint8(r.IntN(2)), Data: []byte("u"), Time: int64(i)}
						e = wr.UpdateLinkBlind(ctx, &l)
					case k < 8:
						op = "hide"
						e = wr.DeleteLinkBlind(ctx, id1, typ, id2, false)
					default:
						op = "expunge"
						e = wr.DeleteLinkBlind(ctx, id1, typ, id2, true)
					}
					return e
				})
				if err != nil {
					errs <- fmt.Errorf("writer %d: %s (%d,%d,%d) failed after retries: %w", w, op, id1, typ, id2, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for id1 := int64(100); id1 < 100+ids1; id1++ {
		for typ := lt; typ < lt+types; typ++ {
			q := graph.NewListQuery(id1, typ)
			ls, err := s.GetLinkList(ctx, q, nil)
			if err != nil {
				t.Fatal(err)
			}
			c, err := s.CountLinks(ctx, id1, typ)
			if err != nil {
				t.Fatal(err)
			}
			if c != int64(len(ls)) {
				t.Errorf("(%d, %d): count %d but %d visible links", id1, typ, c, len(ls))
			}
		}
	}
}
