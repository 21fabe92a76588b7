package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/linkbench/linkbench/internal/graph"
	"github.com/linkbench/linkbench/internal/store"
	"github.com/linkbench/linkbench/internal/store/sqlstore"
)

func nowMs() int64 { return time.Now().UnixMilli() }

func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// Link write modes of the write function (link_writes = routine):
// graph.WriteUpsert inserting first (ADD_LINK), graph.WriteHide,
// graph.WriteExpunge, and upsertReadFirst (UPDATE_LINK, reading first).
const upsertReadFirst = 3

// routineWrite runs one link write in one call of the write function on
// the write connection. It returns 0 unchanged / 1 inserted / 2 updated
// for upserts, 0 absent / 1 existed for deletes.
func (s *Store) routineWrite(ctx context.Context, l *graph.Link, mode int) (int, error) {
	res := -1
	_, err := exec(ctx, s.wconns, &s.q.write, []arg{num(l.ID1), num(l.LinkType), num(l.ID2), num(int64(l.Visibility)), blob(l.Data), num(l.Time), num(int64(l.Version)), num(nowMs()), num(int64(mode))},
		func(r row) (err error) {
			var n int64
			n, err = r.int(0)
			res = int(n)
			return err
		})
	if err == nil && (res < 0 || res > 2) {
		err = fmt.Errorf("%s returned %d, want 0, 1 or 2", s.writeFunc(), res)
	}
	return res, classify(err)
}

func (s *Store) upsert(ctx context.Context, l *graph.Link, readFirst bool) (res graph.WriteResult, err error) {
	if s.useFunc {
		mode := int(graph.WriteUpsert)
		if readFirst {
			mode = upsertReadFirst
		}
		var n int
		if n, err = s.routineWrite(ctx, l, mode); err == nil {
			res = [...]graph.WriteResult{graph.Unchanged, graph.Inserted, graph.Updated}[n]
		}
	} else {
		err = s.refWrite(ctx, l, func(st sqlstore.RefTx) (err error) {
			res, err = sqlstore.RefUpsert(st, l, readFirst)
			return err
		})
	}
	if err != nil {
		return 0, fmt.Errorf("write link %d/%d/%d: %w", l.ID1, l.LinkType, l.ID2, classify(err))
	}
	return res, nil
}

// AddLink implements store.Store.
func (s *Store) AddLink(ctx context.Context, l *graph.Link) (graph.WriteResult, error) {
	return s.upsert(ctx, l, false)
}

// UpdateLink implements store.Store.
func (s *Store) UpdateLink(ctx context.Context, l *graph.Link) (graph.WriteResult, error) {
	return s.upsert(ctx, l, true)
}

// DeleteLink implements store.Store.
func (s *Store) DeleteLink(ctx context.Context, id1, lt, id2 int64, expunge bool) (existed bool, err error) {
	l := &graph.Link{ID1: id1, LinkType: lt, ID2: id2}
	if s.useFunc {
		var n int
		n, err = s.routineWrite(ctx, l, int(graph.DeleteMode(expunge)))
		existed = n == 1
	} else {
		err = s.refWrite(ctx, l, func(st sqlstore.RefTx) (err error) {
			existed, err = sqlstore.RefDelete(st, expunge)
			return err
		})
	}
	if err != nil {
		return false, fmt.Errorf("delete link %d/%d/%d: %w", id1, lt, id2, classify(err))
	}
	return existed, nil
}

// RefWrites implements store.RefWriter: with link_writes = reference,
// and PostgreSQL's UPDATE reports the rows it matched.
func (s *Store) RefWrites() (on, matched bool) { return !s.useFunc, true }

// MultigetLinks implements store.Store. The statement carries its ids and
// is not prepared, as the reference sends it.
func (s *Store) MultigetLinks(ctx context.Context, id1, lt int64, id2s []int64, dst []graph.Link) ([]graph.Link, error) {
	if len(id2s) == 0 {
		return dst, nil
	}
	var data store.ListData
	err := unprepared(ctx, s.conns, sqlstore.RefMultigetSQL(s.t.Link, id1, lt, id2s), func(r row) error {
		var l graph.Link
		if err := r.link(&l, &data); err != nil {
			return err
		}
		dst = append(dst, l)
		return nil
	})
	if err != nil {
		return dst, fmt.Errorf("multiget %d/%d: %w", id1, lt, classify(err))
	}
	return dst, nil
}

// GetLinkList implements store.Store.
func (s *Store) GetLinkList(ctx context.Context, q graph.ListQuery, dst []graph.Link) ([]graph.Link, error) {
	limit := q.Limit
	if limit <= 0 {
		limit = graph.DefaultListLimit
	}
	data := store.ListDataFrom(s.listBuf)
	_, err := exec(ctx, s.conns, &s.q.list, []arg{num(q.ID1), num(q.LinkType), num(q.MinTime), num(q.MaxTime), num(int64(limit)), num(int64(max(q.Offset, 0)))},
		func(r row) error {
			var l graph.Link
			if err := r.link(&l, &data); err != nil {
				return err
			}
			dst = append(dst, l)
			return nil
		})
	data.Keep(s.listBuf)
	if err != nil {
		return dst, fmt.Errorf("list %d/%d: %w", q.ID1, q.LinkType, classify(err))
	}
	return dst, nil
}

// CountLinks implements store.Store.
func (s *Store) CountLinks(ctx context.Context, id1, lt int64) (int64, error) {
	var n int64
	_, err := exec(ctx, s.conns, &s.q.count, []arg{num(id1), num(lt)}, func(r row) (err error) {
		n, err = r.int(0)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("count %d/%d: %w", id1, lt, classify(err))
	}
	return n, nil
}

// AddNode implements store.Store.
func (s *Store) AddNode(ctx context.Context, n *graph.Node) (int64, error) {
	id := int64(-1)
	_, err := exec(ctx, s.conns, &s.q.addNode, []arg{num(int64(n.Type)), num(n.Version), num(int64(n.Time)), blob(n.Data)}, func(r row) (err error) {
		id, err = r.int(0)
		return err
	})
	if err == nil && id < 0 {
		err = errors.New("the insert returned no id")
	}
	if err != nil {
		return 0, fmt.Errorf("add node: %w", classify(err))
	}
	return id, nil
}

// GetNode implements store.Store. As the reference, it reads the node by
// id alone and compares its type here.
func (s *Store) GetNode(ctx context.Context, nodeType int32, id int64) (graph.Node, bool, error) {
	n := graph.Node{ID: id}
	found := false
	// A session copies the data into its lists' buffer (store.Sessioner).
	data := store.ListDataFrom(s.listBuf)
	defer data.Keep(s.listBuf)
	_, err := exec(ctx, s.conns, &s.q.getNode, []arg{num(id)}, func(r row) error {
		typ, err := r.int(1)
		if err != nil {
			return err
		}
		if n.Version, err = r.int(2); err != nil {
			return err
		}
		tm, err := r.int(3)
		if err != nil {
			return err
		}
		d, err := r.bytes(4)
		if err != nil {
			return err
		}
		n.Type, n.Time, n.Data, found = int32(typ), int32(tm), data.Add(d), true
		return nil
	})
	if err != nil {
		return graph.Node{}, false, fmt.Errorf("get node %d: %w", id, classify(err))
	}
	if !found || n.Type != nodeType {
		return graph.Node{}, false, nil
	}
	return n, true, nil
}

// UpdateNode implements store.Store.
func (s *Store) UpdateNode(ctx context.Context, n *graph.Node) (bool, error) {
	rows, err := exec(ctx, s.conns, &s.q.updNode, []arg{num(n.Version), num(int64(n.Time)), blob(n.Data), num(n.ID), num(int64(n.Type))}, nil)
	if err != nil {
		return false, fmt.Errorf("update node %d: %w", n.ID, classify(err))
	}
	return rows > 0, nil
}

// DeleteNode implements store.Store.
func (s *Store) DeleteNode(ctx context.Context, nodeType int32, id int64) (bool, error) {
	rows, err := exec(ctx, s.conns, &s.q.delNode, []arg{num(id), num(int64(nodeType))}, nil)
	if err != nil {
		return false, fmt.Errorf("delete node %d: %w", id, classify(err))
	}
	return rows > 0, nil
}
