package pebble

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/linkbench/linkbench/internal/graph"
	"github.com/linkbench/linkbench/internal/store"
)

// Name is the store's registered name.
const Name = "pebble"

func init() {
	store.Register(store.Driver{
		Abilities: abilities,
		Name:      Name,
		Embedded:  true,
		Aliases:   []string{"com.facebook.LinkBench.LinkStoreRocksDb"},
		Keys: []store.KeyDoc{
			{Name: "pebble_path", Doc: "database directory (default <data_dir>/pebble)"},
			{Name: "pebble_sync", Default: "true", Doc: "sync every operation's write to disk"},
			{Name: "pebble_cache_mb", Default: "256", Doc: "block cache size in MiB"},
		},
		Open:     func(ctx context.Context, o store.Options) (store.Store, error) { return Open(ctx, o) },
		DataPath: dataPath,
	})
}

// dataPath is the database directory: pebble_path, else <data_dir>/pebble.
func dataPath(p store.Props) string {
	if path := store.String(p, "pebble_path", ""); path != "" {
		return path
	}
	return filepath.Join(store.String(p, "data_dir", "./linkbench-data"), "pebble")
}

const stripes = 1024

var (
	markerKey = []byte{pMark, 'l', 'i', 'n', 'k', 'b', 'e', 'n', 'c', 'h'}
	seqKey    = []byte{pSeq, 'n', 'o', 'd', 'e', 'i', 'd'}
)

// Store is the Pebble store.
type Store struct {
	db     *pebble.DB
	path   string
	sync   *pebble.WriteOptions
	locks  [stripes]sync.Mutex
	seed   maphash.Seed
	nextID atomic.Int64
	metaMu sync.Mutex
}

// Open opens (creating if needed) the database directory.
func Open(ctx context.Context, o store.Options) (*Store, error) {
	return openFS(ctx, o, vfs.Default, 5*time.Second)
}

// openFS opens the database on fs, logging every while that it still
// waits for the disk.
func openFS(ctx context.Context, o store.Options, fs vfs.FS, every time.Duration) (*Store, error) {
	p := o.Props
	path := dataPath(p)
	syncOn, err := store.Bool(p, "pebble_sync", true)
	if err != nil {
		return nil, err
	}
	cacheMB, err := store.Int(p, "pebble_cache_mb", 256)
	if err != nil {
		return nil, err
	}
	if ents, err := os.ReadDir(path); err == nil && len(ents) > 0 {
		ours := false
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), "MANIFEST-") {
				ours = true
			}
		}
		if !ours {
			return nil, fmt.Errorf("%s exists and is not a Pebble database; point pebble_path (or data_dir) at an empty or new directory", path)
		}
	}
	if err := os.MkdirAll(path, 0o755); err != nil {
		return nil, fmt.Errorf("cannot create %s: %v; set data_dir (or pebble_path) to a writable directory", path, err)
	}
	db, err := openWaiting(ctx, path, &pebble.Options{Cache: pebble.NewCache(cacheMB << 20), MemTableSize: 64 << 20, Logger: quietLogger{o.Logf}, FS: fs}, o.Logf, every)
	if err != nil && ctx.Err() != nil {
		return nil, err
	}
	if err != nil {
		if errors.Is(err, syscall.EAGAIN) || strings.Contains(err.Error(), "lock") {
			// Pebble lets one process open a database: its LOCK file is
			// the one-writer rule of this store, for runs too.
			return nil, &store.LockedError{Where: path, Holder: store.FileLockHolder(filepath.Join(path, "LOCK")),
				Why: "Pebble lets one process open a database at a time"}
		}
		return nil, fmt.Errorf("open Pebble database %s: %w", path, err)
	}
	s := &Store{db: db, path: path, sync: pebble.Sync, seed: maphash.MakeSeed()}
	if !syncOn {
		s.sync = pebble.NoSync
	}
	if err := s.loadSeq(); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// openWaiting runs pebble.Open, which reads and writes (and syncs) the
// manifest and the WAL and may wait on a stalled disk for minutes: every
// while it logs that it still waits, and a cancelled ctx (Ctrl-C) ends the
// wait, leaving the open to finish (and the database to close) on its
// own.
func openWaiting(ctx context.Context, path string, opts *pebble.Options, logf func(string, ...any), every time.Duration) (*pebble.DB, error) {
	type opened struct {
		db  *pebble.DB
		err error
	}
	ch := make(chan opened, 1)
	go func() {
		db, err := pebble.Open(path, opts)
		opts.Cache.Unref() // the database holds its own reference
		ch <- opened{db, err}
	}()
	start := time.Now()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case r := <-ch:
			return r.db, r.err
		case <-t.C:
			if logf != nil {
				logf("opening the Pebble database %s: still waiting for the disk after %.0f s (Ctrl-C stops)", path, time.Since(start).Seconds())
			}
		case <-ctx.Done():
			go func() {
				if r := <-ch; r.db != nil {
					r.db.Close()
				}
			}()
			return nil, fmt.Errorf("open Pebble database %s: stopped after %.1f s waiting for the disk (stalled or very slow): %w", path, time.Since(start).Seconds(), context.Cause(ctx))
		}
	}
}

// quietLogger drops Pebble's informational messages (WAL replay, ...) and
// passes its errors to the driver's log.
type quietLogger struct{ logf func(string, ...any) }

func (quietLogger) Infof(string, ...any) {}

func (l quietLogger) Errorf(format string, args ...any) {
	if l.logf != nil {
		l.logf("pebble: "+format, args...)
	}
}

func (l quietLogger) Fatalf(format string, args ...any) {
	// Pebble calls Fatalf on unrecoverable corruption and expects the
	// process to stop; report it through the log and panic like the default.
	l.Errorf(format, args...)
	panic(fmt.Sprintf("pebble: "+format, args...))
}

// loadSeq sets the node id allocator past the persisted value and the
// largest node id.
func (s *Store) loadSeq() error {
	next := int64(1)
	if v, closer, err := s.db.Get(seqKey); err == nil {
		next = getInt(v)
		closer.Close()
	} else if !errors.Is(err, pebble.ErrNotFound) {
		return err
	}
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte{pNode}, UpperBound: []byte{pNode + 1}})
	if err != nil {
		return err
	}
	if it.Last() {
		next = max(next, getInt(it.Key()[1:])+1)
	}
	if err := it.Close(); err != nil {
		return err
	}
	s.nextID.Store(next)
	return nil
}

func (s *Store) lock(id1, lt int64) *sync.Mutex {
	var h maphash.Hash
	h.SetSeed(s.seed)
	var b [16]byte
	putInt(b[:], id1)
	putInt(b[8:], lt)
	h.Write(b[:])
	return &s.locks[h.Sum64()%stripes]
}

// get returns a copy of the value of k, or nil and false.
func (s *Store) get(k []byte) ([]byte, bool, error) {
	v, closer, err := s.db.Get(k)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	out := append([]byte(nil), v...)
	closer.Close()
	return out, true, nil
}

func nowMs() int64 { return time.Now().UnixMilli() }

// Close implements store.Store.
func (s *Store) Close() error { return s.db.Close() }

// linkWrite is one link write under the (id1, link_type) lock. It returns
// the graph.WriteResult (0/1/2 = unchanged/inserted/updated) of an upsert
// and 0/1 = absent/existed for a hide or an expunge.
func (s *Store) linkWrite(l *graph.Link, mode graph.WriteMode) (int, error) {
	mu := s.lock(l.ID1, l.LinkType)
	mu.Lock()
	defer mu.Unlock()
	lk := linkKey(l.ID1, l.LinkType, l.ID2)
	old, found, err := s.get(lk)
	if err != nil {
		return 0, err
	}
	var ovis uint8
	var otm int64
	var over int32
	var odata []byte
	if found {
		ovis, otm, over, odata = decLink(old)
	}
	b := s.db.NewBatch()
	defer b.Close()
	res, delta := 1, int64(0)
	if mode == graph.WriteUpsert {
		wr, d := graph.WriteOutcome(found, graph.Link{Visibility: ovis, Time: otm, Version: over, Data: odata}, l)
		res, delta = int(wr), d
		if found && ovis == graph.VisibilityDefault {
			b.Delete(indexKey(l.ID1, l.LinkType, otm, l.ID2), nil)
		}
		b.Set(lk, encLink(l.Visibility, l.Time, l.Version, l.Data), nil)
		if l.Visibility == graph.VisibilityDefault {
			b.Set(indexKey(l.ID1, l.LinkType, l.Time, l.ID2), encIndex(l.Version, l.Data), nil)
		}
		if !graph.WritesCount(found, delta) {
			return res, b.Commit(s.sync)
		}
	} else {
		if !found {
			return 0, nil
		}
		if mode == graph.WriteExpunge {
			b.Delete(lk, nil)
		} else if ovis == graph.VisibilityDefault {
			b.Set(lk, encLink(graph.VisibilityHidden, otm, over, odata), nil)
		}
		if ovis != graph.VisibilityDefault {
			return 1, b.Commit(s.sync)
		}
		b.Delete(indexKey(l.ID1, l.LinkType, otm, l.ID2), nil)
		delta = -1
	}
	ck := countKey(l.ID1, l.LinkType)
	cv, cfound, err := s.get(ck)
	if err != nil {
		return 0, err
	}
	var count, ver int64
	if cfound {
		count, _, ver = decCount(cv)
	}
	b.Set(ck, encCount(max(count+delta, 0), nowMs(), ver+1), nil)
	return res, b.Commit(s.sync)
}

// AddLink implements store.Store.
func (s *Store) AddLink(_ context.Context, l *graph.Link) (graph.WriteResult, error) {
	return s.upsert(l)
}

// UpdateLink implements store.Store.
func (s *Store) UpdateLink(_ context.Context, l *graph.Link) (graph.WriteResult, error) {
	return s.upsert(l)
}

func (s *Store) upsert(l *graph.Link) (graph.WriteResult, error) {
	res, err := s.linkWrite(l, graph.WriteUpsert)
	if err != nil {
		return 0, fmt.Errorf("write link %d/%d/%d: %w", l.ID1, l.LinkType, l.ID2, err)
	}
	return graph.WriteResult(res), nil
}

// DeleteLink implements store.Store.
func (s *Store) DeleteLink(_ context.Context, id1, lt, id2 int64, expunge bool) (bool, error) {
	res, err := s.linkWrite(&graph.Link{ID1: id1, LinkType: lt, ID2: id2}, graph.DeleteMode(expunge))
	if err != nil {
		return false, fmt.Errorf("delete link %d/%d/%d: %w", id1, lt, id2, err)
	}
	return res == 1, nil
}

// MultigetLinks implements store.Store.
func (s *Store) MultigetLinks(_ context.Context, id1, lt int64, id2s []int64, dst []graph.Link) ([]graph.Link, error) {
	for _, id2 := range id2s {
		v, ok, err := s.get(linkKey(id1, lt, id2))
		if err != nil {
			return dst, fmt.Errorf("multiget %d/%d: %w", id1, lt, err)
		}
		if ok {
			vis, tm, ver, data := decLink(v)
			dst = append(dst, graph.Link{ID1: id1, LinkType: lt, ID2: id2, Visibility: vis, Time: tm, Version: ver, Data: data})
		}
	}
	return dst, nil
}

// GetLinkList implements store.Store: one forward scan of the list entries.
func (s *Store) GetLinkList(_ context.Context, q graph.ListQuery, dst []graph.Link) ([]graph.Link, error) {
	limit := q.Limit
	if limit <= 0 {
		limit = graph.DefaultListLimit
	}
	prefix := listPrefix(q.ID1, q.LinkType)
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: prefixEnd(prefix)})
	if err != nil {
		return dst, err
	}
	defer it.Close()
	skip := max(q.Offset, 0)
	start := indexKey(q.ID1, q.LinkType, q.MaxTime, 1<<63-1)
	for ok := it.SeekGE(start); ok && limit > 0; ok = it.Next() {
		tm, id2 := decodeIndex(it.Key())
		if tm < q.MinTime {
			break
		}
		if skip > 0 {
			skip--
			continue
		}
		v := it.Value()
		l := graph.Link{ID1: q.ID1, LinkType: q.LinkType, ID2: id2, Visibility: graph.VisibilityDefault, Time: tm,
			Version: int32(uint32(v[0])<<24 | uint32(v[1])<<16 | uint32(v[2])<<8 | uint32(v[3])), Data: append([]byte(nil), v[4:]...)}
		dst = append(dst, l)
		limit--
	}
	return dst, it.Error()
}

// CountLinks implements store.Store.
func (s *Store) CountLinks(_ context.Context, id1, lt int64) (int64, error) {
	v, ok, err := s.get(countKey(id1, lt))
	if err != nil || !ok {
		return 0, err
	}
	c, _, _ := decCount(v)
	return c, nil
}

// AddNode implements store.Store.
func (s *Store) AddNode(_ context.Context, n *graph.Node) (int64, error) {
	id := s.nextID.Add(1) - 1
	b := s.db.NewBatch()
	defer b.Close()
	b.Set(nodeKey(id), encNode(n.Type, n.Version, n.Time, n.Data), nil)
	seq := make([]byte, 8)
	putInt(seq, id+1)
	b.Set(seqKey, seq, nil)
	if err := b.Commit(s.sync); err != nil {
		return 0, fmt.Errorf("add node: %w", err)
	}
	return id, nil
}

// GetNode implements store.Store.
func (s *Store) GetNode(_ context.Context, nodeType int32, id int64) (graph.Node, bool, error) {
	v, ok, err := s.get(nodeKey(id))
	if err != nil || !ok {
		return graph.Node{}, false, err
	}
	typ, ver, tm, data := decNode(v)
	if typ != nodeType {
		return graph.Node{}, false, nil
	}
	return graph.Node{ID: id, Type: typ, Version: ver, Time: tm, Data: data}, true, nil
}

// nodeLock serialises read-modify-write of one node.
func (s *Store) nodeLock(id int64) *sync.Mutex { return s.lock(id, -1) }

// UpdateNode implements store.Store.
func (s *Store) UpdateNode(_ context.Context, n *graph.Node) (bool, error) {
	mu := s.nodeLock(n.ID)
	mu.Lock()
	defer mu.Unlock()
	v, ok, err := s.get(nodeKey(n.ID))
	if err != nil || !ok {
		return false, err
	}
	if typ, _, _, _ := decNode(v); typ != n.Type {
		return false, nil
	}
	return true, s.db.Set(nodeKey(n.ID), encNode(n.Type, n.Version, n.Time, n.Data), s.sync)
}

// DeleteNode implements store.Store.
func (s *Store) DeleteNode(_ context.Context, nodeType int32, id int64) (bool, error) {
	mu := s.nodeLock(id)
	mu.Lock()
	defer mu.Unlock()
	v, ok, err := s.get(nodeKey(id))
	if err != nil || !ok {
		return false, err
	}
	if typ, _, _, _ := decNode(v); typ != nodeType {
		return false, nil
	}
	return true, s.db.Delete(nodeKey(id), s.sync)
}

// DataPath implements store.DataPather: the database directory.
func (s *Store) DataPath() string { return s.path }
