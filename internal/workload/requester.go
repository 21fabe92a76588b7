package workload

import (
	"context"
	"math"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/linkbench/linkbench/internal/dist"
	"github.com/linkbench/linkbench/internal/gen"
	"github.com/linkbench/linkbench/internal/graph"
	"github.com/linkbench/linkbench/internal/stats"
	"github.com/linkbench/linkbench/internal/store"
)

// Existence probabilities of the id2 chooser (SPEC 4).
const (
	pAddExist    = 0.05
	pUpdateExist = 0.9
	pDeleteExist = 0.9
	pGetExist    = 0.5
	// historyLimit bounds the remembered list tails per requester.
	historyLimit = 2048
)

// listTail remembers where a GET_LINKS_LIST that hit the page limit ended.
type listTail struct {
	id1, linkType, time int64
}

// tailKey is the (id1, link_type) of a remembered tail.
type tailKey struct{ id1, linkType int64 }

// sizer draws multiget sizes.
type sizer interface{ Next(r *rand.Rand) int64 }

// requester is one request-phase worker. Everything in it is owned by its
// goroutine.
type requester struct {
	id     int
	p      *RequestPhase
	rng    *rand.Rand
	handle *stats.Handle
	store  store.Store
	// writer writes links for store without reading what each write
	// found, as the reference's requester does (store.Blind; set with
	// store by use).
	writer store.BlindLinkWriter

	cumMix [graph.NumRequestOps]float64

	// ref is set with workload_semantics = reference: the reference's id2
	// choice and list-tail cache (its samplers are in the choosers).
	ref bool

	linkRead, linkWrite        idChooser
	nodeRead, nodeUpd, nodeDel nodeChooser
	multiget                   sizer // nil: one id2 per multiget
	linkSize, nodeSize         *dist.LogNormalDist
	// lastNodeID is the id of the last node operation, which the
	// reference's round robin continues from.
	lastNodeID int64

	history []listTail
	// historyIdx indexes history by (id1, link_type) with the reference's
	// semantics (see rememberTail).
	historyIdx map[tailKey]int
	links      []graph.Link
	id2s       []int64
	buf        []byte
	link       graph.Link
	node       graph.Node

	done, failed int64
	// The reference's counters: links returned by multigets that found
	// any (found), id2s asked by multigets that found none (notFound),
	// history queries, and recorded GET_LINKS_LIST requests (the
	// denominator of its "history queries = X/Y").
	found, notFound, historyQueries, listRequests int64
	lastRetries                                   int
	// sent is when the current operation's store call began (see call).
	sent           time.Time
	lastErr        error
	stoppedOnFails bool

	// paceLag is the longest a paced requester sent an op after its
	// intended start in the measured time; paceUncounted counts the ops
	// it sent after the warm-up that were due during it (not recorded,
	// see run).
	paceLag       time.Duration
	paceUncounted int64
	// late is how long after its intended start a requestrate requester
	// sent its latest op, ns, for the live figures (PaceBehind).
	late atomic.Int64

	// watch is the requester's operation deadline (see watchdog); lastOK
	// and lastFail are the ends of its last success and failure, for the
	// end-of-phase verdict on the server; returned is set when its loop
	// has ended (its fields may then be read).
	watch            *watch
	lastOK, lastFail time.Time
	lastFailErr      error
	failStreak       int64 // failures since the last success
	returned         atomic.Bool
}

// nextOp draws an operation from the cumulative mix.
func (q *requester) nextOp() graph.Op {
	r := q.rng.Float64() * 100
	for i, c := range q.cumMix {
		if r < c {
			return graph.Op(i)
		}
	}
	// Rounding left r above the last bound: take the last op with weight.
	for i := len(q.cumMix) - 1; i > 0; i-- {
		if q.cumMix[i] > q.cumMix[i-1] {
			return graph.Op(i)
		}
	}
	return 0
}

// linkType draws a link type uniformly.
func (q *requester) linkType() int64 {
	types := q.p.Graph.LinkTypes()
	return types[q.rng.IntN(len(types))]
}

// chooseID2 picks an id2 for (id1, type): with probability pExist one that
// the load created, id1 + U[0, links per type), otherwise a random one:
// the reference draws it from [0, maxid1) (or [0, randomid2max) whether
// it exists or not) and applies id2gen_config = 1; the corrected choice
// draws from [startid1, maxid1).
func (q *requester) chooseID2(id1, linkType int64, pExist float64) int64 {
	cfg := q.p.Config
	existing := q.rng.Float64() < pExist
	if !existing && !q.ref {
		return cfg.StartID1 + q.rng.Int64N(cfg.MaxID1-cfg.StartID1)
	}
	var id2 int64
	switch {
	case cfg.RandomID2Max > 0:
		id2 = q.rng.Int64N(cfg.RandomID2Max)
	case existing:
		id2 = id1 + q.rng.Int64N(max(1, q.p.Graph.LinksPerType(id1)))
	default:
		id2 = q.rng.Int64N(cfg.MaxID1)
	}
	if q.ref && cfg.ID2GenConfig == 1 {
		// Requester-owned id2s: id2 mod requesters = this requester.
		n := int64(cfg.Requesters)
		id2 = id2 - id2%n + int64(q.id)
		if cfg.RandomID2Max > 0 && id2 > cfg.RandomID2Max {
			id2 -= n
		}
	}
	return id2
}

// payload fills q.buf with a payload of log-normal length from g.
func (q *requester) payload(g gen.DataGen, size *dist.LogNormalDist, maxLen int) []byte {
	n := int(math.Round(size.Sample(q.rng)))
	n = min(max(n, 0), maxLen)
	if cap(q.buf) < n {
		q.buf = make([]byte, n, max(n, 2*cap(q.buf)))
	}
	b := q.buf[:n]
	g.Fill(q.rng, b)
	return b
}

// use makes st the store of q's operations.
func (q *requester) use(st store.Store) {
	q.store, q.writer = st, store.Blind(st)
}

// do runs one operation (with transient-error retries) and returns whether
// it failed.
func (q *requester) do(ctx context.Context, op graph.Op) error {
	var err error
	var retries int
	switch op {
	case graph.AddLink, graph.UpdateLink:
		id1 := q.linkWrite.choose(q.rng)
		lt := q.linkType()
		p, g := pAddExist, q.p.Gens.LinkAdd
		if op == graph.UpdateLink {
			p, g = pUpdateExist, q.p.Gens.LinkUp
		}
		q.link = graph.Link{
			ID1: id1, LinkType: lt, ID2: q.chooseID2(id1, lt, p),
			Visibility: graph.VisibilityDefault, Version: 0, Time: time.Now().UnixMilli(),
			Data: q.payload(g, q.linkSize, graph.MaxLinkData-1), // 254, as the reference
		}
		retries, err = q.call(ctx, func() error {
			if op == graph.AddLink {
				return q.writer.AddLinkBlind(ctx, &q.link)
			}
			return q.writer.UpdateLinkBlind(ctx, &q.link)
		})
	case graph.DeleteLink:
		id1 := q.linkWrite.choose(q.rng)
		lt := q.linkType()
		id2 := q.chooseID2(id1, lt, pDeleteExist)
		retries, err = q.call(ctx, func() error {
			return q.writer.DeleteLinkBlind(ctx, id1, lt, id2, false)
		})
	case graph.CountLink:
		id1 := q.linkRead.choose(q.rng)
		lt := q.linkType()
		retries, err = q.call(ctx, func() error {
			_, e := q.store.CountLinks(ctx, id1, lt)
			return e
		})
	case graph.MultigetLink:
		id1 := q.linkRead.choose(q.rng)
		lt := q.linkType()
		n := int64(1)
		if q.multiget != nil {
			n = q.multiget.Next(q.rng)
		}
		q.id2s = q.id2s[:0]
		for i := int64(0); i < n; i++ {
			q.id2s = append(q.id2s, q.chooseID2(id1, lt, pGetExist))
		}
		retries, err = q.call(ctx, func() error {
			var e error
			q.links, e = q.store.MultigetLinks(ctx, id1, lt, q.id2s, q.links[:0])
			return e
		})
		if err == nil {
			if len(q.links) > 0 {
				q.found += int64(len(q.links))
			} else {
				q.notFound += n
			}
		}
	case graph.GetLinksList:
		err, retries = q.getLinkList(ctx)
	case graph.AddNode:
		q.node = graph.Node{
			Type: graph.NodeType, Version: 1, Time: int32(time.Now().Unix()),
			Data: q.payload(q.p.Gens.NodeAdd, q.nodeSize, graph.MaxNodeData-1),
		}
		var id int64
		retries, err = q.call(ctx, func() error {
			var e error
			id, e = q.store.AddNode(ctx, &q.node)
			return e
		})
		if err == nil {
			q.lastNodeID = id
		}
	case graph.UpdateNode:
		q.node = graph.Node{
			ID: q.nodeUpd.choose(q.rng), Type: graph.NodeType, Version: 2, Time: int32(time.Now().Unix()),
			Data: q.payload(q.p.Gens.NodeUp, q.nodeSize, graph.MaxNodeData-1),
		}
		q.lastNodeID = q.node.ID
		retries, err = q.call(ctx, func() error {
			_, e := q.store.UpdateNode(ctx, &q.node)
			return e
		})
	case graph.DeleteNode:
		id := q.nodeDel.choose(q.rng)
		q.lastNodeID = id
		retries, err = q.call(ctx, func() error {
			_, e := q.store.DeleteNode(ctx, graph.NodeType, id)
			return e
		})
	case graph.GetNode:
		id := q.nodeRead.choose(q.rng)
		q.lastNodeID = id
		retries, err = q.call(ctx, func() error {
			_, _, e := q.store.GetNode(ctx, graph.NodeType, id)
			return e
		})
	}
	q.lastRetries = retries
	return err
}

// call runs fn, the operation's store call, under the retry policy. The
// reference times only its store call, not the choice of the operation's
// arguments (ids, payload), so the timed region starts here: q.sent.
func (q *requester) call(ctx context.Context, fn func() error) (int, error) {
	q.sent = time.Now()
	return q.p.Retry.Do(ctx, fn)
}

// getLinkList runs a GET_LINKS_LIST, continuing a remembered tail with
// probability getlinklist_history percent.
func (q *requester) getLinkList(ctx context.Context) (error, int) {
	var query graph.ListQuery
	tailIdx := -1
	if len(q.history) > 0 && q.rng.Float64()*100 < q.p.Config.GetLinkListHistory {
		tailIdx = q.rng.IntN(len(q.history))
		t := q.history[tailIdx]
		query = graph.NewListQuery(t.id1, t.linkType)
		query.MaxTime = t.time
		query.Offset = 1
	} else {
		query = graph.NewListQuery(q.linkRead.choose(q.rng), q.linkType())
	}
	retries, err := q.call(ctx, func() error {
		var e error
		q.links, e = q.store.GetLinkList(ctx, query, q.links[:0])
		return e
	})
	if err != nil {
		return err, retries
	}
	if tailIdx >= 0 {
		q.historyQueries++
	}
	q.handle.RecordValue(graph.RangeSize, int64(len(q.links)))
	full := len(q.links) >= query.Limit
	var last listTail
	if full {
		last = listTail{id1: query.ID1, linkType: query.LinkType, time: q.links[len(q.links)-1].Time}
	}
	switch {
	case full && tailIdx >= 0:
		q.history[tailIdx] = last // more history after this page
	case tailIdx >= 0:
		q.forgetTail(tailIdx)
	case full:
		q.rememberTail(last)
	}
	return nil, retries
}

// rememberTail keeps the tail of a list that filled a page, up to
// historyLimit tails (then a random one is replaced). The reference keeps
// at most one tail per (id1, link_type) through an index that it does not
// clean when it drops or replaces an entry in the middle of its cache, so
// such an (id1, link_type) is never remembered again by that requester;
// the reference semantics keep that index. The corrected semantics keep
// every tail.
func (q *requester) rememberTail(t listTail) {
	if !q.ref {
		if len(q.history) < historyLimit {
			q.history = append(q.history, t)
		} else {
			q.history[q.rng.IntN(len(q.history))] = t
		}
		return
	}
	k := tailKey{t.id1, t.linkType}
	if _, ok := q.historyIdx[k]; ok {
		return
	}
	if q.historyIdx == nil {
		q.historyIdx = map[tailKey]int{}
	}
	if len(q.history) < historyLimit {
		q.history = append(q.history, t)
		q.historyIdx[k] = len(q.history) - 1
		return
	}
	q.replaceTail(q.rng.IntN(len(q.history)), &t)
}

// forgetTail drops the tail at i after a short page.
func (q *requester) forgetTail(i int) {
	if q.ref {
		q.replaceTail(i, nil)
		return
	}
	last := len(q.history) - 1
	q.history[i] = q.history[last]
	q.history = q.history[:last]
}

// replaceTail is the reference's cache update: the entry at i is replaced
// by repl, or, when repl is nil, removed (the last entry fills its place).
// Only an entry in the last position leaves the index.
func (q *requester) replaceTail(i int, repl *listTail) {
	last := len(q.history) - 1
	if i == last {
		old := q.history[i]
		delete(q.historyIdx, tailKey{old.id1, old.linkType})
		if repl == nil {
			q.history = q.history[:last]
			return
		}
		q.history[last] = *repl
		q.historyIdx[tailKey{repl.id1, repl.linkType}] = last
		return
	}
	if repl == nil {
		r := q.history[last]
		q.history = q.history[:last]
		repl = &r
	}
	q.history[i] = *repl
	q.historyIdx[tailKey{repl.id1, repl.linkType}] = i
}
