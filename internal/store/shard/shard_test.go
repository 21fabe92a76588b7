package shard

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/linkbench/linkbench/internal/graph"
	"github.com/linkbench/linkbench/internal/store"
	"github.com/linkbench/linkbench/internal/store/memory"
	"github.com/linkbench/linkbench/internal/store/storetest"
)

func memShards(n int, dbload string) *Store {
	props := store.MapProps{"dbcount": strconv.Itoa(n)}
	if dbload != "" {
		props["dbload"] = dbload
	}
	ts, table, err := Targets(props)
	if err != nil {
		panic(err)
	}
	s := &Store{targets: ts, table: table}
	for range ts {
		s.stores = append(s.stores, &memJournal{Store: memory.New(), meta: map[string]string{}})
	}
	return s
}

// memJournal gives the memory store the metadata of the server stores,
// which the router keeps on its first target.
type memJournal struct {
	*memory.Store
	mu   sync.Mutex
	meta map[string]string
}

func (m *memJournal) GetMeta(context.Context) (map[string]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]string{}
	for k, v := range m.meta {
		out[k] = v
	}
	return out, nil
}

func (m *memJournal) PutMeta(_ context.Context, meta map[string]string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.meta = map[string]string{}
	for k, v := range meta {
		m.meta[k] = v
	}
	return nil
}

func (m *memJournal) UpdateMeta(_ context.Context, set map[string]string, deletePrefix string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k := range m.meta {
		if deletePrefix != "" && strings.HasPrefix(k, deletePrefix) {
			delete(m.meta, k)
		}
	}
	for k, v := range set {
		m.meta[k] = v
	}
	return nil
}

func (m *memJournal) ClaimMeta(_ context.Context, key, value string) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if v, ok := m.meta[key]; ok {
		return v, nil
	}
	m.meta[key] = value
	return value, nil
}

// The whole store contract holds through the router, over three targets.
func TestConformanceOverThreeTargets(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return memShards(3, "") })
}

func TestTargets(t *testing.T) {
	ts, table, err := Targets(store.MapProps{"hosts": "a:1, b:2", "dbcount": "2", "dbprefix": "db"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, x := range ts {
		names = append(names, x.String())
	}
	if got := strings.Join(names, " "); got != "a:1/db0 a:1/db1 b:2/db0 b:2/db1" || len(table) != 4 {
		t.Fatalf("targets %q, table %v", got, table)
	}
	if ts, table, err := Targets(store.MapProps{}); err != nil || len(ts) != 1 || table != nil {
		t.Fatalf("no sharding keys: %v %v %v", ts, table, err)
	}
	for _, c := range []struct {
		props store.MapProps
		want  string
	}{
		{store.MapProps{"hosts": "nohostport"}, "not host:port"},
		{store.MapProps{"dbcount": "0"}, "dbcount"},
		{store.MapProps{"dbcount": "2", "dbload": "50"}, "1 values for 2 targets"},
		{store.MapProps{"dbcount": "2", "dbload": "50,40"}, "sum to 90"},
		{store.MapProps{"dbcount": "2", "dbload": "50,x"}, "not a whole percentage"},
	} {
		if _, _, err := Targets(c.props); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.props, err, c.want)
		}
	}
}

// dbload weights give each target its share of ids, interleaved.
func TestWeightedRouting(t *testing.T) {
	s := memShards(3, "50,30,20")
	hits := make([]int, 3)
	for id := int64(1); id <= 100000; id++ {
		hits[s.Route(id)]++
	}
	if hits[0] != 50000 || hits[1] != 30000 || hits[2] != 20000 {
		t.Fatalf("ids per target %v, want 50000/30000/20000", hits)
	}
	// Interleaved: no run of 10 consecutive ids on one target.
	run := 1
	for id := int64(2); id < 1000; id++ {
		if s.Route(id) == s.Route(id-1) {
			run++
		} else {
			run = 1
		}
		if run >= 10 {
			t.Fatalf("ids up to %d all on target %d", id, s.Route(id))
		}
	}
}

// Rows written behind the router's back on the wrong target make the
// consistency scans fail, naming the row and both targets.
func TestScansProveRouting(t *testing.T) {
	s := memShards(2, "")
	ctx := context.Background()
	for id1 := int64(1); id1 <= 6; id1++ {
		l := graph.Link{ID1: id1, LinkType: graph.DefaultLinkType, ID2: 100, Visibility: graph.VisibilityDefault, Time: 5, Version: 1}
		if _, err := s.AddLink(ctx, &l); err != nil {
			t.Fatal(err)
		}
	}
	var order []int64
	if err := s.ScanCounts(ctx, func(c graph.Count) error { order = append(order, c.ID1); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(order) != 6 || order[0] != 1 || order[5] != 6 {
		t.Fatalf("merged scan order %v", order)
	}
	for i := 1; i < len(order); i++ {
		if order[i] <= order[i-1] {
			t.Fatalf("merged scan out of order: %v", order)
		}
	}
	stray := graph.Link{ID1: 2, LinkType: graph.DefaultLinkType, ID2: 7, Visibility: graph.VisibilityDefault, Time: 5, Version: 1}
	if _, err := s.stores[1].AddLink(ctx, &stray); err != nil { // id1 2 belongs to target 0
		t.Fatal(err)
	}
	err := s.ScanVisibleLinkCounts(ctx, func(id1, lt, n int64) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "id1 2 link_type") || !strings.Contains(err.Error(), "belongs to target linkdb0") {
		t.Fatalf("misrouted row: %v", err)
	}
}

// New nodes get ids from the first target's allocator and live on their
// owner.
func TestAddNodeLivesOnItsOwner(t *testing.T) {
	s := memShards(3, "")
	ctx := context.Background()
	if err := s.EndLoad(ctx, store.LoadInfo{StartID1: 1, MaxID1: 100}); err != nil {
		t.Fatal(err)
	}
	seen := map[int64]bool{}
	for range 9 {
		id, err := s.AddNode(ctx, &graph.Node{Type: 7, Version: 1, Time: 3, Data: []byte("x")})
		if err != nil {
			t.Fatal(err)
		}
		if seen[id] || id < 100 {
			t.Fatalf("id %d repeated or below the loaded ids", id)
		}
		seen[id] = true
		for i, st := range s.stores {
			_, ok, err := st.GetNode(ctx, 7, id)
			if err != nil {
				t.Fatal(err)
			}
			if ok != (i == s.Route(id)) {
				t.Fatalf("node %d on target %d: %v; owner %d", id, i, ok, s.Route(id))
			}
		}
	}
}

func TestEmbeddedStoresRefuseSharding(t *testing.T) {
	drv, err := store.Lookup("memory")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Open(context.Background(), drv, store.Options{Props: store.MapProps{"dbcount": "2"}})
	if err == nil || !strings.Contains(err.Error(), "sharding needs a server store") {
		t.Fatalf("memory with dbcount=2: %v", err)
	}
}
