package pebble

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/cockroachdb/pebble/v2"
	"github.com/linkbench/linkbench/internal/graph"
	"github.com/linkbench/linkbench/internal/store"
)

// BeginLoad implements store.BulkLoader.
func (s *Store) BeginLoad(context.Context, store.LoadInfo) error { return nil }

// LoadNodes implements store.BulkLoader with one unsynced batch.
func (s *Store) LoadNodes(_ context.Context, nodes []graph.Node) error {
	b := s.db.NewBatch()
	defer b.Close()
	var maxID int64
	for i := range nodes {
		n := &nodes[i]
		b.Set(nodeKey(n.ID), encNode(n.Type, n.Version, n.Time, n.Data), nil)
		maxID = max(maxID, n.ID)
	}
	if err := b.Commit(pebble.NoSync); err != nil {
		return fmt.Errorf("load nodes: %w", err)
	}
	s.raise(maxID + 1)
	return nil
}

func (s *Store) raise(v int64) {
	for {
		cur := s.nextID.Load()
		if cur >= v || s.nextID.CompareAndSwap(cur, v) {
			return
		}
	}
}

// LoadLinks implements store.BulkLoader: link rows and list entries, no
// counts, in one unsynced batch.
func (s *Store) LoadLinks(_ context.Context, links []graph.Link) error {
	b := s.db.NewBatch()
	defer b.Close()
	for i := range links {
		l := &links[i]
		b.Set(linkKey(l.ID1, l.LinkType, l.ID2), encLink(l.Visibility, l.Time, l.Version, l.Data), nil)
		if l.Visibility == graph.VisibilityDefault {
			b.Set(indexKey(l.ID1, l.LinkType, l.Time, l.ID2), encIndex(l.Version, l.Data), nil)
		}
	}
	if err := b.Commit(pebble.NoSync); err != nil {
		return fmt.Errorf("load links: %w", err)
	}
	return nil
}

// LoadCounts implements store.BulkLoader.
func (s *Store) LoadCounts(_ context.Context, counts []graph.Count) error {
	b := s.db.NewBatch()
	defer b.Close()
	for i := range counts {
		c := &counts[i]
		b.Set(countKey(c.ID1, c.LinkType), encCount(c.Count, c.Time, c.Version), nil)
	}
	if err := b.Commit(pebble.NoSync); err != nil {
		return fmt.Errorf("load counts: %w", err)
	}
	return nil
}

// EndLoad implements store.BulkLoader: the allocator moves to MaxID1 and
// the memtables are flushed, so the load is durable.
func (s *Store) EndLoad(_ context.Context, info store.LoadInfo) error {
	s.raise(info.MaxID1)
	seq := make([]byte, 8)
	putInt(seq, s.nextID.Load())
	if err := s.db.Set(seqKey, seq, pebble.Sync); err != nil {
		return err
	}
	end := info.BeginStage("flush memtables", 0)
	if err := s.db.Flush(); err != nil {
		return err
	}
	end()
	return nil
}

// Init implements store.Initializer: Pebble needs no schema; drop deletes
// everything.
func (s *Store) Init(ctx context.Context, drop bool) error {
	if drop {
		if err := s.Reset(ctx); err != nil {
			return err
		}
	}
	return s.db.Set(markerKey, []byte("1"), pebble.Sync)
}

// Reset implements store.Resetter.
func (s *Store) Reset(context.Context) error {
	if err := s.db.DeleteRange([]byte{0}, []byte{0xff}, pebble.Sync); err != nil {
		return err
	}
	s.nextID.Store(1)
	if err := s.db.Set(markerKey, []byte("1"), pebble.Sync); err != nil {
		return err
	}
	return s.db.Flush()
}

func (s *Store) anyKey(prefix byte) (bool, error) {
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte{prefix}, UpperBound: []byte{prefix + 1}})
	if err != nil {
		return false, err
	}
	ok := it.First()
	return ok, it.Close()
}

// IsEmpty implements store.EmptyChecker.
func (s *Store) IsEmpty(context.Context) (bool, error) {
	for _, p := range []byte{pNode, pLink, pCount} {
		ok, err := s.anyKey(p)
		if err != nil || ok {
			return false, err
		}
	}
	return true, nil
}

// GetMeta implements store.MetaStore.
func (s *Store) GetMeta(context.Context) (map[string]string, error) {
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte{pMeta}, UpperBound: []byte{pMeta + 1}})
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	for ok := it.First(); ok; ok = it.Next() {
		m[string(it.Key()[1:])] = string(it.Value())
	}
	return m, it.Close()
}

// PutMeta implements store.MetaStore.
func (s *Store) PutMeta(_ context.Context, meta map[string]string) error {
	s.metaMu.Lock()
	defer s.metaMu.Unlock()
	b := s.db.NewBatch()
	defer b.Close()
	b.DeleteRange([]byte{pMeta}, []byte{pMeta + 1}, nil)
	for k, v := range meta {
		b.Set(append([]byte{pMeta}, k...), []byte(v), nil)
	}
	return b.Commit(pebble.Sync)
}

// UpdateMeta implements store.Journaler. Bulk loads are plain Sets, which
// a replay repeats harmlessly; the synced commit here also makes every
// earlier unsynced load batch durable (one write-ahead log).
func (s *Store) UpdateMeta(_ context.Context, set map[string]string, deletePrefix string) error {
	s.metaMu.Lock()
	defer s.metaMu.Unlock()
	b := s.db.NewBatch()
	defer b.Close()
	if deletePrefix != "" {
		lo := append([]byte{pMeta}, deletePrefix...)
		hi := append([]byte{pMeta}, deletePrefix...)
		hi[len(hi)-1]++ // prefixes end in '.', never 0xff
		b.DeleteRange(lo, hi, nil)
	}
	for k, v := range set {
		b.Set(append([]byte{pMeta}, k...), []byte(v), nil)
	}
	return b.Commit(pebble.Sync)
}

// ClaimMeta implements store.Journaler. One process opens the database,
// so the metadata's mutex settles the claim.
func (s *Store) ClaimMeta(_ context.Context, key, value string) (string, error) {
	s.metaMu.Lock()
	defer s.metaMu.Unlock()
	k := append([]byte{pMeta}, key...)
	v, closer, err := s.db.Get(k)
	switch {
	case err == nil:
		held := string(v)
		closer.Close()
		return held, nil
	case !errors.Is(err, pebble.ErrNotFound):
		return "", err
	}
	return value, s.db.Set(k, []byte(value), pebble.Sync)
}

// ScanCounts implements store.Scanner.
func (s *Store) ScanCounts(ctx context.Context, fn func(graph.Count) error) error {
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte{pCount}, UpperBound: []byte{pCount + 1}})
	if err != nil {
		return err
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		k := it.Key()
		c, tm, ver := decCount(it.Value())
		if err := fn(graph.Count{ID1: getInt(k[1:]), LinkType: getInt(k[9:]), Count: c, Time: tm, Version: ver}); err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	return it.Error()
}

// ScanVisibleLinkCounts implements store.Scanner: runs of list entries.
func (s *Store) ScanVisibleLinkCounts(ctx context.Context, fn func(id1, lt, n int64) error) error {
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte{pIndex}, UpperBound: []byte{pIndex + 1}})
	if err != nil {
		return err
	}
	defer it.Close()
	var cur [17]byte
	var n int64
	flush := func() error {
		if n == 0 {
			return nil
		}
		return fn(getInt(cur[1:]), getInt(cur[9:]), n)
	}
	for ok := it.First(); ok; ok = it.Next() {
		k := it.Key()
		if string(k[:17]) != string(cur[:]) {
			if err := flush(); err != nil {
				return err
			}
			copy(cur[:], k[:17])
			n = 0
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		n++
	}
	if err := flush(); err != nil {
		return err
	}
	return it.Error()
}

// NodeIDRange implements store.Scanner.
func (s *Store) NodeIDRange(context.Context) (lo, hi int64, ok bool, err error) {
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte{pNode}, UpperBound: []byte{pNode + 1}})
	if err != nil {
		return 0, 0, false, err
	}
	defer it.Close()
	if !it.First() {
		return 0, 0, false, it.Error()
	}
	lo = getInt(it.Key()[1:])
	it.Last()
	hi = getInt(it.Key()[1:])
	return lo, hi, true, it.Error()
}

// SizeOnDisk implements store.Sizer.
func (s *Store) SizeOnDisk(context.Context) (int64, error) {
	return int64(s.db.Metrics().DiskSpaceUsage()), nil
}

// Describe implements store.Describer, with the LSM's vital statistics.
func (s *Store) Describe(context.Context) (store.Description, error) {
	m := s.db.Metrics()
	total := m.Total()
	syncMode := "sync (durable)"
	if s.sync == pebble.NoSync {
		syncMode = "no sync (pebble_sync=false)"
	}
	return store.Description{Version: "Pebble v2", Settings: map[string]string{
		"path":                s.path,
		"sync":                syncMode,
		"compactions":         strconv.FormatInt(m.Compact.Count, 10),
		"write_amplification": strconv.FormatFloat(total.WriteAmp(), 'f', 2, 64),
		"sstables":            strconv.FormatInt(total.TablesCount, 10),
	}}, nil
}
