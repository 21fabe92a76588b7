package check

import (
	"context"
	"strings"
	"testing"

	"github.com/linkbench/linkbench/internal/graph"
	"github.com/linkbench/linkbench/internal/store/memory"
)

func TestCheck(t *testing.T) {
	ctx := context.Background()
	s := memory.New()
	lt := graph.DefaultLinkType
	var links []graph.Link
	var counts []graph.Count
	for id1 := int64(1); id1 <= 3000; id1++ {
		for j := int64(0); j < id1%5+1; j++ {
			links = append(links, graph.Link{ID1: id1, LinkType: lt, ID2: id1 + j, Visibility: 1, Time: j})
		}
		counts = append(counts, graph.Count{ID1: id1, LinkType: lt, Count: id1%5 + 1})
	}
	counts = append(counts, graph.Count{ID1: 5000, LinkType: lt, Count: 0}) // a zero row without links is fine
	s.LoadLinks(ctx, links)
	s.LoadCounts(ctx, counts)
	s.LoadNodes(ctx, []graph.Node{{ID: 1, Type: graph.NodeType}, {ID: 3000, Type: graph.NodeType}})
	res, err := Run(ctx, s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK() || res.Keys != 3001 || res.MinNode != 1 || res.MaxNode != 3000 {
		t.Fatalf("consistent store: %+v", res)
	}
	// Corrupt one count row and add links without a row.
	s.LoadCounts(ctx, []graph.Count{{ID1: 1234, LinkType: lt, Count: 99}})
	s.LoadLinks(ctx, []graph.Link{{ID1: 4000, LinkType: lt, ID2: 1, Visibility: 1}})
	res, err = Run(ctx, s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Mismatches != 2 || len(res.First) != 2 {
		t.Fatalf("want 2 mismatches, got %+v", res)
	}
	if got := res.First[0].String(); !strings.Contains(got, "id1 1234") || !strings.Contains(got, "count row 99") || !strings.Contains(got, "5 visible") {
		t.Fatalf("first mismatch %q", got)
	}
	if got := res.First[1]; got.ID1 != 4000 || got.HasRow {
		t.Fatalf("second mismatch %+v", got)
	}
}
