package workload

import (
	"context"
	"errors"
	"fmt"
	"strconv"
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
	// OnProgress, when set, is called about once a second, during the
	// store's finishing work too.
	OnProgress func(LoadProgress)
	// OnPrepare, when set, is called about once a second while the load
	// counts the links it will write (a pass over every id1, long for
	// large graphs) with the ids counted and the ids in all.
	OnPrepare func(done, total int64)
	// OnCollector, when set, receives the phase's statistics collector
	// before the loaders start (for live exporters).
	OnCollector func(*stats.Collector)
	// OnStage, when set, is told when each stage ends (nodes, links,
	// counts) and when each of the store's finishing steps starts and ends.
	OnStage func(StageEvent)
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
	// NodeTime, when set, stamps each node row as it is generated (the
	// reference stamps every row with the wall clock, in seconds); nil
	// gives every node the graph's load time, for byte-reproducible graphs.
	NodeTime func() int32
	// Finishes, when set, makes this process's EndLoad partial (one part
	// of a graph several processes load): once it has returned, Finishes
	// records the part as loaded and reports whether this process
	// finishes the whole graph, which EndLoad then does.
	Finishes func(ctx context.Context) (bool, error)
	// FinishOnly skips the inserts: the process only finishes a graph
	// whose parts are all loaded (its whole EndLoad).
	FinishOnly bool

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
	// Finishing is set once every row is written and the store does its
	// finishing work; Stage then names the step under way ("" between
	// steps) and StageElapsed how long it has run.
	Finishing    bool
	Stage        string
	StageElapsed time.Duration
	StageRows    int64
	// InsertElapsed is the time the inserts took, once Finishing.
	InsertElapsed time.Duration
	// Step is how far the finishing step under way has got, when the
	// store can tell (StepKnown).
	Step      store.StepProgress
	StepKnown bool
}

// LoadResult is what the load phase wrote and measured.
type LoadResult struct {
	Nodes, ExpectedNodes int64
	Links, Counts        int64
	Elapsed              time.Duration
	// InsertElapsed is the time until every row was written, FinishElapsed
	// the store's finishing work after it (EndLoad).
	InsertElapsed, FinishElapsed time.Duration
	// Stages are the nodes, links and counts inserted and each step of the
	// store's finishing work, with their own times and rows.
	Stages    []stats.Stage
	Summary   []stats.OpSummary
	Collector *stats.Collector
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
		// A silence, as a bulk call's: the load can resume once the
		// store answers again.
		return &TimeoutError{What: "recording load progress", After: p.Config.OpTimeout, Cause: ErrOpTimeout}
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
	// Counted before any row is written; both passes stop at ctx's end.
	var linksTotal, nodesTotal int64
	var err error
	if !p.FinishOnly {
		if linksTotal, nodesTotal, err = p.expected(ctx, shards); err != nil {
			return nil, err
		}
	}
	start := time.Now()
	stages := &stageLog{start: start, on: p.OnStage}
	info := store.LoadInfo{StartID1: cfg.StartID1, MaxID1: cfg.MaxID1, Stage: stages.begin, Partial: p.Finishes != nil}
	// The whole graph's rows are for the finishing steps: one part of it
	// counts them only if it finishes the graph.
	if !info.Partial {
		if info.Nodes, info.Links, info.Counts, err = p.graphRows(ctx); err != nil {
			return nil, err
		}
	}
	if p.FinishOnly {
		return p.finish(ctx, start, stages, info)
	}
	if err := p.Store.BeginLoad(ctx, info); err != nil {
		return nil, fmt.Errorf("begin load: %w", err)
	}
	c := stats.NewCollector(cfg.HDRAccuracy, false, start)
	if p.OnCollector != nil {
		p.OnCollector(c)
	}
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
	var nodesEnd time.Time
	linksEnd := make([]time.Time, cfg.Loaders)
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
			linksEnd[i] = time.Now()
		}()
	}
	if cfg.GenerateNodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := p.nodeLoader(ctx, c.NewHandle(), shards, &cnt); err != nil {
				fail(err)
				return
			}
			nodesEnd = time.Now()
			stages.add(stages.insertStage("nodes", cnt.nodes.Load(), nodesEnd))
		}()
	}
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	var insertElapsed time.Duration
	progress := func(now time.Time, finishing bool) {
		if p.OnProgress == nil {
			return
		}
		pr := LoadProgress{Elapsed: now.Sub(start), Links: cnt.links.Load(), LinksTotal: linksTotal,
			Nodes: cnt.nodes.Load(), NodesTotal: nodesTotal, Counts: cnt.counts.Load(), Finishing: finishing}
		pr.Stage, pr.StageElapsed, pr.StageRows = stages.current(now)
		if finishing {
			pr.InsertElapsed = insertElapsed
			stepProgress(ctx, p.Store, &pr)
		}
		p.OnProgress(pr)
	}
	t := time.NewTicker(time.Second)
	defer t.Stop()
loop:
	for {
		select {
		case <-finished:
			break loop
		case now := <-t.C:
			c.Tick(now)
			progress(now, false)
		}
	}
	// A load that stops early still reports what it wrote.
	partial := func() *LoadResult {
		c.Tick(time.Now())
		return &LoadResult{Nodes: cnt.nodes.Load(), ExpectedNodes: nodesTotal, Links: cnt.links.Load(), Counts: cnt.counts.Load(),
			Elapsed: time.Since(start), Stages: stages.list(), Summary: c.Summary(), Collector: c}
	}
	if err := context.Cause(ctx); err != nil {
		return partial(), err
	}
	insertEnd := start
	for _, e := range linksEnd {
		insertEnd = maxTime(insertEnd, e)
	}
	stages.add(stages.insertStage("links", cnt.links.Load(), insertEnd))
	stages.add(stages.insertStage("counts", cnt.counts.Load(), insertEnd))
	insertEnd = maxTime(insertEnd, nodesEnd)
	insertElapsed = insertEnd.Sub(start)
	c.Tick(time.Now())
	// The store's finishing work (index builds, statistics, flushes) can
	// take as long as the inserts: progress goes on naming its steps.
	ended := make(chan error, 1)
	go func() { ended <- p.endLoad(ctx, info) }()
	var endErr error
finish:
	for {
		select {
		case endErr = <-ended:
			break finish
		case now := <-t.C:
			progress(now, true)
		}
	}
	if endErr != nil {
		return partial(), fmt.Errorf("end load: %w", endErr)
	}
	end := time.Now()
	res := &LoadResult{
		Nodes: cnt.nodes.Load(), ExpectedNodes: nodesTotal, Links: cnt.links.Load(), Counts: cnt.counts.Load(),
		Elapsed: end.Sub(start), InsertElapsed: insertEnd.Sub(start), FinishElapsed: end.Sub(insertEnd),
		Stages: stages.list(), Summary: c.Summary(), Collector: c,
	}
	progress(end, true)
	return res, nil
}

// endLoad is the store's EndLoad; for one part of a graph, partial, and
// then whole when this process finishes the graph.
func (p *LoadPhase) endLoad(ctx context.Context, info store.LoadInfo) error {
	if err := p.Store.EndLoad(ctx, info); err != nil || p.Finishes == nil {
		return err
	}
	last, err := p.Finishes(ctx)
	if err != nil || !last {
		return err
	}
	info.Partial = false
	if info.Nodes, info.Links, info.Counts, err = p.graphRows(ctx); err != nil {
		return err
	}
	return p.Store.EndLoad(ctx, info)
}

// finish runs only the store's finishing work (FinishOnly), with progress.
func (p *LoadPhase) finish(ctx context.Context, start time.Time, stages *stageLog, info store.LoadInfo) (*LoadResult, error) {
	c := stats.NewCollector(p.Config.HDRAccuracy, false, start)
	if p.OnCollector != nil {
		p.OnCollector(c)
	}
	ended := make(chan error, 1)
	go func() { ended <- p.Store.EndLoad(ctx, info) }()
	t := time.NewTicker(time.Second)
	defer t.Stop()
	progress := func(now time.Time) {
		if p.OnProgress != nil {
			pr := LoadProgress{Elapsed: now.Sub(start), Finishing: true}
			pr.Stage, pr.StageElapsed, pr.StageRows = stages.current(now)
			p.OnProgress(pr)
		}
	}
	for {
		select {
		case err := <-ended:
			end := time.Now()
			c.Tick(end)
			res := &LoadResult{Elapsed: end.Sub(start), FinishElapsed: end.Sub(start), Stages: stages.list(), Summary: c.Summary(), Collector: c}
			if err != nil {
				return res, fmt.Errorf("end load: %w", err)
			}
			progress(end)
			return res, nil
		case now := <-t.C:
			progress(now)
		}
	}
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
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
	pl := p.plan(shards)
	chunk := func(lo, hi int64) {
		unit := nodeUnit(lo)
		if p.done(unit) {
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
			if p.NodeTime != nil {
				n.Time = p.NodeTime()
			}
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
	}
	for k := int64(0); k < pl.mine() && err == nil; k++ {
		if err = ctx.Err(); err == nil {
			chunk(pl.chunk(k))
		}
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
