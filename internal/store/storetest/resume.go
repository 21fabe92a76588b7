package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/linkbench/linkbench/internal/config"
	"github.com/linkbench/linkbench/internal/gen"
	"github.com/linkbench/linkbench/internal/graph"
	"github.com/linkbench/linkbench/internal/store"
	"github.com/linkbench/linkbench/internal/workload"
)

// failAfter passes bulk calls through to a store until a limit of link or
// node batches is reached, then fails: a load cut off mid-way, with units
// partly written (a unit's links, counts and nodes take several batches).
type failAfter struct {
	store.BulkLoader
	links, nodes atomic.Int64
}

var errCut = errors.New("load cut off by the test")

func (f *failAfter) LoadLinks(ctx context.Context, links []graph.Link) error {
	if f.links.Add(-1) < 0 {
		return errCut
	}
	return f.BulkLoader.LoadLinks(ctx, links)
}

func (f *failAfter) LoadNodes(ctx context.Context, nodes []graph.Node) error {
	if f.nodes.Add(-1) < 0 {
		return errCut
	}
	return f.BulkLoader.LoadNodes(ctx, nodes)
}

const journalPrefix = "journal.test."

func resumeSetup(t *testing.T) (*config.Config, *gen.Graph) {
	t.Helper()
	cfg, _, err := config.Load(config.Source{
		Defaults: map[string]string{"store": "memory", "workload_file": "config/FBWorkload.properties"},
		Overrides: []string{"maxid1=201", "nlinks_func=const", "nlinks_default=10", "loader_chunk_size=20",
			"bulk_insert_count=15", "loaders=3", "load_random_seed=99"},
	})
	if err != nil {
		t.Fatal(err)
	}
	g, err := gen.NewGraph(gen.GraphSpec{
		StartID1: cfg.StartID1, MaxID1: cfg.MaxID1, LinkTypeCount: cfg.LinkTypeCount,
		NLinks: cfg.NLinks, LinkDataSize: cfg.LinkDataSize, NodeDataSize: cfg.NodeDataSize,
		LinkGen: cfg.LinkAddGen, NodeGen: cfg.NodeAddGen, Seed: cfg.LoadRandomSeed, NowMs: 1_700_000_000_000,
	})
	if err != nil {
		t.Fatal(err)
	}
	return cfg, g
}

// journal reads the load journal back from the store's metadata.
func journal(t *testing.T, j store.Journaler) map[string]string {
	t.Helper()
	meta, err := j.GetMeta(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for k, v := range meta {
		if u, ok := strings.CutPrefix(k, journalPrefix); ok {
			out[u] = v
		}
	}
	return out
}

// testResume cuts a journaled load off after some link batches, resumes
// it, and compares every row with an uninterrupted load into a second
// store: a resumed load must write exactly the same graph.
// Reliability(load): a load cut off after some batches, on every store | `--resume` with the journal gives the same nodes, lists and counts as an uninterrupted load (SQLite, Pebble, PostgreSQL, MariaDB InnoDB and RocksDB, FerretDB)
func testResume(t *testing.T, newStore func(t *testing.T) store.Store, stride int64) {
	ref := newStore(t)
	if _, ok := ref.(store.Journaler); !ok {
		t.Skip("the store cannot resume a load (no store.Journaler)")
	}
	cfg, g := resumeSetup(t)
	run := func(s store.Store, bl store.BulkLoader, resume map[string]string) error {
		lp := &workload.LoadPhase{Config: cfg, Store: bl, Graph: g, Retry: store.DefaultRetryPolicy,
			Journal: s.(store.Journaler), JournalPrefix: journalPrefix, Resume: resume}
		_, err := lp.Run(ctx)
		return err
	}
	if err := run(ref, ref.(store.BulkLoader), nil); err != nil {
		t.Fatalf("uninterrupted load: %v", err)
	}

	s := newStore(t)
	cut := &failAfter{BulkLoader: s.(store.BulkLoader)}
	cut.links.Store(60) // of 270 link batches
	cut.nodes.Store(3)  // of 20 node batches: the second node chunk is cut
	if err := run(s, cut, nil); !errors.Is(err, errCut) {
		t.Fatalf("cut load returned %v, want the injected failure", err)
	}
	j := journal(t, s.(store.Journaler))
	var started, done int
	for _, v := range j {
		switch v {
		case workload.JournalStarted:
			started++
		case workload.JournalDone:
			done++
		}
	}
	if started == 0 || done == 0 {
		t.Fatalf("journal after the cut: %d started, %d done units; the test wants both kinds (%v)", started, done, j)
	}
	if err := run(s, s.(store.BulkLoader), j); err != nil {
		t.Fatalf("resumed load: %v", err)
	}
	for u, v := range journal(t, s.(store.Journaler)) {
		if v != workload.JournalDone {
			t.Errorf("after the resumed load unit %s is %q", u, v)
		}
	}
	if d := diffGraphs(t, cfg, g, ref, s, stride); d != "" {
		t.Fatalf("the resumed load differs from an uninterrupted one: %s", d)
	}
}

// diffGraphs compares the counts of two stores, and the nodes and lists of
// every stride-th id1.
func diffGraphs(t *testing.T, cfg *config.Config, g *gen.Graph, a, b store.Store, stride int64) string {
	t.Helper()
	if ca, cb := allCounts(t, a), allCounts(t, b); ca != cb {
		return fmt.Sprintf("count tables differ:\n%s\nvs\n%s", ca, cb)
	}
	w := g.NewWorker()
	for id := cfg.StartID1; id < cfg.MaxID1; id += stride {
		typ := w.Node(id).Type
		na, oka, err := a.GetNode(ctx, typ, id)
		if err != nil {
			t.Fatal(err)
		}
		nb, okb, err := b.GetNode(ctx, typ, id)
		if err != nil {
			t.Fatal(err)
		}
		if oka != okb || na.Version != nb.Version || na.Time != nb.Time || !bytes.Equal(na.Data, nb.Data) {
			return fmt.Sprintf("node %d: %v %+v vs %v %+v", id, oka, na, okb, nb)
		}
		for lt := int64(0); lt < int64(cfg.LinkTypeCount); lt++ {
			ltype := graph.DefaultLinkType + lt
			q := graph.ListQuery{ID1: id, LinkType: ltype, MinTime: 0, MaxTime: 1 << 62, Limit: 100000}
			la, err := a.GetLinkList(ctx, q, nil)
			if err != nil {
				t.Fatal(err)
			}
			lb, err := b.GetLinkList(ctx, q, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(la) != len(lb) {
				return fmt.Sprintf("id1 %d type %d: %d vs %d links", id, ltype, len(la), len(lb))
			}
			for i := range la {
				x, y := la[i], lb[i]
				if x.ID2 != y.ID2 || x.Time != y.Time || x.Version != y.Version || !bytes.Equal(x.Data, y.Data) {
					return fmt.Sprintf("id1 %d type %d link %d: %+v vs %+v", id, ltype, i, x, y)
				}
			}
			if c, err := a.CountLinks(ctx, id, ltype); err != nil || c != int64(len(la)) {
				return fmt.Sprintf("id1 %d type %d: count %d (%v), %d links", id, ltype, c, err, len(la))
			}
		}
	}
	return ""
}

// allCounts renders the whole count table (every store of the suite that
// can resume is a store.Scanner).
func allCounts(t *testing.T, s store.Store) string {
	t.Helper()
	sc, ok := s.(store.Scanner)
	if !ok {
		t.Fatal("a store.Journaler that is not a store.Scanner")
	}
	var b strings.Builder
	err := sc.ScanCounts(ctx, func(c graph.Count) error {
		fmt.Fprintf(&b, "%d/%d=%d@%d.%d ", c.ID1, c.LinkType, c.Count, c.Time, c.Version)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}
