package workload

import (
	"context"
	"encoding/binary"
	"hash/fnv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linkbench/linkbench/internal/config"
	"github.com/linkbench/linkbench/internal/dist"
	"github.com/linkbench/linkbench/internal/gen"
	"github.com/linkbench/linkbench/internal/graph"
	"github.com/linkbench/linkbench/internal/store"
)

// hashLoader is a BulkLoader that keeps an order-independent hash of every
// row it receives, so loads with different splits can be compared.
type hashLoader struct {
	mu                   sync.Mutex
	sum                  uint64
	links, nodes, counts int64
	maxPerTypeBatch      int
}

func rowHash(parts ...any) uint64 {
	h := fnv.New64a()
	var b [8]byte
	for _, p := range parts {
		switch v := p.(type) {
		case int64:
			binary.LittleEndian.PutUint64(b[:], uint64(v))
			h.Write(b[:])
		case []byte:
			binary.LittleEndian.PutUint64(b[:], uint64(len(v)))
			h.Write(b[:])
			h.Write(v)
		}
	}
	return h.Sum64()
}

func (h *hashLoader) BeginLoad(context.Context, store.LoadInfo) error { return nil }
func (h *hashLoader) EndLoad(context.Context, store.LoadInfo) error   { return nil }

func (h *hashLoader) LoadNodes(_ context.Context, nodes []graph.Node) error {
	var s uint64
	for _, n := range nodes {
		s += rowHash(n.ID, int64(n.Type), n.Version, int64(n.Time), n.Data)
	}
	h.mu.Lock()
	h.sum += s
	h.nodes += int64(len(nodes))
	h.mu.Unlock()
	return nil
}

func (h *hashLoader) LoadLinks(_ context.Context, links []graph.Link) error {
	var s uint64
	for _, l := range links {
		s += rowHash(l.ID1, l.LinkType, l.ID2, int64(l.Visibility), l.Data, int64(l.Version), l.Time)
	}
	h.mu.Lock()
	h.sum += s
	h.links += int64(len(links))
	h.maxPerTypeBatch = max(h.maxPerTypeBatch, len(links))
	h.mu.Unlock()
	return nil
}

func (h *hashLoader) LoadCounts(_ context.Context, counts []graph.Count) error {
	var s uint64
	for _, c := range counts {
		s += rowHash(c.ID1, c.LinkType, c.Count, c.Time, c.Version)
	}
	h.mu.Lock()
	h.sum += s
	h.counts += int64(len(counts))
	h.mu.Unlock()
	return nil
}

// testDataFile has a heavy tail: the top-ranked node gets 150,000 links,
// more than two pieces, so the piece split is exercised.
const testDataFile = `nlinks
1 60
2 80
10 95
100 99
150000 100
link_nreads
1 50
10 90
100 100
link_nwrites
1 50
10 90
100 100
node_nreads
1 50
10 100
node_nwrites
1 50
10 100
`

func testConfig(t *testing.T, overrides ...string) (*config.Config, *dist.DataFile) {
	t.Helper()
	data, err := dist.ParseDataFile(strings.NewReader(testDataFile), "test.dat")
	if err != nil {
		t.Fatal(err)
	}
	cfg, _, err := config.Load(config.Source{
		Defaults:  map[string]string{"store": "memory", "workload_file": "config/FBWorkload.properties"},
		Overrides: append([]string{"maxid1=3001", "loader_chunk_size=100", "bulk_insert_count=500", "load_random_seed=42", "request_random_seed=7"}, overrides...),
	})
	if err != nil {
		t.Fatal(err)
	}
	return cfg, data
}

func testGraph(t *testing.T, cfg *config.Config, data *dist.DataFile) *gen.Graph {
	t.Helper()
	g, err := gen.NewGraph(gen.GraphSpec{
		StartID1: cfg.StartID1, MaxID1: cfg.MaxID1, LinkTypeCount: cfg.LinkTypeCount,
		NLinks: cfg.NLinks, Data: data, LinkDataSize: cfg.LinkDataSize, NodeDataSize: cfg.NodeDataSize,
		LinkGen: cfg.LinkAddGen, NodeGen: cfg.NodeAddGen, Seed: cfg.LoadRandomSeed, NowMs: 1_700_000_000_000,
	})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func loadHash(t *testing.T, loaders, shard, shards int) *hashLoader {
	t.Helper()
	cfg, data := testConfig(t)
	cfg.Loaders = loaders
	h := &hashLoader{}
	lp := &LoadPhase{Config: cfg, Store: h, Graph: testGraph(t, cfg, data), Retry: store.DefaultRetryPolicy, Shard: shard, Shards: shards}
	res, err := lp.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.Links != h.links || res.Nodes != h.nodes || res.Counts != h.counts {
		t.Fatalf("result %+v disagrees with rows received (%d links, %d nodes, %d counts)", res, h.links, h.nodes, h.counts)
	}
	return h
}

func TestLoadIsIdenticalForAnyNumberOfLoaders(t *testing.T) {
	base := loadHash(t, 1, 0, 1)
	if base.links < 300000 {
		t.Fatalf("only %d links: the test graph should hold the 150,000-link super node twice", base.links)
	}
	if base.nodes != 3000 || base.counts != 3000*2 {
		t.Fatalf("%d nodes, %d counts", base.nodes, base.counts)
	}
	for _, n := range []int{2, 7} {
		h := loadHash(t, n, 0, 1)
		if h.sum != base.sum || h.links != base.links {
			t.Errorf("%d loaders: hash %x (%d links), 1 loader: %x (%d links)", n, h.sum, h.links, base.sum, base.links)
		}
	}
}

func TestShardsTogetherLoadTheWholeGraph(t *testing.T) {
	base := loadHash(t, 2, 0, 1)
	var sum uint64
	var links, nodes int64
	for s := 0; s < 3; s++ {
		h := loadHash(t, 2, s, 3)
		sum += h.sum
		links += h.links
		nodes += h.nodes
	}
	if sum != base.sum || links != base.links || nodes != base.nodes {
		t.Fatalf("3 shards: hash %x, %d links, %d nodes; one process: %x, %d, %d", sum, links, nodes, base.sum, base.links, base.nodes)
	}
}

func TestLoadStopsOnCancel(t *testing.T) {
	cfg, data := testConfig(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	lp := &LoadPhase{Config: cfg, Store: &hashLoader{}, Graph: testGraph(t, cfg, data), Retry: store.DefaultRetryPolicy}
	done := make(chan error, 1)
	go func() { _, err := lp.Run(ctx); done <- err }()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("cancelled load returned no error")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("cancelled load did not return")
	}
}

// nodeTimes records the time of every node row.
type nodeTimes struct {
	hashLoader
	mu    sync.Mutex
	times map[int32]int
}

func (n *nodeTimes) LoadNodes(ctx context.Context, nodes []graph.Node) error {
	n.mu.Lock()
	for _, x := range nodes {
		n.times[x.Time]++
	}
	n.mu.Unlock()
	return n.hashLoader.LoadNodes(ctx, nodes)
}

// TestNodeRowsAreStampedOneByOne: with a clock, every node row gets the
// clock's value when it is generated, as the reference stamps each row.
func TestNodeRowsAreStampedOneByOne(t *testing.T) {
	cfg, data := testConfig(t, "nlinks_func=const", "nlinks_default=2")
	var tick atomic.Int32
	st := &nodeTimes{times: map[int32]int{}}
	lp := &LoadPhase{Config: cfg, Store: st, Graph: testGraph(t, cfg, data), Retry: store.DefaultRetryPolicy,
		NodeTime: func() int32 { return tick.Add(1) }}
	if _, err := lp.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(st.times) != 3000 || st.times[1] != 1 || st.times[3000] != 1 {
		t.Fatalf("%d distinct node times for 3000 nodes (want one each, 1..3000)", len(st.times))
	}
}
