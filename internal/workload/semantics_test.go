package workload

import (
	"context"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/linkbench/linkbench/internal/dist"
	"github.com/linkbench/linkbench/internal/graph"
	"github.com/linkbench/linkbench/internal/stats"
	"github.com/linkbench/linkbench/internal/store"
)

// newTestRequester builds requester 0 of a phase with the test config.
func newTestRequester(t *testing.T, overrides ...string) *requester {
	t.Helper()
	cfg, data := testConfig(t, overrides...)
	gens, err := NewGens(cfg)
	if err != nil {
		t.Fatal(err)
	}
	p := &RequestPhase{Config: cfg, Graph: testGraph(t, cfg, data), Data: data, Gens: gens}
	q, err := p.newRequester(0, stats.NewCollector(3, false, time.Now()))
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// TestRanksReachTheReferencesIDs: with Zipf distributions so steep that
// nearly every draw is rank 0, each kind of access lands on the id the
// reference's shuffler gives rank 0 at maxid1 = 100001: 14337 for
// correlated link accesses (the super node), 86017 for uncorrelated ones,
// 88065 for nodes. The reference takes its uncorrelated writes from the
// read_uncorr_ keys, so its writes follow read_uncorr_blend = 100; the
// corrected semantics read write_uncorr_blend = 0 and write to the super node.
func TestRanksReachTheReferencesIDs(t *testing.T) {
	steep := []string{"maxid1=100001", "read_shape=20", "write_shape=20", "read_uncorr_shape=20", "read_uncorr_blend=100",
		"write_uncorr_blend=0", "node_read_shape=20", "node_update_shape=20"}
	for _, c := range []struct {
		semantics               string
		read, write, node, upd  int64
		readZipf, multigetRange bool
	}{
		{"reference", 86017, 86017, 88065, 88065, true, true},
		{"corrected", 86017, 14337, 88065, 88065, false, false},
	} {
		q := newTestRequester(t, append(steep, "workload_semantics="+c.semantics)...)
		hits := func(choose func() int64, want int64) {
			t.Helper()
			n := 0
			for range 1000 {
				if choose() == want {
					n++
				}
			}
			if n < 990 {
				t.Errorf("%s: %d of 1000 draws on id %d", c.semantics, n, want)
			}
		}
		hits(func() int64 { return q.linkRead.choose(q.rng) }, c.read)
		hits(func() int64 { return q.linkWrite.choose(q.rng) }, c.write)
		hits(func() int64 { return q.nodeRead.choose(q.rng) }, c.node)
		hits(func() int64 { return q.nodeUpd.choose(q.rng) }, c.upd)
		_, ref := q.linkRead.corr.access.(*dist.RefZipf)
		if ref != c.readZipf {
			t.Errorf("%s: read sampler %T", c.semantics, q.linkRead.corr.access)
		}
	}
	q := newTestRequester(t, append(steep, "read_uncorr_blend=0")...)
	for range 100 {
		if id := q.linkRead.choose(q.rng); id != 14337 {
			t.Fatalf("correlated read of rank 0 went to id %d, the reference's super node is 14337", id)
		}
	}
}

// TestFBWorkloadBlends: with the 2017 workload the reference blends its
// writes like its reads (99.5 % uncorrelated, Zipf 0.8); the corrected
// semantics use write_uncorr_blend = 95 and write_uncorr_shape = 0.741.
func TestFBWorkloadBlends(t *testing.T) {
	ref := newTestRequester(t)
	cor := newTestRequester(t, "workload_semantics=corrected")
	if ref.linkWrite.blend != 0.995 || ref.linkRead.blend != 0.995 || cor.linkWrite.blend != 0.95 {
		t.Fatalf("write blends %v (reference) and %v (corrected), read %v", ref.linkWrite.blend, cor.linkWrite.blend, ref.linkRead.blend)
	}
	if ref.linkWrite.uncorr.access != ref.linkRead.uncorr.access {
		t.Fatal("the reference's uncorrelated writes use another sampler than its uncorrelated reads")
	}
	if ref.linkWrite.uncorr.shuf != ref.linkRead.uncorr.shuf || cor.linkWrite.uncorr.shuf != cor.linkRead.uncorr.shuf {
		t.Fatal("uncorrelated reads and writes do not share one shuffler")
	}
}

// TestMultigetSizePerSemantics: the reference's sizes have mean 1 + 1/p
// = 3.62 and are never 1; the corrected truncated geometric on [1, 128]
// has mean 2.62 and gives 1 with probability p = 0.382.
func TestMultigetSizePerSemantics(t *testing.T) {
	const n = 200_000
	for _, c := range []struct {
		semantics  string
		mean, ones float64
	}{{"reference", 1 + 1/0.382, 0}, {"corrected", 1/0.382 - 0.0, 0.382}} {
		q := newTestRequester(t, "workload_semantics="+c.semantics)
		sum, ones := 0.0, 0
		for range n {
			k := q.multiget.Next(q.rng)
			sum += float64(k)
			if k == 1 {
				ones++
			}
		}
		// Standard deviations: about 2.06 for the sizes, 0.49 for the
		// indicator of size 1; 5 standard errors.
		mean, share := sum/n, float64(ones)/n
		if math.Abs(mean-c.mean) > 5*2.06/math.Sqrt(n) || math.Abs(share-c.ones) > 5*0.49/math.Sqrt(n) {
			t.Errorf("%s: mean size %.3f (want %.3f), %.3f of size 1 (want %.3f)", c.semantics, mean, c.mean, share, c.ones)
		}
	}
}

// TestID2ChoicePerSemantics: an id2 that is not meant to exist is drawn
// from [0, maxid1) by the reference, from [startid1, maxid1) by the
// corrected semantics; id2gen_config = 1 gives each requester its own
// residue of id2 modulo the requester count (reference only).
func TestID2ChoicePerSemantics(t *testing.T) {
	ids := []string{"startid1=1001", "maxid1=2001"}
	ref := newTestRequester(t, ids...)
	cor := newTestRequester(t, append(ids, "workload_semantics=corrected")...)
	below := 0
	for range 10000 {
		a, b := ref.chooseID2(1500, graph.DefaultLinkType, 0), cor.chooseID2(1500, graph.DefaultLinkType, 0)
		if a < 0 || a >= 2001 || b < 1001 || b >= 2001 {
			t.Fatalf("id2s %d (reference) and %d (corrected)", a, b)
		}
		if a < 1001 {
			below++
		}
	}
	if below < 4000 || below > 6000 {
		t.Fatalf("%d of 10000 reference id2s below startid1, want about half", below)
	}
	// Existing id2s: id1 + U[0, links per type) in both.
	per := ref.p.Graph.LinksPerType(1500)
	for range 1000 {
		if a := ref.chooseID2(1500, graph.DefaultLinkType, 1); a < 1500 || a >= 1500+max(per, 1) {
			t.Fatalf("existing id2 %d outside [1500, %d)", a, 1500+per)
		}
	}
	owned := newTestRequester(t, "id2gen_config=1", "requesters=4")
	owned.id = 2
	for range 1000 {
		if a := owned.chooseID2(1500, graph.DefaultLinkType, 0.5); a%4 != 2 {
			t.Fatalf("id2gen_config = 1: requester 2 of 4 chose id2 %d", a)
		}
	}
}

// TestRoundRobinFollowsTheLastNodeID: the reference's round robin for
// node ops continues from the id of the requester's last node op.
func TestRoundRobinFollowsTheLastNodeID(t *testing.T) {
	q := newTestRequester(t, "node_update_function=round_robin")
	q.lastNodeID = 500
	if id := q.nodeUpd.choose(q.rng); id != 501 {
		t.Fatalf("after node 500 the round robin chose %d, want 501", id)
	}
	q.lastNodeID = 1
	if id := q.nodeUpd.choose(q.rng); id != 1 {
		t.Fatalf("after startid1 the round robin chose %d, want startid1", id)
	}
}

// TestListTailCachePerSemantics: the reference keeps one tail per
// (id1, link_type) and never forgets the key of an entry removed from the
// middle of its cache; the corrected cache keeps every tail.
func TestListTailCachePerSemantics(t *testing.T) {
	a, b, c := listTail{1, 7, 100}, listTail{2, 7, 100}, listTail{3, 7, 100}
	q := newTestRequester(t)
	q.rememberTail(a)
	q.rememberTail(listTail{1, 7, 50}) // same list: ignored
	q.rememberTail(b)
	q.rememberTail(c)
	if len(q.history) != 3 || q.history[0] != a {
		t.Fatalf("history %v", q.history)
	}
	q.forgetTail(0) // a leaves the middle: c moves in, a's key stays indexed
	if len(q.history) != 2 || q.history[0] != c || q.history[1] != b {
		t.Fatalf("history after forgetting a: %v", q.history)
	}
	q.rememberTail(a)
	if len(q.history) != 2 {
		t.Fatalf("the reference remembered list (1, 7) again: %v", q.history)
	}
	q.forgetTail(1) // b leaves from the last position: its key goes
	q.rememberTail(b)
	if len(q.history) != 2 || q.history[1] != b {
		t.Fatalf("history after forgetting and remembering b: %v", q.history)
	}
	cor := newTestRequester(t, "workload_semantics=corrected")
	cor.rememberTail(a)
	cor.rememberTail(a)
	if len(cor.history) != 2 {
		t.Fatalf("corrected history %v", cor.history)
	}
}

// multigetCounter counts what multigets ask for and return.
type multigetCounter struct {
	store.Store
	mu                 sync.Mutex
	returned, askedNil int64
}

func (m *multigetCounter) MultigetLinks(ctx context.Context, id1, lt int64, id2s []int64, dst []graph.Link) ([]graph.Link, error) {
	out, err := m.Store.MultigetLinks(ctx, id1, lt, id2s, dst)
	m.mu.Lock()
	if len(out) > 0 {
		m.returned += int64(len(out))
	} else {
		m.askedNil += int64(len(id2s))
	}
	m.mu.Unlock()
	return out, err
}

// TestCountersCountWhatTheReferenceCounts: found = links returned by the
// multigets that found any, not found = id2s of the multigets that found
// none (GET_NODE counts in neither), and the history denominator is the
// recorded GET_LINKS_LIST requests.
func TestCountersCountWhatTheReferenceCounts(t *testing.T) {
	st := openMemory(t)
	p := loadMemory(t, st, "nlinks_func=const", "nlinks_default=10", "requesters=2", "requests=3000", "maxtime=60", "warmup_time=0",
		"addlink=0", "deletelink=0", "updatelink=0", "countlink=0", "getlink=40", "getlinklist=30",
		"getnode=30", "addnode=0", "updatenode=0", "deletenode=0")
	mc := &multigetCounter{Store: st}
	p.Store = mc
	res, err := p.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var found, notFound, lists int64
	for _, th := range res.Threads {
		found += th.Found
		notFound += th.NotFound
		lists += th.ListRequests
	}
	var recorded int64
	for _, s := range res.Summary {
		if s.Op == graph.GetLinksList {
			recorded = s.Count
		}
	}
	if found != mc.returned || notFound != mc.askedNil || found == 0 || notFound == 0 {
		t.Fatalf("found %d, not found %d; the store returned %d links and was asked %d id2s by empty multigets", found, notFound, mc.returned, mc.askedNil)
	}
	if lists != recorded || lists == 0 {
		t.Fatalf("history denominator %d, recorded GET_LINKS_LIST %d", lists, recorded)
	}
}
