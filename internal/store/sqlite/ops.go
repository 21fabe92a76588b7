package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/linkbench/linkbench/internal/graph"
	"github.com/linkbench/linkbench/internal/store/sqlstore"
)

// stmts are the prepared statements, prepared on first use (the tables may
// not exist when the store is opened) and dropped when the schema changes.
type stmts struct {
	mu    sync.Mutex
	ready bool
	// writer
	getLinkW, insLink, updLink, delLink, hideLink, bumpCount *sql.Stmt
	insNode, updNode, delNode                                *sql.Stmt
	// readers
	list, count, getNode *sql.Stmt
}

func (st *stmts) close() {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.closeLocked()
}

func (st *stmts) closeLocked() {
	for _, s := range []*sql.Stmt{st.getLinkW, st.insLink, st.updLink, st.delLink, st.hideLink, st.bumpCount,
		st.insNode, st.updNode, st.delNode, st.list, st.count, st.getNode} {
		if s != nil {
			s.Close()
		}
	}
	st.getLinkW, st.insLink, st.updLink, st.delLink, st.hideLink, st.bumpCount = nil, nil, nil, nil, nil, nil
	st.insNode, st.updNode, st.delNode, st.list, st.count, st.getNode = nil, nil, nil, nil, nil, nil
	st.ready = false
}

func (s *Store) prepared(ctx context.Context) (*stmts, error) {
	st := &s.stmts
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.ready {
		return st, nil
	}
	t := s.t
	var err error
	prep := func(db *sql.DB, dst **sql.Stmt, q string) {
		if err == nil {
			*dst, err = db.PrepareContext(ctx, q)
		}
	}
	prep(s.w, &st.getLinkW, "SELECT visibility, data, time, version FROM "+t.Link+" WHERE link_type = ? AND id1 = ? AND id2 = ?")
	prep(s.w, &st.insLink, "INSERT INTO "+t.Link+" (id1, id2, link_type, visibility, data, time, version) VALUES (?, ?, ?, ?, ?, ?, ?)")
	prep(s.w, &st.updLink, "UPDATE "+t.Link+" SET visibility = ?, data = ?, time = ?, version = ? WHERE link_type = ? AND id1 = ? AND id2 = ?")
	prep(s.w, &st.delLink, "DELETE FROM "+t.Link+" WHERE link_type = ? AND id1 = ? AND id2 = ?")
	prep(s.w, &st.hideLink, "UPDATE "+t.Link+" SET visibility = 0 WHERE link_type = ? AND id1 = ? AND id2 = ?")
	prep(s.w, &st.bumpCount, "INSERT INTO "+t.Count+" (id, link_type, count, time, version) VALUES (?1, ?2, max(?3, 0), ?4, 1) "+
		"ON CONFLICT (id, link_type) DO UPDATE SET count = max(count + ?3, 0), time = ?4, version = version + 1")
	prep(s.w, &st.insNode, "INSERT INTO "+t.Node+" (type, version, time, data) VALUES (?, ?, ?, ?)")
	prep(s.w, &st.updNode, "UPDATE "+t.Node+" SET version = ?, time = ?, data = ? WHERE id = ? AND type = ?")
	prep(s.w, &st.delNode, "DELETE FROM "+t.Node+" WHERE id = ? AND type = ?")
	prep(s.r, &st.list, "SELECT id2, data, time, version FROM "+t.Link+
		" WHERE id1 = ? AND link_type = ? AND visibility = 1 AND time >= ? AND time <= ? ORDER BY time DESC, id2 DESC LIMIT ? OFFSET ?")
	prep(s.r, &st.count, "SELECT count FROM "+t.Count+" WHERE id = ? AND link_type = ?")
	prep(s.r, &st.getNode, "SELECT version, time, data FROM "+t.Node+" WHERE id = ? AND type = ?")
	if err != nil {
		st.closeLocked()
		if cerr := s.CheckSchema(ctx); cerr != nil {
			return nil, cerr
		}
		return nil, classify(err)
	}
	st.ready = true
	return st, nil
}

func nowMs() int64 { return time.Now().UnixMilli() }

// writeTx runs fn in a BEGIN IMMEDIATE transaction on the writer.
func (s *Store) writeTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	return sqlstore.InTx(ctx, s.w, classify, fn)
}

func (s *Store) upsert(ctx context.Context, l *graph.Link) (graph.WriteResult, error) {
	st, err := s.prepared(ctx)
	if err != nil {
		return 0, err
	}
	res := graph.Inserted
	err = s.writeTx(ctx, func(tx *sql.Tx) error {
		old, found, err := sqlstore.ReadLink(ctx, tx.StmtContext(ctx, st.getLinkW), l)
		if err != nil {
			return err
		}
		var delta int64
		res, delta = graph.WriteOutcome(found, old, l)
		if err := sqlstore.WriteLinkTx(ctx, tx, st.insLink, st.updLink, l, found, res); err != nil {
			return err
		}
		if !graph.WritesCount(found, delta) {
			return nil
		}
		_, err = tx.StmtContext(ctx, st.bumpCount).ExecContext(ctx, l.ID1, l.LinkType, delta, nowMs())
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("write link %d/%d/%d: %w", l.ID1, l.LinkType, l.ID2, err)
	}
	return res, nil
}

func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
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
	st, err := s.prepared(ctx)
	if err != nil {
		return false, err
	}
	existed := false
	err = s.writeTx(ctx, func(tx *sql.Tx) error {
		var vis uint8
		var data []byte
		var tm int64
		var ver int32
		err := tx.StmtContext(ctx, st.getLinkW).QueryRowContext(ctx, lt, id1, id2).Scan(&vis, &data, &tm, &ver)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		existed = true
		if expunge {
			_, err = tx.StmtContext(ctx, st.delLink).ExecContext(ctx, lt, id1, id2)
		} else if vis == graph.VisibilityDefault {
			_, err = tx.StmtContext(ctx, st.hideLink).ExecContext(ctx, lt, id1, id2)
		}
		if err != nil || vis != graph.VisibilityDefault {
			return err
		}
		_, err = tx.StmtContext(ctx, st.bumpCount).ExecContext(ctx, id1, lt, -1, nowMs())
		return err
	})
	if err != nil {
		return false, fmt.Errorf("delete link %d/%d/%d: %w", id1, lt, id2, err)
	}
	return existed, nil
}

// MultigetLinks implements store.Store.
func (s *Store) MultigetLinks(ctx context.Context, id1, lt int64, id2s []int64, dst []graph.Link) ([]graph.Link, error) {
	if len(id2s) == 0 {
		return dst, nil
	}
	args := sqlstore.MultigetArgs(id1, lt, id2s)
	q := "SELECT id2, visibility, data, time, version FROM " + s.t.Link + " WHERE link_type = ? AND id1 = ? AND id2 IN (?" +
		strings.Repeat(", ?", len(id2s)-1) + ")"
	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return dst, fmt.Errorf("multiget %d/%d: %w", id1, lt, classify(err))
	}
	return sqlstore.ScanLinks(rows, id1, lt, dst, classify)
}

// GetLinkList implements store.Store.
func (s *Store) GetLinkList(ctx context.Context, q graph.ListQuery, dst []graph.Link) ([]graph.Link, error) {
	st, err := s.prepared(ctx)
	if err != nil {
		return dst, err
	}
	limit := q.Limit
	if limit <= 0 {
		limit = graph.DefaultListLimit
	}
	rows, err := st.list.QueryContext(ctx, q.ID1, q.LinkType, q.MinTime, q.MaxTime, limit, max(q.Offset, 0))
	if err != nil {
		return dst, fmt.Errorf("list %d/%d: %w", q.ID1, q.LinkType, classify(err))
	}
	return sqlstore.ScanList(rows, q.ID1, q.LinkType, dst, classify)
}

// nodes gathers the node and count statements for package sqlstore.
func (st *stmts) nodes() sqlstore.NodeStmts {
	return sqlstore.NodeStmts{Count: st.count, Insert: st.insNode, Get: st.getNode, Update: st.updNode, Delete: st.delNode}
}

// CountLinks implements store.Store.
func (s *Store) CountLinks(ctx context.Context, id1, lt int64) (int64, error) {
	st, err := s.prepared(ctx)
	if err != nil {
		return 0, err
	}
	return st.nodes().CountLinks(ctx, id1, lt, classify)
}

// AddNode implements store.Store.
func (s *Store) AddNode(ctx context.Context, n *graph.Node) (int64, error) {
	st, err := s.prepared(ctx)
	if err != nil {
		return 0, err
	}
	return st.nodes().AddNode(ctx, n, classify)
}

// GetNode implements store.Store.
func (s *Store) GetNode(ctx context.Context, nodeType int32, id int64) (graph.Node, bool, error) {
	st, err := s.prepared(ctx)
	if err != nil {
		return graph.Node{}, false, err
	}
	return st.nodes().GetNode(ctx, nodeType, id, classify)
}

// UpdateNode implements store.Store.
func (s *Store) UpdateNode(ctx context.Context, n *graph.Node) (bool, error) {
	st, err := s.prepared(ctx)
	if err != nil {
		return false, err
	}
	return st.nodes().UpdateNode(ctx, n, classify)
}

// DeleteNode implements store.Store.
func (s *Store) DeleteNode(ctx context.Context, nodeType int32, id int64) (bool, error) {
	st, err := s.prepared(ctx)
	if err != nil {
		return false, err
	}
	return st.nodes().DeleteNode(ctx, nodeType, id, classify)
}
