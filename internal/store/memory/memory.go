package memory

import (
	"context"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/linkbench/linkbench/internal/graph"
	"github.com/linkbench/linkbench/internal/store"
)

// Name is the store's registered name.
const Name = "memory"

func init() {
	store.Register(store.Driver{
		Abilities:  abilities,
		Name:       Name,
		Aliases:    []string{"com.facebook.LinkBench.MemoryLinkStore", "com.facebook.LinkBench.LinkStoreMemory"},
		Open:       func(context.Context, store.Options) (store.Store, error) { return New(), nil },
		Embedded:   true,
		PerProcess: true,
	})
}

const (
	linkShards = 256
	nodeShards = 64
)

// rec is one link; its payload lives in the shard's arena.
type rec struct {
	id2     int64
	time    int64
	dataOff uint32 // offset in the shard arena
	version int32
	dataLen uint8
	vis     uint8
	arena   uint16 // which arena block
}

// adj is the adjacency list and count row of one (id1, link_type).
//
// Records are only appended, so their indexes never change: inserting into
// a large list moves 4-byte indexes, not records, and fixes up nothing.
// An expunged record stays as a dead slot until they are half the list.
type adj struct {
	recs     []rec    // append-only; dead slots have vis == deadVis
	byID     []uint32 // indexes of the live records, by id2
	order    []uint32 // indexes of the visible records, by (time desc, id2 desc)
	dead     int      // dead slots in recs
	unsorted bool     // byID and order need building (after a bulk load)
	hasCount bool
	count    int64
	cTime    int64
	cVersion int64
}

type key struct{ id1, lt int64 }

// linkShard guards the lists whose key hashes to it. Payload bytes are
// appended to fixed-size arena blocks that never move.
type linkShard struct {
	mu      sync.RWMutex
	lists   map[key]*adj
	blocks  [][]byte
	used    int // bytes appended to blocks
	garbage int // bytes no record points to any more
}

// maybeCompact copies the live payloads into fresh blocks when more than
// half of the arena is garbage, so updates do not grow memory without
// bound. Old blocks stay valid for readers that still hold slices of them
// and are freed by the garbage collector afterwards.
func (sh *linkShard) maybeCompact() {
	if sh.garbage < 16<<20 || sh.garbage*2 < sh.used {
		return
	}
	old := sh.blocks
	sh.blocks, sh.used, sh.garbage = nil, 0, 0
	for _, a := range sh.lists {
		for i := range a.recs {
			r := &a.recs[i]
			if r.dataLen > 0 && r.vis != deadVis {
				d := old[r.arena][r.dataOff : r.dataOff+uint32(r.dataLen)]
				r.arena, r.dataOff = sh.putData(d)
			}
		}
	}
}

const blockSize = 64 << 10

func (s *linkShard) putData(d []byte) (uint16, uint32) {
	if len(d) == 0 {
		return 0, 0
	}
	if len(s.blocks) == 0 || len(s.blocks[len(s.blocks)-1])+len(d) > blockSize {
		s.blocks = append(s.blocks, make([]byte, 0, blockSize))
	}
	b := len(s.blocks) - 1
	off := len(s.blocks[b])
	s.used += len(d)
	s.blocks[b] = append(s.blocks[b], d...)
	return uint16(b), uint32(off)
}

func (s *linkShard) data(r *rec) []byte {
	if r.dataLen == 0 {
		return nil
	}
	end := r.dataOff + uint32(r.dataLen)
	return s.blocks[r.arena][r.dataOff:end:end]
}

type nodeShard struct {
	mu    sync.RWMutex
	nodes map[int64]graph.Node
}

// Store is the in-memory store.
type Store struct {
	links  [linkShards]linkShard
	nodes  [nodeShards]nodeShard
	nextID atomic.Int64
	metaMu sync.Mutex
	meta   map[string]string
}

// New returns an empty store.
func New() *Store {
	s := &Store{meta: map[string]string{}}
	s.reset()
	return s
}

func (s *Store) reset() {
	for i := range s.links {
		sh := &s.links[i]
		sh.mu.Lock()
		sh.lists, sh.blocks = map[key]*adj{}, nil
		sh.mu.Unlock()
	}
	for i := range s.nodes {
		sh := &s.nodes[i]
		sh.mu.Lock()
		sh.nodes = map[int64]graph.Node{}
		sh.mu.Unlock()
	}
	s.nextID.Store(1)
}

func (s *Store) shard(id1, lt int64) *linkShard {
	h := uint64(id1)*0x9e3779b97f4a7c15 ^ uint64(lt)*0xc2b2ae3d27d4eb4f
	return &s.links[(h>>32)%linkShards]
}

func (s *Store) nodeShard(id int64) *nodeShard {
	return &s.nodes[(uint64(id)*0x9e3779b97f4a7c15>>40)%nodeShards]
}

// deadVis marks an expunged record's slot.
const deadVis = 0xff

// find returns the position of id2 in a.byID (where it would go when
// absent) and whether it is there.
func (a *adj) find(id2 int64) (int, bool) {
	ids, recs := a.byID, a.recs
	lo, hi := 0, len(ids)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if recs[ids[m]].id2 < id2 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, lo < len(ids) && recs[ids[lo]].id2 == id2
}

// before reports whether x sorts before y in list order.
func before(x, y *rec) bool {
	return x.time > y.time || (x.time == y.time && x.id2 > y.id2)
}

// sortOrder finishes a bulk-loaded list: the id2 index (the last load of
// a duplicate id2 wins, the others become dead slots) and the visible
// order.
func (a *adj) sortOrder() {
	if !a.unsorted {
		return
	}
	if cap(a.byID) < len(a.recs) {
		a.byID = make([]uint32, 0, len(a.recs))
	}
	a.byID = a.byID[:0]
	for i := range a.recs {
		if a.recs[i].vis != deadVis {
			a.byID = append(a.byID, uint32(i))
		}
	}
	sort.SliceStable(a.byID, func(i, j int) bool { return a.recs[a.byID[i]].id2 < a.recs[a.byID[j]].id2 })
	w := 0
	for _, idx := range a.byID {
		if w > 0 && a.recs[a.byID[w-1]].id2 == a.recs[idx].id2 {
			a.kill(a.byID[w-1])
			a.byID[w-1] = idx
			continue
		}
		a.byID[w] = idx
		w++
	}
	a.byID = a.byID[:w]
	if cap(a.order) < len(a.byID) {
		a.order = make([]uint32, 0, len(a.byID))
	}
	a.order = a.order[:0]
	for _, idx := range a.byID {
		if a.recs[idx].vis == graph.VisibilityDefault {
			a.order = append(a.order, idx)
		}
	}
	sort.Slice(a.order, func(i, j int) bool { return before(&a.recs[a.order[i]], &a.recs[a.order[j]]) })
	a.layOut()
	a.unsorted = false
}

// layOut copies the records into list order, the visible ones by time
// and then the rest, dropping dead slots: a page of a long list is then
// read from consecutive records instead of one cache miss per link (the
// bulk load appends in id2 order, the list is read in time order).
func (a *adj) layOut() {
	recs := make([]rec, 0, len(a.byID))
	remap := make([]uint32, len(a.recs))
	for j, idx := range a.order {
		remap[idx] = uint32(len(recs))
		recs = append(recs, a.recs[idx])
		a.order[j] = uint32(j)
	}
	for _, idx := range a.byID {
		if a.recs[idx].vis != graph.VisibilityDefault {
			remap[idx] = uint32(len(recs))
			recs = append(recs, a.recs[idx])
		}
	}
	for j, idx := range a.byID {
		a.byID[j] = remap[idx]
	}
	a.recs, a.dead = recs, 0
}

// kill makes record idx a dead slot.
func (a *adj) kill(idx uint32) {
	a.recs[idx] = rec{vis: deadVis}
	a.dead++
}

// compact drops the dead slots once they are half the records, remapping
// the indexes (amortised over the expunges that made them).
func (a *adj) compact() {
	if a.dead < 64 || a.dead*2 < len(a.recs) {
		return
	}
	remap := make([]uint32, len(a.recs))
	live := make([]rec, 0, len(a.recs)-a.dead)
	for i := range a.recs {
		if a.recs[i].vis != deadVis {
			remap[i] = uint32(len(live))
			live = append(live, a.recs[i])
		}
	}
	for j, idx := range a.byID {
		a.byID[j] = remap[idx]
	}
	for j, idx := range a.order {
		a.order[j] = remap[idx]
	}
	a.recs, a.dead = live, 0
}

// orderPos is the position of record idx in a.order, or where it would go.
func (a *adj) orderPos(idx uint32) int {
	r := &a.recs[idx]
	return sort.Search(len(a.order), func(i int) bool {
		o := &a.recs[a.order[i]]
		return !before(o, r)
	})
}

func (a *adj) addVisible(idx uint32) {
	p := a.orderPos(idx)
	a.order = append(a.order, 0)
	copy(a.order[p+1:], a.order[p:])
	a.order[p] = idx
}

func (a *adj) removeVisible(idx uint32) {
	p := a.orderPos(idx)
	for p < len(a.order) && a.order[p] != idx {
		p++ // equal keys cannot happen (id2 is unique), but stay safe
	}
	if p < len(a.order) {
		a.order = append(a.order[:p], a.order[p+1:]...)
	}
}

// insertRec appends r and puts its index at position pos of byID; it
// returns the index.
func (a *adj) insertRec(pos int, r rec) uint32 {
	idx := uint32(len(a.recs))
	a.recs = append(a.recs, r)
	a.byID = append(a.byID, 0)
	copy(a.byID[pos+1:], a.byID[pos:])
	a.byID[pos] = idx
	return idx
}

func nowMs() int64 { return time.Now().UnixMilli() }

// AddLink implements store.Store.
func (s *Store) AddLink(_ context.Context, l *graph.Link) (graph.WriteResult, error) {
	return s.upsert(l), nil
}

// UpdateLink implements store.Store; it has the same end state as AddLink.
func (s *Store) UpdateLink(_ context.Context, l *graph.Link) (graph.WriteResult, error) {
	return s.upsert(l), nil
}

func (s *Store) upsert(l *graph.Link) graph.WriteResult {
	sh := s.shard(l.ID1, l.LinkType)
	data := l.Data
	if len(data) > graph.MaxLinkData {
		data = data[:graph.MaxLinkData]
	}
	sh.mu.Lock()
	defer sh.mu.Unlock()
	k := key{l.ID1, l.LinkType}
	a := sh.lists[k]
	if a == nil {
		a = &adj{}
		sh.lists[k] = a
	}
	a.sortOrder()
	pos, found := a.find(l.ID2)
	stored := *l
	stored.Data = data
	var old graph.Link
	if found {
		r := &a.recs[a.byID[pos]]
		old = graph.Link{Visibility: r.vis, Time: r.time, Version: r.version, Data: sh.data(r)}
	}
	res, delta := graph.WriteOutcome(found, old, &stored)
	if found {
		i := a.byID[pos]
		r := &a.recs[i]
		wasVisible := r.vis == graph.VisibilityDefault
		if wasVisible {
			a.removeVisible(i)
		}
		r.vis, r.time, r.version = l.Visibility, l.Time, l.Version
		if string(sh.data(r)) != string(data) {
			// Payload bytes are immutable once written (readers may hold
			// them), so a change goes to a new slot and the old one is garbage.
			sh.garbage += int(r.dataLen)
			r.arena, r.dataOff = sh.putData(data)
			r.dataLen = uint8(len(data))
			sh.maybeCompact()
		}
		if r.vis == graph.VisibilityDefault {
			a.addVisible(i)
		}
	} else {
		r := rec{id2: l.ID2, time: l.Time, version: l.Version, vis: l.Visibility, dataLen: uint8(len(data))}
		r.arena, r.dataOff = sh.putData(data)
		i := a.insertRec(pos, r)
		if r.vis == graph.VisibilityDefault {
			a.addVisible(i)
		}
	}
	if graph.WritesCount(found, delta) {
		a.bumpCount(delta)
	}
	return res
}

// bumpCount applies a count change and records the write on the count row.
func (a *adj) bumpCount(delta int64) {
	a.hasCount = true
	a.count = max(a.count+delta, 0)
	a.cVersion++
	a.cTime = nowMs()
}

// DeleteLink implements store.Store.
func (s *Store) DeleteLink(_ context.Context, id1, lt, id2 int64, expunge bool) (bool, error) {
	sh := s.shard(id1, lt)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	a := sh.lists[key{id1, lt}]
	if a == nil {
		return false, nil
	}
	a.sortOrder()
	pos, found := a.find(id2)
	if !found {
		return false, nil
	}
	i := a.byID[pos]
	r := &a.recs[i]
	wasVisible := r.vis == graph.VisibilityDefault
	if wasVisible {
		a.removeVisible(i)
	}
	if expunge {
		sh.garbage += int(r.dataLen)
		a.byID = append(a.byID[:pos], a.byID[pos+1:]...)
		a.kill(i)
		a.compact()
	} else {
		r.vis = graph.VisibilityHidden
	}
	if wasVisible {
		a.bumpCount(-1)
	}
	return true, nil
}

func (sh *linkShard) link(id1, lt int64, r *rec) graph.Link {
	return graph.Link{ID1: id1, LinkType: lt, ID2: r.id2, Visibility: r.vis, Version: r.version, Time: r.time}
}

// MultigetLinks implements store.Store.
func (s *Store) MultigetLinks(_ context.Context, id1, lt int64, id2s []int64, dst []graph.Link) ([]graph.Link, error) {
	sh := s.shard(id1, lt)
	a := sh.readLocked(key{id1, lt})
	defer sh.mu.RUnlock()
	if a == nil {
		return dst, nil
	}
	for _, id2 := range id2s {
		if pos, ok := a.find(id2); ok {
			r := &a.recs[a.byID[pos]]
			l := sh.link(id1, lt, r)
			l.Data = sh.data(r)
			dst = append(dst, l)
		}
	}
	return dst, nil
}

// GetLinkList implements store.Store.
func (s *Store) GetLinkList(_ context.Context, q graph.ListQuery, dst []graph.Link) ([]graph.Link, error) {
	sh := s.shard(q.ID1, q.LinkType)
	a := sh.readLocked(key{q.ID1, q.LinkType})
	defer sh.mu.RUnlock()
	if a == nil {
		return dst, nil
	}
	limit := q.Limit
	if limit <= 0 {
		limit = graph.DefaultListLimit
	}
	// First visible link with time <= MaxTime.
	p := sort.Search(len(a.order), func(i int) bool { return a.recs[a.order[i]].time <= q.MaxTime })
	p += max(q.Offset, 0)
	for n := 0; p < len(a.order) && n < limit; p, n = p+1, n+1 {
		r := &a.recs[a.order[p]]
		if r.time < q.MinTime {
			break
		}
		l := sh.link(q.ID1, q.LinkType, r)
		l.Data = sh.data(r)
		dst = append(dst, l)
	}
	return dst, nil
}

// readLocked returns the list of k (nil when none) with the shard
// read-locked; a list left unsorted by a bulk load is finished first.
func (sh *linkShard) readLocked(k key) *adj {
	sh.mu.RLock()
	a := sh.lists[k]
	if a == nil || !a.unsorted {
		return a
	}
	sh.mu.RUnlock()
	sh.mu.Lock()
	a.sortOrder()
	sh.mu.Unlock()
	sh.mu.RLock()
	return sh.lists[k]
}

// CountLinks implements store.Store.
func (s *Store) CountLinks(_ context.Context, id1, lt int64) (int64, error) {
	sh := s.shard(id1, lt)
	sh.mu.RLock()
	defer sh.mu.RUnlock()
	if a := sh.lists[key{id1, lt}]; a != nil && a.hasCount {
		return a.count, nil
	}
	return 0, nil
}

// Close implements store.Store.
func (s *Store) Close() error { return nil }
