package memory

import (
	"context"
	"runtime"
	"sort"
	"sync"

	"github.com/linkbench/linkbench/internal/graph"
	"github.com/linkbench/linkbench/internal/store"
)

// AddNode implements store.Store.
func (s *Store) AddNode(_ context.Context, n *graph.Node) (int64, error) {
	id := s.nextID.Add(1) - 1
	c := *n
	c.ID = id
	c.Data = append([]byte(nil), n.Data...)
	sh := s.nodeShard(id)
	sh.mu.Lock()
	sh.nodes[id] = c
	sh.mu.Unlock()
	return id, nil
}

// GetNode implements store.Store.
func (s *Store) GetNode(_ context.Context, nodeType int32, id int64) (graph.Node, bool, error) {
	sh := s.nodeShard(id)
	sh.mu.RLock()
	n, ok := sh.nodes[id]
	sh.mu.RUnlock()
	if !ok || n.Type != nodeType {
		return graph.Node{}, false, nil
	}
	return n, true, nil // Data is never modified in place: sharing it is safe
}

// UpdateNode implements store.Store.
func (s *Store) UpdateNode(_ context.Context, n *graph.Node) (bool, error) {
	sh := s.nodeShard(n.ID)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	old, ok := sh.nodes[n.ID]
	if !ok || old.Type != n.Type {
		return false, nil
	}
	old.Version, old.Time = n.Version, n.Time
	old.Data = append(old.Data[:0:0], n.Data...)
	sh.nodes[n.ID] = old
	return true, nil
}

// DeleteNode implements store.Store.
func (s *Store) DeleteNode(_ context.Context, nodeType int32, id int64) (bool, error) {
	sh := s.nodeShard(id)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	old, ok := sh.nodes[id]
	if !ok || old.Type != nodeType {
		return false, nil
	}
	delete(sh.nodes, id)
	return true, nil
}

// BeginLoad implements store.BulkLoader.
func (s *Store) BeginLoad(context.Context, store.LoadInfo) error { return nil }

// LoadNodes implements store.BulkLoader: explicit ids.
func (s *Store) LoadNodes(_ context.Context, nodes []graph.Node) error {
	var maxID int64
	for _, n := range nodes {
		c := n
		c.Data = append([]byte(nil), n.Data...)
		sh := s.nodeShard(n.ID)
		sh.mu.Lock()
		sh.nodes[n.ID] = c
		sh.mu.Unlock()
		maxID = max(maxID, n.ID)
	}
	s.raiseNextID(maxID + 1)
	return nil
}

func (s *Store) raiseNextID(v int64) {
	for {
		cur := s.nextID.Load()
		if cur >= v || s.nextID.CompareAndSwap(cur, v) {
			return
		}
	}
}

// LoadLinks implements store.BulkLoader: plain inserts (an existing
// (id1, type, id2) is overwritten), no count maintenance. The visible
// order is rebuilt lazily on first use.
func (s *Store) LoadLinks(_ context.Context, links []graph.Link) error {
	for i := 0; i < len(links); {
		l := &links[i]
		sh := s.shard(l.ID1, l.LinkType)
		k := key{l.ID1, l.LinkType}
		sh.mu.Lock()
		a := sh.lists[k]
		if a == nil {
			a = &adj{}
			sh.lists[k] = a
		}
		// Consecutive links of one list go in under one lock.
		for ; i < len(links) && links[i].ID1 == k.id1 && links[i].LinkType == k.lt; i++ {
			l := &links[i]
			data := l.Data
			if len(data) > graph.MaxLinkData {
				data = data[:graph.MaxLinkData]
			}
			r := rec{id2: l.ID2, time: l.Time, version: l.Version, vis: l.Visibility, dataLen: uint8(len(data))}
			r.arena, r.dataOff = sh.putData(data)
			a.recs = append(a.recs, r)
			a.unsorted = true
		}
		sh.mu.Unlock()
	}
	return nil
}

// LoadCounts implements store.BulkLoader.
func (s *Store) LoadCounts(_ context.Context, counts []graph.Count) error {
	for _, c := range counts {
		sh := s.shard(c.ID1, c.LinkType)
		k := key{c.ID1, c.LinkType}
		sh.mu.Lock()
		a := sh.lists[k]
		if a == nil {
			a = &adj{}
			sh.lists[k] = a
		}
		a.hasCount, a.count, a.cTime, a.cVersion = true, c.Count, c.Time, c.Version
		sh.mu.Unlock()
	}
	return nil
}

// EndLoad implements store.BulkLoader: the id allocator starts at MaxID1
// at the least.
// It also sorts every loaded list, one goroutine per CPU.
func (s *Store) EndLoad(_ context.Context, info store.LoadInfo) error {
	s.raiseNextID(info.MaxID1)
	end := info.BeginStage("sort lists", info.Links)
	defer end()
	var wg sync.WaitGroup
	next := make(chan int, linkShards)
	for i := range s.links {
		next <- i
	}
	close(next)
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				sh := &s.links[i]
				sh.mu.Lock()
				for _, a := range sh.lists {
					a.sortOrder()
				}
				sh.mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return nil
}

// Reset implements store.Resetter.
func (s *Store) Reset(context.Context) error {
	s.reset()
	s.metaMu.Lock()
	s.meta = map[string]string{}
	s.metaMu.Unlock()
	return nil
}

// IsEmpty implements store.EmptyChecker.
func (s *Store) IsEmpty(context.Context) (bool, error) {
	for i := range s.links {
		sh := &s.links[i]
		sh.mu.RLock()
		n := len(sh.lists)
		sh.mu.RUnlock()
		if n > 0 {
			return false, nil
		}
	}
	for i := range s.nodes {
		sh := &s.nodes[i]
		sh.mu.RLock()
		n := len(sh.nodes)
		sh.mu.RUnlock()
		if n > 0 {
			return false, nil
		}
	}
	return true, nil
}

// GetMeta implements store.MetaStore.
func (s *Store) GetMeta(context.Context) (map[string]string, error) {
	s.metaMu.Lock()
	defer s.metaMu.Unlock()
	out := make(map[string]string, len(s.meta))
	for k, v := range s.meta {
		out[k] = v
	}
	return out, nil
}

// PutMeta implements store.MetaStore.
func (s *Store) PutMeta(_ context.Context, meta map[string]string) error {
	s.metaMu.Lock()
	defer s.metaMu.Unlock()
	s.meta = make(map[string]string, len(meta))
	for k, v := range meta {
		s.meta[k] = v
	}
	return nil
}

// sortedKeys lists every (id1, link_type) with a list or count, sorted.
func (s *Store) sortedKeys() []key {
	var keys []key
	for i := range s.links {
		sh := &s.links[i]
		sh.mu.RLock()
		for k := range sh.lists {
			keys = append(keys, k)
		}
		sh.mu.RUnlock()
	}
	sort.Slice(keys, func(i, j int) bool {
		return keys[i].id1 < keys[j].id1 || (keys[i].id1 == keys[j].id1 && keys[i].lt < keys[j].lt)
	})
	return keys
}

// ScanCounts implements store.Scanner.
func (s *Store) ScanCounts(ctx context.Context, fn func(graph.Count) error) error {
	for _, k := range s.sortedKeys() {
		sh := s.shard(k.id1, k.lt)
		sh.mu.RLock()
		a := sh.lists[k]
		var c graph.Count
		ok := a != nil && a.hasCount
		if ok {
			c = graph.Count{ID1: k.id1, LinkType: k.lt, Count: a.count, Time: a.cTime, Version: a.cVersion}
		}
		sh.mu.RUnlock()
		if ok {
			if err := fn(c); err != nil {
				return err
			}
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	return nil
}

// ScanVisibleLinkCounts implements store.Scanner.
func (s *Store) ScanVisibleLinkCounts(ctx context.Context, fn func(id1, lt, visible int64) error) error {
	for _, k := range s.sortedKeys() {
		sh := s.shard(k.id1, k.lt)
		a := sh.readLocked(k)
		var n int64
		if a != nil {
			for i := range a.recs {
				if a.recs[i].vis == graph.VisibilityDefault {
					n++
				}
			}
		}
		sh.mu.RUnlock()
		if n > 0 {
			if err := fn(k.id1, k.lt, n); err != nil {
				return err
			}
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	return nil
}

// NodeIDRange implements store.Scanner.
func (s *Store) NodeIDRange(context.Context) (lo, hi int64, ok bool, err error) {
	for i := range s.nodes {
		sh := &s.nodes[i]
		sh.mu.RLock()
		for id := range sh.nodes {
			if !ok || id < lo {
				lo = id
			}
			if !ok || id > hi {
				hi = id
			}
			ok = true
		}
		sh.mu.RUnlock()
	}
	return lo, hi, ok, nil
}

// SizeOnDisk implements store.Sizer: nothing is on disk.
func (s *Store) SizeOnDisk(context.Context) (int64, error) { return 0, nil }

// Describe implements store.Describer.
func (s *Store) Describe(context.Context) (store.Description, error) {
	return store.Description{Version: "memory", Settings: map[string]string{"durability": "none (in memory)"}}, nil
}
