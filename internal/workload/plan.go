package workload

import (
	"context"
	"strconv"
	"time"
)

// A load's work is split into units that a shard owns without asking
// anyone: chunk k of loader_chunk_size ids (its counts, its short lists
// and, in its own unit, its nodes) belongs to shard k mod N, and the
// pieces of the super nodes' lists, numbered in id order across the
// whole graph, belong to shard (piece number) mod N. A shard enumerates
// its chunks by arithmetic and its pieces from the super nodes alone
// (gen.Graph.Heavy), so starting shard I of N costs its own part, not a
// pass over every id.

// plan is the arithmetic of one shard's chunks.
type plan struct {
	start, end, size int64
	shard, shards    int64
	chunks           int64 // chunks of the whole graph
}

func (p *LoadPhase) plan(shards int) plan {
	cfg := p.Config
	size := max(cfg.LoaderChunkSize, 1)
	return plan{start: cfg.StartID1, end: cfg.MaxID1, size: size, shard: int64(p.Shard), shards: int64(max(shards, 1)),
		chunks: (cfg.MaxID1 - cfg.StartID1 + size - 1) / size}
}

// mine is the number of chunks of this shard.
func (pl plan) mine() int64 {
	if pl.shard >= pl.chunks {
		return 0
	}
	return (pl.chunks-pl.shard-1)/pl.shards + 1
}

// chunk is this shard's k-th chunk [lo, hi).
func (pl plan) chunk(k int64) (lo, hi int64) {
	lo = pl.start + (pl.shard+k*pl.shards)*pl.size
	return lo, min(lo+pl.size, pl.end)
}

// ids is the number of ids in this shard's chunks.
func (pl plan) ids() int64 {
	n := pl.mine()
	if n == 0 {
		return 0
	}
	lo, hi := pl.chunk(n - 1)
	return (n-1)*pl.size + hi - lo
}

// tasks yields this shard's tasks in id order: its chunks, and its pieces
// of every list longer than pieceLinks (skipping the units a resumed load
// has done), until yield returns false.
func (p *LoadPhase) tasks(shards int, yield func(task) bool) {
	pl := p.plan(shards)
	k, mine := int64(0), pl.mine()
	chunksThrough := func(id int64) bool {
		for ; k < mine; k++ {
			lo, hi := pl.chunk(k)
			if lo > id {
				return true
			}
			if !p.done(chunkUnit(lo)) && !yield(task{lo: lo, hi: hi}) {
				return false
			}
		}
		return true
	}
	var seq int64 // the number of the next piece, across every shard
	for id1 := range p.Graph.Heavy(pieceLinks) {
		if !chunksThrough(id1) {
			return
		}
		per := p.Graph.LinksPerType(id1)
		n := (per + pieceLinks - 1) / pieceLinks // pieces per list
		total := n * int64(p.Config.LinkTypeCount)
		// The first of this id's pieces that is this shard's, then every
		// shards-th.
		for j := ((pl.shard-seq)%pl.shards + pl.shards) % pl.shards; j < total; j += pl.shards {
			typ, from := int(j/n), j%n*pieceLinks
			if !p.done(pieceUnit(id1, typ, from)) && !yield(task{piece: true, id1: id1, typ: typ, from: from, to: min(from+pieceLinks, per)}) {
				return
			}
		}
		seq += total
	}
	chunksThrough(pl.end)
}

// produce sends this shard's tasks until they end or ctx does.
func (p *LoadPhase) produce(ctx context.Context, shards int, out chan<- task) {
	p.tasks(shards, func(t task) bool {
		select {
		case out <- t:
			return true
		case <-ctx.Done():
			return false
		}
	})
}

// expected counts the links and nodes of this shard's part still to load,
// for the progress display: exactly up to exactCountIDs ids of its own
// (a pass over them, about 30 ns each, reported through OnPrepare), else
// estimated (estimated). It stops when ctx ends.
func (p *LoadPhase) expected(ctx context.Context, shards int) (links, nodes int64, err error) {
	pl := p.plan(shards)
	if pl.ids() > exactCountIDs {
		return p.estimated(ctx, shards)
	}
	types := int64(p.Config.LinkTypeCount)
	own := pl.ids()
	var counted int64
	nextReport := time.Now().Add(time.Second)
	for k := range pl.mine() {
		if k%64 == 0 && ctx.Err() != nil {
			return 0, 0, context.Cause(ctx)
		}
		lo, hi := pl.chunk(k)
		if p.Config.GenerateNodes && !p.done(nodeUnit(lo)) {
			nodes += hi - lo
		}
		if !p.done(chunkUnit(lo)) {
			for id1 := lo; id1 < hi; id1++ {
				if per := p.Graph.LinksPerType(id1); per <= pieceLinks {
					links += per * types
				}
			}
		}
		counted += hi - lo
		if p.OnPrepare != nil && time.Now().After(nextReport) {
			p.OnPrepare(counted, own)
			nextReport = time.Now().Add(time.Second)
		}
	}
	pieces, err := p.pieceLinks(ctx, shards)
	return links + pieces, nodes, err
}

// pieceLinks is the links of this shard's pieces still to load.
func (p *LoadPhase) pieceLinks(ctx context.Context, shards int) (int64, error) {
	var links, n int64
	p.tasks(shards, func(t task) bool {
		if t.piece {
			links += t.to - t.from
		}
		n++
		return n%4096 != 0 || ctx.Err() == nil
	})
	return links, context.Cause(ctx)
}

// exactCountIDs is the most ids of its own a process counts the links of
// exactly before it loads (about 2 s); more are estimated from a sample.
const exactCountIDs = 1 << 24

// estimated is what expected counts, for a part too large to walk: the
// lists of 2^20 of this shard's ids, evenly spaced, scaled to its chunks
// still to load (a shard's share of the super nodes' pieces is about the
// super nodes among its own ids). It is what the progress display
// divides by; the results report the rows actually written.
func (p *LoadPhase) estimated(ctx context.Context, shards int) (links, nodes int64, err error) {
	pl := p.plan(shards)
	own := pl.ids()
	const samples = 1 << 20
	stride := float64(own) / samples
	var sum float64
	for i := range int64(samples) {
		if i%(1<<16) == 0 && ctx.Err() != nil {
			return 0, 0, context.Cause(ctx)
		}
		// The j-th id of this shard's chunks.
		j := int64(float64(i) * stride)
		lo, _ := pl.chunk(j / pl.size)
		sum += float64(p.Graph.LinksPerType(lo + j%pl.size))
	}
	// Units a resumed load has done are in its journal: counted there.
	var doneChunks, doneNodes int64
	for u, v := range p.Resume {
		if v != JournalDone || len(u) < 2 || (u[0] != 'c' && u[0] != 'n') {
			continue
		}
		lo, err := strconv.ParseInt(u[1:], 10, 64)
		if err != nil {
			continue
		}
		if u[0] == 'c' {
			doneChunks++
		} else {
			doneNodes += min(lo+pl.size, pl.end) - lo
		}
	}
	links = int64(sum * stride * float64(p.Config.LinkTypeCount) * float64(pl.mine()-doneChunks) / float64(max(pl.mine(), 1)))
	if p.Config.GenerateNodes {
		nodes = own - doneNodes
	}
	return links, nodes, nil
}

// graphRows counts the nodes, links and counts of the whole graph (every
// shard, resumed units included): the rows the store's finishing steps
// work on. Above exactCountIDs ids the links are estimated (allLinks).
func (p *LoadPhase) graphRows(ctx context.Context) (nodes, links, counts int64, err error) {
	cfg := p.Config
	ids := cfg.MaxID1 - cfg.StartID1
	types := int64(cfg.LinkTypeCount)
	if links, err = p.allLinks(ctx); err != nil {
		return 0, 0, 0, err
	}
	if cfg.GenerateNodes {
		nodes = ids
	}
	return nodes, links, ids * types, nil
}

// allLinks is the number of links of the whole graph: exact up to
// exactCountIDs ids (a pass over every id1, about 30 ns each), estimated
// from 2^20 evenly spaced ids above (within 1%). It stops when ctx ends.
// Only a process that finishes the graph needs it.
func (p *LoadPhase) allLinks(ctx context.Context) (int64, error) {
	cfg := p.Config
	ids := cfg.MaxID1 - cfg.StartID1
	types := int64(cfg.LinkTypeCount)
	var links int64
	if ids <= exactCountIDs {
		for id1 := cfg.StartID1; id1 < cfg.MaxID1; id1++ {
			if id1%(1<<16) == 0 && ctx.Err() != nil {
				return 0, context.Cause(ctx)
			}
			links += p.Graph.LinksPerType(id1) * types
		}
		return links, nil
	}
	const samples = 1 << 20
	stride := float64(ids) / samples
	var sum float64
	for i := range int64(samples) {
		if i%(1<<16) == 0 && ctx.Err() != nil {
			return 0, context.Cause(ctx)
		}
		sum += float64(p.Graph.LinksPerType(cfg.StartID1 + int64(float64(i)*stride)))
	}
	return int64(sum * stride * float64(types)), nil
}
