package storetest

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/linkbench/linkbench/internal/graph"
	"github.com/linkbench/linkbench/internal/store"
)

// Options adjust the suite for a store.
type Options struct {
	// Writers is the number of concurrent writers of the invariant test
	// (default 8); Ops the operations each makes (default 400, 100 with -short).
	Writers, Ops int
	// ResumeStride compares the lists and nodes of every ResumeStride-th
	// id1 only in the resumed-load test (default 1: all), for servers
	// whose point reads are slow; the counts are always compared in full.
	ResumeStride int
}

// Run runs the whole suite with default options.
func Run(t *testing.T, newStore func(t *testing.T) store.Store) {
	RunWith(t, newStore, Options{})
}

// RunWith runs the whole suite. newStore returns an empty store with its
// schema created; it registers its own cleanup.
func RunWith(t *testing.T, newStore func(t *testing.T) store.Store, o Options) {
	if o.Writers <= 0 {
		o.Writers = 8
	}
	if o.Ops <= 0 {
		o.Ops = 400
		if testing.Short() {
			o.Ops = 100
		}
	}
	tests := []struct {
		name string
		fn   func(*testing.T, store.Store)
	}{
		{"AddLinkInsertAndOverwrite", testAddLink},
		{"UpdateLinkUpserts", testUpdateLink},
		{"VisibilityTransitionsAndCounts", testVisibility},
		{"WriteOutcomeRule", testWriteOutcome},
		{"DeleteLink", testDeleteLink},
		{"MultigetLinks", testMultiget},
		{"GetLinkListOrderAndRange", testLinkList},
		{"GetLinkListDefaultLimit", testListLimit},
		{"CountLinksWithoutRow", testCountNone},
		{"Nodes", testNodes},
		{"BinaryPayloads", testBinary},
		{"BlindLinkWrites", testBlind},
		// requestTests: the tests above use only the request operations.
		{"BulkLoadAndIDAllocation", testBulk},
		{"OptionalAbilities", testAbilities},
		{"ClaimMetaOnce", testClaimMeta},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, newStore(t)) })
	}
	t.Run("ConcurrentWritersKeepCounts", func(t *testing.T) { testConcurrent(t, newStore(t), o, false) })
	// A store with sessions passes the request operations' tests through a
	// session too, and its Close leaves the store open.
	t.Run("Session", func(t *testing.T) {
		for _, tc := range tests[:requestTests] {
			t.Run(tc.name, func(t *testing.T) {
				st := newStore(t)
				ss, ok := st.(store.Sessioner)
				if !ok {
					t.Skip("the store has no sessions (store.Sessioner)")
				}
				sess := ss.Session()
				tc.fn(t, sess)
				if err := sess.Close(); err != nil {
					t.Fatalf("closing the session: %v", err)
				}
				must[int64](t, "CountLinks on the store after its session closed")(st.CountLinks(ctx, 1, lt))
			})
		}
		t.Run("ConcurrentWritersKeepCounts", func(t *testing.T) {
			st := newStore(t)
			if _, ok := st.(store.Sessioner); !ok {
				t.Skip("the store has no sessions (store.Sessioner)")
			}
			testConcurrent(t, st, o, true)
		})
	})
	t.Run("ResumedLoadEqualsUninterrupted", func(t *testing.T) { testResume(t, newStore, int64(max(o.ResumeStride, 1))) })
}

var ctx = context.Background()

// requestTests is how many of RunWith's first tests use only the request
// operations (and so can run on a session).
const requestTests = 12

const lt = graph.DefaultLinkType

func link(id1, id2 int64, vis uint8, tm int64, data string) graph.Link {
	return graph.Link{ID1: id1, LinkType: lt, ID2: id2, Visibility: vis, Data: []byte(data), Version: 1, Time: tm}
}

func must[T any](t *testing.T, what string) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return v
	}
}

func count(t *testing.T, s store.Store, id1 int64) int64 {
	t.Helper()
	return must[int64](t, "CountLinks")(s.CountLinks(ctx, id1, lt))
}

func getOne(t *testing.T, s store.Store, id1, id2 int64) (graph.Link, bool) {
	t.Helper()
	ls := must[[]graph.Link](t, "MultigetLinks")(s.MultigetLinks(ctx, id1, lt, []int64{id2}, nil))
	if len(ls) == 0 {
		return graph.Link{}, false
	}
	return ls[0], true
}

func sameLink(t *testing.T, what string, got, want graph.Link) {
	t.Helper()
	if got.ID1 != want.ID1 || got.LinkType != want.LinkType || got.ID2 != want.ID2 || got.Visibility != want.Visibility ||
		got.Version != want.Version || got.Time != want.Time || !bytes.Equal(got.Data, want.Data) {
		t.Fatalf("%s: got %+v, want %+v", what, got, want)
	}
}

func testAddLink(t *testing.T, s store.Store) {
	l := link(10, 20, 1, 1000, "first")
	res := must[graph.WriteResult](t, "AddLink")(s.AddLink(ctx, &l))
	if res != graph.Inserted {
		t.Errorf("first AddLink: %v, want inserted", res)
	}
	got, ok := getOne(t, s, 10, 20)
	if !ok {
		t.Fatal("added link not found")
	}
	sameLink(t, "after insert", got, l)
	if c := count(t, s, 10); c != 1 {
		t.Fatalf("count after insert = %d, want 1", c)
	}
	l2 := link(10, 20, 1, 2000, "second")
	l2.Version = 7
	res = must[graph.WriteResult](t, "AddLink")(s.AddLink(ctx, &l2))
	if res == graph.Inserted {
		t.Errorf("AddLink over an existing link says inserted")
	}
	got, _ = getOne(t, s, 10, 20)
	sameLink(t, "after overwrite", got, l2)
	if c := count(t, s, 10); c != 1 {
		t.Fatalf("count after visible->visible overwrite = %d, want 1", c)
	}
	res = must[graph.WriteResult](t, "AddLink")(s.AddLink(ctx, &l2))
	if res == graph.Inserted {
		t.Errorf("identical AddLink says inserted")
	}
}

func testUpdateLink(t *testing.T, s store.Store) {
	l := link(11, 5, 1, 1000, "u")
	if res := must[graph.WriteResult](t, "UpdateLink")(s.UpdateLink(ctx, &l)); res != graph.Inserted {
		t.Errorf("UpdateLink of a missing link: %v, want inserted", res)
	}
	l.Data, l.Time = []byte("v"), 1500
	if res := must[graph.WriteResult](t, "UpdateLink")(s.UpdateLink(ctx, &l)); res != graph.Updated {
		t.Errorf("UpdateLink of a changed link: %v, want updated", res)
	}
	got, _ := getOne(t, s, 11, 5)
	sameLink(t, "after update", got, l)
	if c := count(t, s, 11); c != 1 {
		t.Fatalf("count %d, want 1", c)
	}
}

// testWriteOutcome checks every store's link write (the SQL stored
// procedures included) against the one count rule, graph.WriteOutcome:
// for each stored state and each write, the result reported and the
// change of the count.
func testWriteOutcome(t *testing.T, s store.Store) {
	id1 := int64(700)
	for _, old := range []*graph.Link{nil, {Visibility: graph.VisibilityHidden, Time: 5, Version: 1, Data: []byte("a")}, {Visibility: graph.VisibilityDefault, Time: 5, Version: 1, Data: []byte("a")}} {
		for _, vis := range []uint8{graph.VisibilityHidden, graph.VisibilityDefault} {
			for _, data := range []string{"a", "b"} {
				for _, update := range []bool{false, true} {
					id1++
					// Another visible link keeps the count above 0 (no clamping).
					other := link(id1, 1, graph.VisibilityDefault, 1, "o")
					must[graph.WriteResult](t, "AddLink")(s.AddLink(ctx, &other))
					var stored graph.Link
					if old != nil {
						stored = *old
						stored.ID1, stored.LinkType, stored.ID2 = id1, lt, 2
						must[graph.WriteResult](t, "AddLink")(s.AddLink(ctx, &stored))
					}
					before := count(t, s, id1)
					l := link(id1, 2, vis, 5, data)
					write := s.AddLink
					if update {
						write = s.UpdateLink
					}
					res := must[graph.WriteResult](t, "link write")(write(ctx, &l))
					wantRes, delta := graph.WriteOutcome(old != nil, stored, &l)
					if on, matched := refWrites(s); on && matched && wantRes == graph.Unchanged {
						wantRes = graph.Updated
					}
					if got := count(t, s, id1); res != wantRes || got-before != delta {
						t.Errorf("over %+v write %+v (update %v): %s, count %+d; want %s, %+d", old, l, update, res, got-before, wantRes, delta)
					}
				}
			}
		}
	}
}

func testVisibility(t *testing.T, s store.Store) {
	steps := []struct {
		op    string
		vis   uint8
		count int64
	}{
		{"add hidden (absent->hidden)", 0, 0},
		{"add visible (hidden->visible)", 1, 1},
		{"add visible again (visible->visible)", 1, 1},
		{"update hidden (visible->hidden)", 0, 0},
		{"update visible (hidden->visible)", 1, 1},
	}
	for i, st := range steps {
		l := link(12, 30, st.vis, int64(1000+i), "x")
		var err error
		if i%2 == 0 {
			_, err = s.AddLink(ctx, &l)
		} else {
			_, err = s.UpdateLink(ctx, &l)
		}
		if err != nil {
			t.Fatalf("%s: %v", st.op, err)
		}
		if c := count(t, s, 12); c != st.count {
			t.Fatalf("%s: count %d, want %d", st.op, c, st.count)
		}
	}
	before := readCount(t, s, 12)
	l := link(12, 31, 1, 5000, "y")
	must[graph.WriteResult](t, "AddLink")(s.AddLink(ctx, &l))
	after := readCount(t, s, 12)
	if after.Version <= before.Version || after.Count != 2 {
		t.Fatalf("count row not bumped: before %+v after %+v", before, after)
	}
	if now := time.Now().UnixMilli(); after.Time < now-60_000 || after.Time > now+60_000 {
		t.Fatalf("count row time %d is not now (ms) %d", after.Time, now)
	}
	// A write that changes the link but keeps its visibility leaves the
	// count row as it was, as the reference's UPDATE_LINK does.
	if _, ok := s.(store.Scanner); !ok {
		return
	}
	for i, write := range []func(context.Context, *graph.Link) (graph.WriteResult, error){s.AddLink, s.UpdateLink} {
		l.Data, l.Time = []byte(fmt.Sprint("z", i)), l.Time+1
		if res := must[graph.WriteResult](t, "link write")(write(ctx, &l)); res != graph.Updated {
			t.Fatalf("write %d keeping the visibility: %s, want updated", i, res)
		}
		if got := readCount(t, s, 12); got != after {
			t.Fatalf("write %d keeping the visibility changed the count row: %+v, was %+v", i, got, after)
		}
	}
}

// readCount finds the count row through the Scanner when there is one.
func readCount(t *testing.T, s store.Store, id1 int64) graph.Count {
	t.Helper()
	sc, ok := s.(store.Scanner)
	if !ok {
		return graph.Count{ID1: id1, LinkType: lt, Count: count(t, s, id1), Version: 1 << 40, Time: time.Now().UnixMilli()}
	}
	var found graph.Count
	if err := sc.ScanCounts(ctx, func(c graph.Count) error {
		if c.ID1 == id1 && c.LinkType == lt {
			found = c
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return found
}

// testBlind: the blind link writes (store.Blind: the store's own, or
// AddLink, UpdateLink and DeleteLink with their outcomes dropped) leave
// the rows and counts the reported writes leave.
func testBlind(t *testing.T, s store.Store) {
	b := store.Blind(s)
	step := func(what string, err error, id2, wantCount int64, want *graph.Link) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if c := count(t, s, 15); c != wantCount {
			t.Fatalf("%s: count %d, want %d", what, c, wantCount)
		}
		got, ok := getOne(t, s, 15, id2)
		switch {
		case want == nil && ok:
			t.Fatalf("%s: link still present: %+v", what, got)
		case want != nil && (!ok || got.Visibility != want.Visibility || string(got.Data) != string(want.Data) || got.Time != want.Time):
			t.Fatalf("%s: link %+v present=%v, want %+v", what, got, ok, *want)
		}
	}
	l := link(15, 1, 1, 100, "a")
	step("add a new visible link", b.AddLinkBlind(ctx, &l), 1, 1, &l)
	l = link(15, 1, 0, 101, "b")
	step("update it hidden", b.UpdateLinkBlind(ctx, &l), 1, 0, &l)
	l = link(15, 1, 1, 102, "c")
	step("add over it visible", b.AddLinkBlind(ctx, &l), 1, 1, &l)
	l2 := link(15, 2, 1, 103, "d")
	step("update a new link", b.UpdateLinkBlind(ctx, &l2), 2, 2, &l2)
	hidden := l2
	hidden.Visibility = 0
	step("hide it", b.DeleteLinkBlind(ctx, 15, lt, 2, false), 2, 1, &hidden)
	step("hide it again", b.DeleteLinkBlind(ctx, 15, lt, 2, false), 2, 1, &hidden)
	step("expunge it", b.DeleteLinkBlind(ctx, 15, lt, 2, true), 2, 1, nil)
	step("hide an absent link", b.DeleteLinkBlind(ctx, 15, lt, 9, false), 9, 1, nil)
	step("expunge a visible link", b.DeleteLinkBlind(ctx, 15, lt, 1, true), 1, 0, nil)
}

// refWrites is what st says of its link writes (store.RefWriter).
func refWrites(st store.Store) (on, matched bool) {
	if r, ok := st.(store.RefWriter); ok {
		return r.RefWrites()
	}
	return false, false
}

func testDeleteLink(t *testing.T, s store.Store) {
	for id2 := int64(1); id2 <= 4; id2++ {
		l := link(13, id2, 1, 1000+id2, "d")
		must[graph.WriteResult](t, "AddLink")(s.AddLink(ctx, &l))
	}
	check := func(what string, id2 int64, expunge, wantExisted bool, wantCount int64, wantVis int) {
		t.Helper()
		existed, err := s.DeleteLink(ctx, 13, lt, id2, expunge)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if existed != wantExisted {
			t.Errorf("%s: existed = %v, want %v", what, existed, wantExisted)
		}
		if c := count(t, s, 13); c != wantCount {
			t.Fatalf("%s: count %d, want %d", what, c, wantCount)
		}
		got, ok := getOne(t, s, 13, id2)
		switch {
		case wantVis < 0 && ok:
			t.Fatalf("%s: link still present: %+v", what, got)
		case wantVis >= 0 && (!ok || int(got.Visibility) != wantVis):
			t.Fatalf("%s: link %+v present=%v, want visibility %d", what, got, ok, wantVis)
		}
	}
	check("hide visible", 1, false, true, 3, 0)
	check("hide hidden", 1, false, true, 3, 0)
	check("expunge visible", 2, true, true, 2, -1)
	check("expunge hidden", 1, true, true, 2, -1)
	check("delete absent", 99, false, false, 2, -1)
	check("expunge absent", 98, true, false, 2, -1)
	// Never below zero, even when the count row disagrees; the
	// reference's statements add -1 as they are.
	if on, _ := refWrites(s); on {
		return
	}
	if lo, ok := s.(store.BulkLoader); ok {
		if err := lo.LoadCounts(ctx, []graph.Count{{ID1: 14, LinkType: lt, Count: 0, Time: 1}}); err != nil {
			t.Fatal(err)
		}
		if err := lo.LoadLinks(ctx, []graph.Link{link(14, 1, 1, 1, "z")}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.DeleteLink(ctx, 14, lt, 1, false); err != nil {
			t.Fatal(err)
		}
		if c := count(t, s, 14); c != 0 {
			t.Fatalf("count went to %d, want 0 (never below zero)", c)
		}
	}
}

func testMultiget(t *testing.T, s store.Store) {
	want := map[int64]graph.Link{}
	for id2 := int64(1); id2 <= 5; id2++ {
		l := link(15, id2, uint8(id2%2), 100*id2, fmt.Sprint("m", id2))
		must[graph.WriteResult](t, "AddLink")(s.AddLink(ctx, &l))
		want[id2] = l
	}
	got := must[[]graph.Link](t, "MultigetLinks")(s.MultigetLinks(ctx, 15, lt, []int64{5, 2, 77, 1}, nil))
	if len(got) != 3 {
		t.Fatalf("got %d links, want 3 (5, 2 hidden, 1; 77 missing): %+v", len(got), got)
	}
	for _, l := range got {
		sameLink(t, fmt.Sprint("multiget id2 ", l.ID2), l, want[l.ID2])
	}
	if got := must[[]graph.Link](t, "MultigetLinks")(s.MultigetLinks(ctx, 15, lt, nil, nil)); len(got) != 0 {
		t.Fatalf("empty id2 list gave %d links", len(got))
	}
	if got := must[[]graph.Link](t, "MultigetLinks")(s.MultigetLinks(ctx, 15, lt+1, []int64{1}, nil)); len(got) != 0 {
		t.Fatalf("other link type gave %d links", len(got))
	}
	prefix := []graph.Link{{ID1: -1}}
	got = must[[]graph.Link](t, "MultigetLinks")(s.MultigetLinks(ctx, 15, lt, []int64{1}, prefix))
	if len(got) != 2 || got[0].ID1 != -1 {
		t.Fatal("MultigetLinks must append to dst")
	}
}

func testLinkList(t *testing.T, s store.Store) {
	// Times with a tie at 300 (ordered by id2 descending), one hidden link.
	specs := []struct {
		id2 int64
		tm  int64
		vis uint8
	}{{1, 100, 1}, {2, 300, 1}, {3, 300, 1}, {4, 200, 0}, {5, 400, 1}, {6, 50, 1}}
	for _, sp := range specs {
		l := link(16, sp.id2, sp.vis, sp.tm, fmt.Sprint("l", sp.id2))
		must[graph.WriteResult](t, "AddLink")(s.AddLink(ctx, &l))
	}
	ids := func(q graph.ListQuery) []int64 {
		t.Helper()
		ls := must[[]graph.Link](t, "GetLinkList")(s.GetLinkList(ctx, q, nil))
		out := []int64{}
		for _, l := range ls {
			if l.Visibility != 1 {
				t.Fatalf("hidden link %d listed", l.ID2)
			}
			out = append(out, l.ID2)
		}
		return out
	}
	q := graph.NewListQuery(16, lt)
	for _, c := range []struct {
		name string
		mod  func(*graph.ListQuery)
		want []int64
	}{
		{"all", func(*graph.ListQuery) {}, []int64{5, 3, 2, 1, 6}},
		{"limit", func(q *graph.ListQuery) { q.Limit = 2 }, []int64{5, 3}},
		{"offset", func(q *graph.ListQuery) { q.Offset = 2; q.Limit = 2 }, []int64{2, 1}},
		{"max time inclusive", func(q *graph.ListQuery) { q.MaxTime = 300 }, []int64{3, 2, 1, 6}},
		{"min time inclusive", func(q *graph.ListQuery) { q.MinTime = 100 }, []int64{5, 3, 2, 1}},
		{"window", func(q *graph.ListQuery) { q.MinTime, q.MaxTime = 100, 300 }, []int64{3, 2, 1}},
		{"window with offset", func(q *graph.ListQuery) { q.MinTime, q.MaxTime, q.Offset = 100, 300, 1 }, []int64{2, 1}},
		{"empty window", func(q *graph.ListQuery) { q.MinTime, q.MaxTime = 301, 399 }, []int64{}},
		{"offset past end", func(q *graph.ListQuery) { q.Offset = 10 }, []int64{}},
	} {
		qq := q
		c.mod(&qq)
		if got := ids(qq); fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
	if got := ids(graph.NewListQuery(999, lt)); len(got) != 0 {
		t.Errorf("list of an id without links: %v", got)
	}
	ls := must[[]graph.Link](t, "GetLinkList")(s.GetLinkList(ctx, q, nil))
	sameLink(t, "list entry", ls[0], link(16, 5, 1, 400, "l5"))
}

func testListLimit(t *testing.T, s store.Store) {
	const n = graph.DefaultListLimit + 5
	links := make([]graph.Link, n)
	for i := range links {
		links[i] = link(17, int64(i+1), 1, int64(i), "p")
	}
	if lo, ok := s.(store.BulkLoader); ok {
		for i := 0; i < n; i += 1000 {
			if err := lo.LoadLinks(ctx, links[i:min(i+1000, n)]); err != nil {
				t.Fatal(err)
			}
		}
	} else {
		for i := range links {
			must[graph.WriteResult](t, "AddLink")(s.AddLink(ctx, &links[i]))
		}
	}
	ls := must[[]graph.Link](t, "GetLinkList")(s.GetLinkList(ctx, graph.NewListQuery(17, lt), nil))
	if len(ls) != graph.DefaultListLimit {
		t.Fatalf("got %d links, want the default limit %d", len(ls), graph.DefaultListLimit)
	}
	if ls[0].ID2 != n || ls[len(ls)-1].ID2 != 6 {
		t.Fatalf("first %d last %d", ls[0].ID2, ls[len(ls)-1].ID2)
	}
}

func testCountNone(t *testing.T, s store.Store) {
	if c := count(t, s, 424242); c != 0 {
		t.Fatalf("count of an unknown key %d", c)
	}
}

func testNodes(t *testing.T, s store.Store) {
	n1 := graph.Node{Type: graph.NodeType, Version: 1, Time: 1000, Data: []byte("node one")}
	id1 := must[int64](t, "AddNode")(s.AddNode(ctx, &n1))
	n2 := graph.Node{Type: graph.NodeType, Version: 1, Time: 1001, Data: []byte("two")}
	id2 := must[int64](t, "AddNode")(s.AddNode(ctx, &n2))
	if id2 <= id1 || id1 < 1 {
		t.Fatalf("ids %d, %d: must be positive and increasing", id1, id2)
	}
	got, ok, err := s.GetNode(ctx, graph.NodeType, id1)
	if err != nil || !ok || got.ID != id1 || got.Version != 1 || got.Time != 1000 || string(got.Data) != "node one" || got.Type != graph.NodeType {
		t.Fatalf("GetNode: %+v %v %v", got, ok, err)
	}
	if _, ok, _ := s.GetNode(ctx, graph.NodeType+1, id1); ok {
		t.Error("GetNode with the wrong type found the node")
	}
	if _, ok, _ := s.GetNode(ctx, graph.NodeType, id2+1000); ok {
		t.Error("GetNode of an absent id found a node")
	}
	upd := graph.Node{ID: id1, Type: graph.NodeType, Version: 2, Time: 2000, Data: []byte("updated")}
	if ok := must[bool](t, "UpdateNode")(s.UpdateNode(ctx, &upd)); !ok {
		t.Error("UpdateNode did not match")
	}
	got, _, _ = s.GetNode(ctx, graph.NodeType, id1)
	if got.Version != 2 || got.Time != 2000 || string(got.Data) != "updated" {
		t.Fatalf("after update: %+v", got)
	}
	wrong := upd
	wrong.Type++
	if ok := must[bool](t, "UpdateNode")(s.UpdateNode(ctx, &wrong)); ok {
		t.Error("UpdateNode matched the wrong type")
	}
	if ok := must[bool](t, "DeleteNode")(s.DeleteNode(ctx, graph.NodeType+1, id1)); ok {
		t.Error("DeleteNode matched the wrong type")
	}
	if ok := must[bool](t, "DeleteNode")(s.DeleteNode(ctx, graph.NodeType, id1)); !ok {
		t.Error("DeleteNode did not match")
	}
	if _, ok, _ := s.GetNode(ctx, graph.NodeType, id1); ok {
		t.Error("deleted node still found")
	}
	if ok := must[bool](t, "DeleteNode")(s.DeleteNode(ctx, graph.NodeType, id1)); ok {
		t.Error("second DeleteNode matched")
	}
	absent := graph.Node{ID: id2 + 1000, Type: graph.NodeType, Version: 2}
	if ok := must[bool](t, "UpdateNode")(s.UpdateNode(ctx, &absent)); ok {
		t.Error("UpdateNode of an absent node matched")
	}
}

func testBinary(t *testing.T, s store.Store) {
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	a := link(18, 1, 1, 10, "")
	a.Data = all[:255]
	b := link(18, 2, 1, 11, "")
	b.Data = append([]byte{255, 0, 0, 39, 92, 34}, all[250:]...)
	for _, l := range []*graph.Link{&a, &b} {
		must[graph.WriteResult](t, "AddLink")(s.AddLink(ctx, l))
	}
	got := must[[]graph.Link](t, "MultigetLinks")(s.MultigetLinks(ctx, 18, lt, []int64{1, 2}, nil))
	sort.Slice(got, func(i, j int) bool { return got[i].ID2 < got[j].ID2 })
	if len(got) != 2 || !bytes.Equal(got[0].Data, a.Data) || !bytes.Equal(got[1].Data, b.Data) {
		t.Fatalf("binary link payloads did not round-trip: %v", got)
	}
	ls := must[[]graph.Link](t, "GetLinkList")(s.GetLinkList(ctx, graph.NewListQuery(18, lt), nil))
	if len(ls) != 2 || !bytes.Equal(ls[1].Data, a.Data) {
		t.Fatal("binary payload through GetLinkList")
	}
	big := make([]byte, 100_000)
	for i := range big {
		big[i] = byte(i * 7)
	}
	for _, data := range [][]byte{all, big, {}} {
		n := graph.Node{Type: graph.NodeType, Version: 1, Time: 5, Data: data}
		id := must[int64](t, "AddNode")(s.AddNode(ctx, &n))
		got, ok, err := s.GetNode(ctx, graph.NodeType, id)
		if err != nil || !ok || !bytes.Equal(got.Data, data) {
			t.Fatalf("node payload of %d bytes did not round-trip (%d bytes back, %v)", len(data), len(got.Data), err)
		}
	}
}

func testBulk(t *testing.T, s store.Store) {
	lo, ok := s.(store.BulkLoader)
	if !ok {
		t.Skip("store has no bulk loader")
	}
	info := store.LoadInfo{StartID1: 1, MaxID1: 1001}
	if err := lo.BeginLoad(ctx, info); err != nil {
		t.Fatal(err)
	}
	var nodes []graph.Node
	for id := int64(1); id <= 1000; id += 3 {
		nodes = append(nodes, graph.Node{ID: id, Type: graph.NodeType, Version: 1, Time: 7, Data: []byte{byte(id)}})
	}
	// Bulk paths must carry every byte value (tabs, newlines, NUL, quotes, backslashes).
	binary := make([]byte, 255)
	for i := range binary {
		binary[i] = byte(255 - i)
	}
	nodes[len(nodes)-1].Data = binary
	if err := lo.LoadNodes(ctx, nodes); err != nil {
		t.Fatal(err)
	}
	links := []graph.Link{link(20, 21, 1, 5, "a"), link(20, 22, 1, 6, "b"), link(20, 23, 1, 7, "c")}
	links[1].Data = binary
	if err := lo.LoadLinks(ctx, links); err != nil {
		t.Fatal(err)
	}
	if c := count(t, s, 20); c != 0 {
		t.Fatalf("LoadLinks maintained counts: %d", c)
	}
	if err := lo.LoadCounts(ctx, []graph.Count{{ID1: 20, LinkType: lt, Count: 3, Time: 9, Version: 0}}); err != nil {
		t.Fatal(err)
	}
	if err := lo.EndLoad(ctx, info); err != nil {
		t.Fatal(err)
	}
	if c := count(t, s, 20); c != 3 {
		t.Fatalf("loaded count %d", c)
	}
	ls := must[[]graph.Link](t, "GetLinkList")(s.GetLinkList(ctx, graph.NewListQuery(20, lt), nil))
	if len(ls) != 3 || ls[0].ID2 != 23 || !bytes.Equal(ls[1].Data, binary) {
		t.Fatalf("loaded list %+v", ls)
	}
	// Every loaded node with its payload: among them a tab (265), a
	// newline (10), NUL (256), a backslash (604) and all 255 byte values
	// (the last node).
	for _, want := range nodes {
		got, ok, err := s.GetNode(ctx, graph.NodeType, want.ID)
		if err != nil || !ok || !bytes.Equal(got.Data, want.Data) || got.Version != want.Version || got.Time != want.Time {
			t.Fatalf("loaded node %d: %+v %v %v, want %+v", want.ID, got, ok, err, want)
		}
	}
	n := graph.Node{Type: graph.NodeType, Version: 1, Time: 1}
	id := must[int64](t, "AddNode")(s.AddNode(ctx, &n))
	if id < info.MaxID1 {
		t.Fatalf("AddNode after a load of ids below %d returned %d", info.MaxID1, id)
	}
	// A write after the load keeps the loaded count.
	l := link(20, 24, 1, 8, "d")
	must[graph.WriteResult](t, "AddLink")(s.AddLink(ctx, &l))
	if c := count(t, s, 20); c != 4 {
		t.Fatalf("count after a write on a loaded list: %d", c)
	}
}

func testAbilities(t *testing.T, s store.Store) {
	l := link(30, 1, 1, 1, "a")
	must[graph.WriteResult](t, "AddLink")(s.AddLink(ctx, &l))
	n := graph.Node{Type: graph.NodeType, Version: 1}
	must[int64](t, "AddNode")(s.AddNode(ctx, &n))
	if ms, ok := s.(store.MetaStore); ok {
		if err := ms.PutMeta(ctx, map[string]string{"a": "1", "b": "2"}); err != nil {
			t.Fatal(err)
		}
		if err := ms.PutMeta(ctx, map[string]string{"a": "3"}); err != nil {
			t.Fatal(err)
		}
		m := must[map[string]string](t, "GetMeta")(ms.GetMeta(ctx))
		if len(m) != 1 || m["a"] != "3" {
			t.Fatalf("meta %v, want exactly a=3 (PutMeta replaces)", m)
		}
	}
	if sc, ok := s.(store.Scanner); ok {
		lo, hi, ok, err := sc.NodeIDRange(ctx)
		if err != nil || !ok || lo < 1 || hi < lo {
			t.Fatalf("NodeIDRange %d %d %v %v", lo, hi, ok, err)
		}
		var prev [2]int64
		if err := sc.ScanVisibleLinkCounts(ctx, func(id1, typ, n int64) error {
			if id1 < prev[0] || (id1 == prev[0] && typ <= prev[1]) {
				return fmt.Errorf("not ordered: (%d,%d) after %v", id1, typ, prev)
			}
			prev = [2]int64{id1, typ}
			if id1 == 30 && n != 1 {
				return fmt.Errorf("visible links of 30: %d", n)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	if sz, ok := s.(store.Sizer); ok {
		if n, err := sz.SizeOnDisk(ctx); err != nil || n < 0 {
			t.Fatalf("SizeOnDisk %d %v", n, err)
		}
	}
	if d, ok := s.(store.Describer); ok {
		desc, err := d.Describe(ctx)
		if err != nil || desc.Version == "" {
			t.Fatalf("Describe %+v %v", desc, err)
		}
	}
	if ec, ok := s.(store.EmptyChecker); ok {
		if empty := must[bool](t, "IsEmpty")(ec.IsEmpty(ctx)); empty {
			t.Fatal("IsEmpty on a store with data")
		}
	}
	if r, ok := s.(store.Resetter); ok {
		if err := r.Reset(ctx); err != nil {
			t.Fatal(err)
		}
		if c := count(t, s, 30); c != 0 {
			t.Fatalf("count after Reset: %d", c)
		}
		if _, ok := getOne(t, s, 30, 1); ok {
			t.Fatal("link after Reset")
		}
		if ec, ok := s.(store.EmptyChecker); ok {
			if empty := must[bool](t, "IsEmpty")(ec.IsEmpty(ctx)); !empty {
				t.Fatal("not empty after Reset")
			}
		}
	}
}
