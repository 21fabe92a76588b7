package workload

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/linkbench/linkbench/internal/config"
	"github.com/linkbench/linkbench/internal/gen"
	"github.com/linkbench/linkbench/internal/graph"
	"github.com/linkbench/linkbench/internal/stats"
	"github.com/linkbench/linkbench/internal/store"
)

// pieceLinks is the most links of one (id1, link_type) a single task
// loads. Larger adjacency lists (the "super nodes" of the real degree
// distribution) are split into pieces that all loaders share.
const pieceLinks = 1 << 16

// LoadPhase is the configured load phase. Fill the exported fields, then
// call Run once.
type LoadPhase struct {
	Config *config.Config
	Store  store.BulkLoader
	Graph  *gen.Graph
	Retry  store.RetryPolicy
	// Shard and Shards select this process's part of the graph: chunks
	// (and pieces) whose sequence number is Shard modulo Shards. Zero
	// Shards means 1.
	Shard, Shards int
	// OnProgress, when set, is called about once a second.
	OnProgress func(LoadProgress)
	// OnPrepare, when set, is called about once a second while the load
	// counts the links it will write (a pass over every id1, long for
	// large graphs) with the ids counted and the ids in all.
	OnPrepare func(done, total int64)
	// Journal, when set, records in the store which units of work (chunks
	// of links and counts, pieces of large lists, chunks of nodes) were
	// started and which are durably written, under keys JournalPrefix+unit,
	// so that an interrupted load can be resumed. Every unit's rows are
	// then flushed before it is marked done.
	Journal       store.Journaler
	JournalPrefix string
	// Resume is the journal of the interrupted load this one resumes
	// (unit name to JournalStarted or JournalDone): done units are
	// skipped, started ones written again with store.WithSkipExisting.
	Resume map[string]string

	batch int // rows per bulk call
}

// userSetBatch reports whether bulk_insert_count came from the user.
func userSetBatch(cfg *config.Config) bool {
	if cfg.Props == nil {
		return false
	}
	e, ok := cfg.Props.Lookup("bulk_insert_count")
	return ok && e.Origin >= config.FromMain
}

// LoadProgress is a snapshot of a running load.
type LoadProgress struct {
	Elapsed           time.Duration
	Links, LinksTotal int64
	Nodes, NodesTotal int64
	Counts            int64
}

// LoadResult is what the load phase wrote and measured.
type LoadResult struct {
	Nodes, ExpectedNodes int64
	Links, Counts        int64
	Elapsed              time.Duration
	Summary              []stats.OpSummary
	Collector            *stats.Collector
}

// Journal entry values.
const (
	JournalStarted = "started"
	JournalDone    = "done"
)

// Unit names of the journal.
func chunkUnit(lo int64) string { return "c" + strconv.FormatInt(lo, 10) }
func nodeUnit(lo int64) string  { return "n" + strconv.FormatInt(lo, 10) }
func pieceUnit(id1 int64, typ int, from int64) string {
	return "p" + strconv.FormatInt(id1, 10) + "." + strconv.Itoa(typ) + "." + strconv.FormatInt(from, 10)
}

// done reports whether the resumed journal has unit written.
func (p *LoadPhase) done(unit string) bool { return p.Resume[unit] == JournalDone }

// unitCtx is the context for writing unit: marked for idempotent writes
// when an interrupted load had started it.
func (p *LoadPhase) unitCtx(ctx context.Context, unit string) context.Context {
	if p.Resume[unit] == JournalStarted {
		return store.WithSkipExisting(ctx)
	}
	return ctx
}

// mark records a unit's state in the journal (with retries).
func (p *LoadPhase) mark(ctx context.Context, unit, state string) error {
	if p.Journal == nil || (state == JournalStarted && p.Resume[unit] == JournalStarted) {
		return nil
	}
	octx := ctx
	if t := p.Config.OpTimeout; t > 0 {
		var cancel context.CancelFunc
		octx, cancel = context.WithTimeoutCause(ctx, t, ErrOpTimeout)
		defer cancel()
	}
	_, err := p.Retry.Do(octx, func() error {
		return p.Journal.UpdateMeta(octx, map[string]string{p.JournalPrefix + unit: state}, "")
	})
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return context.Cause(ctx)
	case errors.Is(context.Cause(octx), ErrOpTimeout):
		err = fmt.Errorf("no answer from the store within op_timeout = %s", p.Config.OpTimeout)
	}
	return fmt.Errorf("record load progress: %w", err)
}

// task is one unit of loader work: a chunk of id1s (all their counts and
// the links of their small adjacency lists), or one piece of a large list.
type task struct {
	lo, hi int64 // chunk [lo, hi)
	piece  bool
	id1    int64
	typ    int
	from   int64
	to     int64
}

type loadCounters struct {
	links, nodes, counts atomic.Int64
}

// Run loads the graph. On error or cancellation it stops all loaders and
// returns the first error, with the result of what was written when any
// loader had started.
func (p *LoadPhase) Run(ctx context.Context) (*LoadResult, error) {
	cfg := p.Config
	shards := max(p.Shards, 1)
	info := store.LoadInfo{StartID1: cfg.StartID1, MaxID1: cfg.MaxID1}
	// Counted before any row is written.
	linksTotal, nodesTotal, err := p.expected(ctx, shards)
	if err != nil {
		return nil, err
	}
	if err := p.Store.BeginLoad(ctx, info); err != nil {
		return nil, fmt.Errorf("begin load: %w", err)
	}
	start := time.Now()
	c := stats.NewCollector(cfg.HDRAccuracy, false, start)
	var cnt loadCounters
	p.batch = max(cfg.BulkInsertCount, 1)
	if h, ok := p.Store.(store.BatchHinter); ok && !userSetBatch(cfg) {
		p.batch = max(p.batch, h.BulkBatchRows())
	}

	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	fail := func(err error) { cancel(err) }

	tasks := make(chan task, 4*cfg.Loaders)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(tasks)
		p.produce(ctx, shards, tasks)
	}()
	for i := 0; i < cfg.Loaders; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := p.linkLoader(ctx, c.NewHandle(), tasks, &cnt); err != nil {
				fail(err)
			}
		}()
	}
	if cfg.GenerateNodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := p.nodeLoader(ctx, c.NewHandle(), shards, &cnt); err != nil {
				fail(err)
			}
		}()
	}
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	t := time.NewTicker(time.Second)
	defer t.Stop()
loop:
	for {
		select {
		case <-finished:
			break loop
		case now := <-t.C:
			c.Tick(now)
			if p.OnProgress != nil {
				p.OnProgress(LoadProgress{Elapsed: now.Sub(start), Links: cnt.links.Load(), LinksTotal: linksTotal,
					Nodes: cnt.nodes.Load(), NodesTotal: nodesTotal, Counts: cnt.counts.Load()})
			}
		}
	}
	// A load that stops early still reports what it wrote.
	partial := func() *LoadResult {
		c.Tick(time.Now())
		return &LoadResult{Nodes: cnt.nodes.Load(), ExpectedNodes: nodesTotal, Links: cnt.links.Load(), Counts: cnt.counts.Load(),
			Elapsed: time.Since(start), Summary: c.Summary(), Collector: c}
	}
	if err := context.Cause(ctx); err != nil {
		return partial(), err
	}
	if err := p.Store.EndLoad(ctx, info); err != nil {
		return partial(), fmt.Errorf("end load: %w", err)
	}
	c.Tick(time.Now())
	res := &LoadResult{
		Nodes: cnt.nodes.Load(), ExpectedNodes: nodesTotal, Links: cnt.links.Load(), Counts: cnt.counts.Load(),
		Elapsed: time.Since(start), Summary: c.Summary(), Collector: c,
	}
	if p.OnProgress != nil {
		p.OnProgress(LoadProgress{Elapsed: res.Elapsed, Links: res.Links, LinksTotal: linksTotal,
			Nodes: res.Nodes, NodesTotal: nodesTotal, Counts: res.Counts})
	}
	return res, nil
}

// mine reports whether work item seq belongs to this shard.
func (p *LoadPhase) mine(seq int64, shards int) bool { return seq%int64(shards) == int64(p.Shard) }

// expected sums the links and nodes of this shard's part of the graph
// that are still to load, for the progress display: a pass over every
// id1 (about 30 ns each), so it stops when ctx ends and reports its own
// progress through OnPrepare.
func (p *LoadPhase) expected(ctx context.Context, shards int) (links, nodes int64, err error) {
	var seq int64
	types := int64(p.Config.LinkTypeCount)
	ids := p.Config.MaxID1 - p.Config.StartID1
	if ids > exactCountIDs {
		return p.estimated(ctx, shards)
	}
	nextReport := time.Now().Add(time.Second)
	err = p.walk(ctx, shards, func(lo, hi int64, chunkMine bool) {
		if chunkMine && p.Config.GenerateNodes && !p.done(nodeUnit(lo)) {
			nodes += hi - lo
		}
		chunkTodo := chunkMine && !p.done(chunkUnit(lo))
		for id1 := lo; id1 < hi; id1++ {
			per := p.Graph.LinksPerType(id1)
			switch {
			case per > pieceLinks && shards == 1 && p.Resume == nil:
				links += per * types // every piece is this process's
			case per > pieceLinks:
				for typ := range int(types) {
					for from := int64(0); from < per; from += pieceLinks {
						if p.mine(seq, shards) && !p.done(pieceUnit(id1, typ, from)) {
							links += min(pieceLinks, per-from)
						}
						seq++
					}
				}
			case chunkTodo:
				links += per * types
			}
		}
		if p.OnPrepare != nil && time.Now().After(nextReport) {
			p.OnPrepare(hi-p.Config.StartID1, ids)
			nextReport = time.Now().Add(time.Second)
		}
	})
	return links, nodes, err
}

// exactCountIDs is the largest graph whose links are counted exactly
// before a load (about 2 s); larger ones are estimated from a sample.
const exactCountIDs = 1 << 24

// estimated estimates what expected counts, for graphs too large to walk:
// the links of 2^20 evenly spaced ids scaled to the whole range and to
// this process's share of the units still to load. It is what the progress
// display divides by; the results report the rows actually written.
func (p *LoadPhase) estimated(ctx context.Context, shards int) (links, nodes int64, err error) {
	cfg := p.Config
	ids := cfg.MaxID1 - cfg.StartID1
	const samples = 1 << 20
	stride := float64(ids) / samples
	var sum float64
	for i := range int64(samples) {
		if i%(1<<16) == 0 && ctx.Err() != nil {
			return 0, 0, context.Cause(ctx)
		}
		sum += float64(p.Graph.LinksPerType(cfg.StartID1 + int64(float64(i)*stride)))
	}
	size := max(cfg.LoaderChunkSize, 1)
	chunks := (ids + size - 1) / size
	var doneChunks int64
	for u, v := range p.Resume {
		if v == JournalDone && strings.HasPrefix(u, "c") {
			doneChunks++
		}
	}
	links = int64(sum * stride * float64(cfg.LinkTypeCount) / float64(max(shards, 1)) * float64(chunks-doneChunks) / float64(chunks))
	// Nodes are counted exactly: one step per chunk.
	err = p.walk(ctx, shards, func(lo, hi int64, mine bool) {
		if mine && cfg.GenerateNodes && !p.done(nodeUnit(lo)) {
			nodes += hi - lo
		}
	})
	return links, nodes, err
}

// walk calls fn for every chunk of id1s with whether it belongs to this
// shard, until ctx ends (then it returns the context's error).
func (p *LoadPhase) walk(ctx context.Context, shards int, fn func(lo, hi int64, mine bool)) error {
	cfg := p.Config
	size := max(cfg.LoaderChunkSize, 1)
	var seq int64
	for lo := cfg.StartID1; lo < cfg.MaxID1; lo += size {
		if seq%64 == 0 && ctx.Err() != nil {
			return context.Cause(ctx)
		}
		fn(lo, min(lo+size, cfg.MaxID1), p.mine(seq, shards))
		seq++
	}
	return nil
}

// produce sends this shard's tasks: chunk tasks, and piece tasks for every
// adjacency list longer than pieceLinks. Piece tasks are numbered in their
// own sequence so shards split them evenly whatever chunk they fall in.
func (p *LoadPhase) produce(ctx context.Context, shards int, out chan<- task) {
	var pieceSeq int64
	send := func(t task) bool {
		select {
		case out <- t:
			return true
		case <-ctx.Done():
			return false
		}
	}
	cfg := p.Config
	size := max(cfg.LoaderChunkSize, 1)
	var seq int64
	for lo := cfg.StartID1; lo < cfg.MaxID1; lo += size {
		hi := min(lo+size, cfg.MaxID1)
		if p.mine(seq, shards) && !p.done(chunkUnit(lo)) && !send(task{lo: lo, hi: hi}) {
			return
		}
		seq++
		for id1 := lo; id1 < hi; id1++ {
			per := p.Graph.LinksPerType(id1)
			if per <= pieceLinks {
				continue
			}
			for typ := 0; typ < cfg.LinkTypeCount; typ++ {
				for from := int64(0); from < per; from += pieceLinks {
					if p.mine(pieceSeq, shards) && !p.done(pieceUnit(id1, typ, from)) &&
						!send(task{piece: true, id1: id1, typ: typ, from: from, to: min(from+pieceLinks, per)}) {
						return
					}
					pieceSeq++
				}
			}
		}
	}
}

// linkBatch accumulates links whose payloads are copied into an arena that
// never reallocates while the batch is open.
type linkBatch struct {
	links []graph.Link
	arena []byte
	size  int
}

func newLinkBatch(size int) *linkBatch {
	return &linkBatch{links: make([]graph.Link, 0, size), arena: make([]byte, 0, size*graph.MaxLinkData), size: size}
}

func (b *linkBatch) add(l graph.Link) {
	s := len(b.arena)
	b.arena = append(b.arena, l.Data...)
	l.Data = b.arena[s:len(b.arena):len(b.arena)]
	b.links = append(b.links, l)
}

func (b *linkBatch) full() bool { return len(b.links) >= b.size }

func (b *linkBatch) reset() { b.links, b.arena = b.links[:0], b.arena[:0] }

// linkLoader runs tasks until the channel closes.
func (p *LoadPhase) linkLoader(ctx context.Context, h *stats.Handle, tasks <-chan task, cnt *loadCounters) error {
	bs := p.batch
	w := p.Graph.NewWorker()
	batch := newLinkBatch(bs)
	counts := make([]graph.Count, 0, bs)
	var scratch []graph.Link

	// wctx is the context of the current unit's writes.
	wctx := ctx
	flushLinks := func() error {
		if len(batch.links) == 0 {
			return nil
		}
		n := int64(len(batch.links))
		ctx := wctx
		if err := p.timed(ctx, h, graph.LoadLinksBulk, func(ctx context.Context) error { return p.Store.LoadLinks(ctx, batch.links) }); err != nil {
			return fmt.Errorf("load links of id1 %d..%d: %w", batch.links[0].ID1, batch.links[n-1].ID1, err)
		}
		cnt.links.Add(n)
		batch.reset()
		return nil
	}
	flushCounts := func() error {
		if len(counts) == 0 {
			return nil
		}
		ctx := wctx
		if err := p.timed(ctx, h, graph.LoadCountsBulk, func(ctx context.Context) error { return p.Store.LoadCounts(ctx, counts) }); err != nil {
			return fmt.Errorf("load counts of id1 %d..%d: %w", counts[0].ID1, counts[len(counts)-1].ID1, err)
		}
		cnt.counts.Add(int64(len(counts)))
		counts = counts[:0]
		return nil
	}

	for t := range tasks {
		if err := ctx.Err(); err != nil {
			return err
		}
		unit := chunkUnit(t.lo)
		if t.piece {
			unit = pieceUnit(t.id1, t.typ, t.from)
		}
		if p.Journal != nil {
			if err := p.mark(ctx, unit, JournalStarted); err != nil {
				return err
			}
			wctx = p.unitCtx(ctx, unit)
		}
		if err := p.runTask(t, w, batch, &counts, &scratch, flushLinks, flushCounts); err != nil {
			return err
		}
		if p.Journal != nil {
			// The unit's rows are all written before it is marked done.
			if err := flushLinks(); err != nil {
				return err
			}
			if err := flushCounts(); err != nil {
				return err
			}
			if err := p.mark(ctx, unit, JournalDone); err != nil {
				return err
			}
		}
	}
	if err := flushLinks(); err != nil {
		return err
	}
	return flushCounts()
}

// runTask generates one task's rows into the batches, flushing them as
// they fill.
func (p *LoadPhase) runTask(t task, w *gen.Worker, batch *linkBatch, countsp *[]graph.Count, scratchp *[]graph.Link, flushLinks, flushCounts func() error) error {
	cfg := p.Config
	bs := p.batch
	scratch := *scratchp
	defer func() { *scratchp = scratch }()
	if t.piece {
		for from := t.from; from < t.to; from += int64(bs) {
			scratch = w.Links(t.id1, t.typ, from, min(from+int64(bs), t.to), scratch[:0])
			for _, l := range scratch {
				batch.add(l)
			}
			if err := flushLinks(); err != nil {
				return err
			}
		}
		return nil
	}
	for id1 := t.lo; id1 < t.hi; id1++ {
		per := p.Graph.LinksPerType(id1)
		for typ := 0; typ < cfg.LinkTypeCount; typ++ {
			*countsp = append(*countsp, p.Graph.Count(id1, typ))
			if len(*countsp) >= bs {
				if err := flushCounts(); err != nil {
					return err
				}
			}
			if per > pieceLinks {
				continue // loaded by piece tasks
			}
			for from := int64(0); from < per; {
				room := int64(bs - len(batch.links))
				to := min(per, from+room)
				scratch = w.Links(id1, typ, from, to, scratch[:0])
				for _, l := range scratch {
					batch.add(l)
				}
				from = to
				if batch.full() {
					if err := flushLinks(); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

// nodeLoader loads the nodes of this shard's chunks in batches of
// bulk_insert_count nodes (and at most bulk_insert_kb KiB of payload).
func (p *LoadPhase) nodeLoader(ctx context.Context, h *stats.Handle, shards int, cnt *loadCounters) error {
	cfg := p.Config
	bs := p.batch
	capBytes := 1 << 20 * 4
	if cfg.BulkInsertKB > 0 {
		capBytes = cfg.BulkInsertKB << 10
	}
	w := p.Graph.NewWorker()
	nodes := make([]graph.Node, 0, bs)
	arena := make([]byte, 0, capBytes)
	wctx := ctx // the current unit's writes
	flush := func() error {
		if len(nodes) == 0 {
			return nil
		}
		ctx := wctx
		if err := p.timed(ctx, h, graph.LoadNodesBulk, func(ctx context.Context) error { return p.Store.LoadNodes(ctx, nodes) }); err != nil {
			return fmt.Errorf("load nodes %d..%d: %w", nodes[0].ID, nodes[len(nodes)-1].ID, err)
		}
		cnt.nodes.Add(int64(len(nodes)))
		nodes, arena = nodes[:0], arena[:0]
		return nil
	}
	var err error
	werr := p.walk(ctx, shards, func(lo, hi int64, mine bool) {
		unit := nodeUnit(lo)
		if !mine || err != nil || p.done(unit) {
			return
		}
		if p.Journal != nil {
			if err = p.mark(ctx, unit, JournalStarted); err != nil {
				return
			}
			wctx = p.unitCtx(ctx, unit)
			defer func() {
				if err == nil {
					if err = flush(); err == nil {
						err = p.mark(ctx, unit, JournalDone)
					}
				}
			}()
		}
		for id := lo; id < hi && err == nil; id++ {
			if err = ctx.Err(); err != nil {
				return
			}
			n := w.Node(id)
			if len(arena)+len(n.Data) > cap(arena) && len(nodes) > 0 {
				if err = flush(); err != nil {
					return
				}
			}
			if len(arena)+len(n.Data) <= cap(arena) {
				s := len(arena)
				arena = append(arena, n.Data...)
				n.Data = arena[s:len(arena):len(arena)]
			} else {
				n.Data = append([]byte(nil), n.Data...) // larger than the arena
			}
			nodes = append(nodes, n)
			if len(nodes) >= bs {
				err = flush()
			}
		}
	})
	if err == nil {
		err = werr
	}
	if err != nil {
		return err
	}
	return flush()
}

// timed runs one bulk call with retries and records its latency. The
// call gets op_timeout, retries included: a bulk call takes milliseconds,
// so a timer per call costs nothing, and a server that stops answering
// fails the load (to be resumed) instead of hanging it.
func (p *LoadPhase) timed(ctx context.Context, h *stats.Handle, op graph.Op, fn func(ctx context.Context) error) error {
	start := time.Now()
	octx := ctx
	if t := p.Config.OpTimeout; t > 0 {
		var cancel context.CancelFunc
		octx, cancel = context.WithTimeoutCause(ctx, t, ErrOpTimeout)
		defer cancel()
	}
	retries, err := p.Retry.Do(octx, func() error { return fn(octx) })
	d := time.Since(start)
	if err == nil || ctx.Err() == nil { // a call stopped by the end of the load is not the store's failure
		h.Record(op, int64(d), int64(d), err != nil, retries)
	}
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return context.Cause(ctx)
	case errors.Is(context.Cause(octx), ErrOpTimeout):
		return &TimeoutError{Op: op, After: d, Cause: ErrOpTimeout}
	}
	return err
}
