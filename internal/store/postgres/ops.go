package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/linkbench/linkbench/internal/graph"
	"github.com/linkbench/linkbench/internal/store/sqlstore"
)

func nowMs() int64 { return time.Now().UnixMilli() }

func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

func (s *Store) write(ctx context.Context, id1, lt, id2 int64, vis uint8, data []byte, tm int64, ver int32, mode int) (int, error) {
	var res int
	err := s.pool.QueryRow(ctx, s.q.write,
		id1, lt, id2, int16(vis), nonNil(data), tm, int64(ver), nowMs(), mode).Scan(&res)
	return res, classify(err)
}

func (s *Store) upsert(ctx context.Context, l *graph.Link) (graph.WriteResult, error) {
	res, err := s.write(ctx, l.ID1, l.LinkType, l.ID2, l.Visibility, l.Data, l.Time, l.Version, 0)
	if err != nil {
		return 0, fmt.Errorf("write link %d/%d/%d: %w", l.ID1, l.LinkType, l.ID2, err)
	}
	return [...]graph.WriteResult{graph.Unchanged, graph.Inserted, graph.Updated}[res], nil
}

// AddLink implements store.Store.
func (s *Store) AddLink(ctx context.Context, l *graph.Link) (graph.WriteResult, error) {
	return s.upsert(ctx, l)
}

// UpdateLink implements store.Store.
func (s *Store) UpdateLink(ctx context.Context, l *graph.Link) (graph.WriteResult, error) {
	return s.upsert(ctx, l)
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
	rows, err := s.pool.Query(ctx, s.q.multiget, lt, id1, id2s)
	if err != nil {
		return dst, fmt.Errorf("multiget %d/%d: %w", id1, lt, classify(err))
	}
	defer rows.Close()
	fast := binaryAs(rows.FieldDescriptions(), multigetOIDs...)
	var data payloads
	for rows.Next() {
		l := graph.Link{ID1: id1, LinkType: lt}
		if fast {
			if err := multigetRow(rows.RawValues(), &l, &data); err != nil {
				return dst, fmt.Errorf("multiget %d/%d: %w", id1, lt, err)
			}
			dst = append(dst, l)
			continue
		}
		var vis int16
		var ver int64
		if err := rows.Scan(&l.ID2, &vis, &l.Data, &l.Time, &ver); err != nil {
			return dst, classify(err)
		}
		l.Visibility, l.Version = uint8(vis), int32(ver)
		dst = append(dst, l)
	}
	return dst, classify(rows.Err())
}

// GetLinkList implements store.Store.
func (s *Store) GetLinkList(ctx context.Context, q graph.ListQuery, dst []graph.Link) ([]graph.Link, error) {
	limit := q.Limit
	if limit <= 0 {
		limit = graph.DefaultListLimit
	}
	rows, err := s.pool.Query(ctx, s.q.list,
		q.ID1, q.LinkType, q.MinTime, q.MaxTime, limit, max(q.Offset, 0))
	if err != nil {
		return dst, fmt.Errorf("list %d/%d: %w", q.ID1, q.LinkType, classify(err))
	}
	defer rows.Close()
	fast := binaryAs(rows.FieldDescriptions(), listOIDs...)
	var data payloads
	for rows.Next() {
		l := graph.Link{ID1: q.ID1, LinkType: q.LinkType, Visibility: graph.VisibilityDefault}
		if fast {
			if err := listRow(rows.RawValues(), &l, &data); err != nil {
				return dst, fmt.Errorf("list %d/%d: %w", q.ID1, q.LinkType, err)
			}
			dst = append(dst, l)
			continue
		}
		if err := sqlstore.ScanListRow(rows.Scan, &l); err != nil {
			return dst, classify(err)
		}
		dst = append(dst, l)
	}
	return dst, classify(rows.Err())
}

// CountLinks implements store.Store.
func (s *Store) CountLinks(ctx context.Context, id1, lt int64) (int64, error) {
	var n int64
	err := s.pool.QueryRow(ctx, s.q.count, id1, lt).Scan(&n)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("count %d/%d: %w", id1, lt, classify(err))
	}
	return n, nil
}

// AddNode implements store.Store.
func (s *Store) AddNode(ctx context.Context, n *graph.Node) (int64, error) {
	var id int64
	err := s.pool.QueryRow(ctx, s.q.addNode,
		n.Type, n.Version, n.Time, nonNil(n.Data)).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("add node: %w", classify(err))
	}
	return id, nil
}

// GetNode implements store.Store.
func (s *Store) GetNode(ctx context.Context, nodeType int32, id int64) (graph.Node, bool, error) {
	n := graph.Node{ID: id, Type: nodeType}
	err := s.pool.QueryRow(ctx, s.q.getNode, id, nodeType).
		Scan(&n.Version, &n.Time, &n.Data)
	if errors.Is(err, pgx.ErrNoRows) {
		return graph.Node{}, false, nil
	}
	if err != nil {
		return graph.Node{}, false, fmt.Errorf("get node %d: %w", id, classify(err))
	}
	return n, true, nil
}

// UpdateNode implements store.Store.
func (s *Store) UpdateNode(ctx context.Context, n *graph.Node) (bool, error) {
	tag, err := s.pool.Exec(ctx, s.q.updNode,
		n.Version, n.Time, nonNil(n.Data), n.ID, n.Type)
	if err != nil {
		return false, fmt.Errorf("update node %d: %w", n.ID, classify(err))
	}
	return tag.RowsAffected() > 0, nil
}

// DeleteNode implements store.Store.
func (s *Store) DeleteNode(ctx context.Context, nodeType int32, id int64) (bool, error) {
	tag, err := s.pool.Exec(ctx, s.q.delNode, id, nodeType)
	if err != nil {
		return false, fmt.Errorf("delete node %d: %w", id, classify(err))
	}
	return tag.RowsAffected() > 0, nil
}
