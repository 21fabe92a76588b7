package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/linkbench/linkbench/internal/graph"
	"github.com/linkbench/linkbench/internal/store"
)

func nowMs() int64 { return time.Now().UnixMilli() }

func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

func (s *Store) write(ctx context.Context, id1, lt, id2 int64, vis uint8, data []byte, tm int64, ver int32, mode int) (int, error) {
	res := -1
	_, err := exec(ctx, s.wconns, &s.q.write, []arg{num(id1), num(lt), num(id2), num(int64(vis)), blob(data), num(tm), num(int64(ver)), num(nowMs()), num(int64(mode))},
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

// upsertReadFirst is the write function's mode for UPDATE_LINK, which
// reads the link before writing it; 0 inserts first, as ADD_LINK does.
const upsertReadFirst = 3

func (s *Store) upsert(ctx context.Context, l *graph.Link, mode int) (graph.WriteResult, error) {
	res, err := s.write(ctx, l.ID1, l.LinkType, l.ID2, l.Visibility, l.Data, l.Time, l.Version, mode)
	if err != nil {
		return 0, fmt.Errorf("write link %d/%d/%d: %w", l.ID1, l.LinkType, l.ID2, err)
	}
	return [...]graph.WriteResult{graph.Unchanged, graph.Inserted, graph.Updated}[res], nil
}

// AddLink implements store.Store.
func (s *Store) AddLink(ctx context.Context, l *graph.Link) (graph.WriteResult, error) {
	return s.upsert(ctx, l, 0)
}

// UpdateLink implements store.Store.
func (s *Store) UpdateLink(ctx context.Context, l *graph.Link) (graph.WriteResult, error) {
	return s.upsert(ctx, l, upsertReadFirst)
}

// DeleteLink implements store.Store.
func (s *Store) DeleteLink(ctx context.Context, id1, lt, id2 int64, expunge bool) (bool, error) {
	mode := 1
	if expunge {
		mode = 2
	}
	res, err := s.write(ctx, id1, lt, id2, 0, nil, 0, 0, mode)
	if err != nil {
		return false, fmt.Errorf("delete link %d/%d/%d: %w", id1, lt, id2, err)
	}
	return res == 1, nil
}

// MultigetLinks implements store.Store.
func (s *Store) MultigetLinks(ctx context.Context, id1, lt int64, id2s []int64, dst []graph.Link) ([]graph.Link, error) {
	if len(id2s) == 0 {
		return dst, nil
	}
	var data store.ListData
	_, err := exec(ctx, s.conns, &s.q.multiget, []arg{num(lt), num(id1), idList(id2s)}, func(r row) error {
		l := graph.Link{ID1: id1, LinkType: lt}
		vis, err := r.int(1)
		if err != nil {
			return err
		}
		l.Visibility = uint8(vis)
		if err := r.link(0, 2, &l, &data); err != nil {
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
			l := graph.Link{ID1: q.ID1, LinkType: q.LinkType, Visibility: graph.VisibilityDefault}
			if err := r.link(0, 1, &l, &data); err != nil {
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
	_, err := exec(ctx, s.wconns, &s.q.addNode, []arg{num(int64(n.Type)), num(n.Version), num(int64(n.Time)), blob(n.Data)}, func(r row) (err error) {
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

// GetNode implements store.Store.
func (s *Store) GetNode(ctx context.Context, nodeType int32, id int64) (graph.Node, bool, error) {
	n := graph.Node{ID: id, Type: nodeType}
	found := false
	_, err := exec(ctx, s.conns, &s.q.getNode, []arg{num(id), num(int64(nodeType))}, func(r row) error {
		var err error
		if n.Version, err = r.int(0); err != nil {
			return err
		}
		tm, err := r.int(1)
		if err != nil {
			return err
		}
		n.Time = int32(tm)
		d, err := r.bytes(2)
		if err != nil {
			return err
		}
		n.Data, found = append([]byte{}, d...), true
		return nil
	})
	if err != nil {
		return graph.Node{}, false, fmt.Errorf("get node %d: %w", id, classify(err))
	}
	if !found {
		return graph.Node{}, false, nil
	}
	return n, true, nil
}

// UpdateNode implements store.Store.
func (s *Store) UpdateNode(ctx context.Context, n *graph.Node) (bool, error) {
	tag, err := exec(ctx, s.wconns, &s.q.updNode, []arg{num(n.Version), num(int64(n.Time)), blob(n.Data), num(n.ID), num(int64(n.Type))}, nil)
	if err != nil {
		return false, fmt.Errorf("update node %d: %w", n.ID, classify(err))
	}
	return tag.RowsAffected() > 0, nil
}

// DeleteNode implements store.Store.
func (s *Store) DeleteNode(ctx context.Context, nodeType int32, id int64) (bool, error) {
	tag, err := exec(ctx, s.wconns, &s.q.delNode, []arg{num(id), num(int64(nodeType))}, nil)
	if err != nil {
		return false, fmt.Errorf("delete node %d: %w", id, classify(err))
	}
	return tag.RowsAffected() > 0, nil
}
