package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/linkbench/linkbench/internal/graph"
	"github.com/linkbench/linkbench/internal/store/sqlstore"
)

// stmts are server-side prepared statements, prepared on first use.
type stmts struct {
	mu                                              sync.Mutex
	ready                                           atomic.Bool // set after the statements, read without mu
	list, count, getNode, insNode, updNode, delNode *sql.Stmt
	link                                            [incCount + 1]*sql.Stmt // a link write's statements (link_writes = reference)
	call                                            *sql.Stmt               // the write procedure (routine), nil without it
	listSQL                                         string                  // GET_LINKS_LIST's text, with or without the index hint
}

func (st *stmts) all() []*sql.Stmt {
	return append([]*sql.Stmt{st.list, st.count, st.getNode, st.insNode, st.updNode, st.delNode, st.call}, st.link[:]...)
}

func (st *stmts) close() {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.closeLocked()
}

func (st *stmts) closeLocked() {
	st.ready.Store(false)
	for _, s := range st.all() {
		if s != nil {
			s.Close()
		}
	}
	st.list, st.count, st.getNode, st.insNode, st.updNode, st.delNode = nil, nil, nil, nil, nil, nil
	st.link = [incCount + 1]*sql.Stmt{}
	st.call = nil
}

// preparer is where statements are prepared: a pool (*sql.DB), whose
// statements database/sql prepares again on each connection it meets, or
// one connection a session keeps (*sql.Conn).
type preparer interface {
	PrepareContext(ctx context.Context, query string) (*sql.Stmt, error)
}

// prepared returns the statements of the request operations: a session's
// own, or the pools'.
func (s *Store) prepared(ctx context.Context) (*stmts, error) {
	if s.sess != nil {
		return s.sess.prepared(ctx, s)
	}
	return s.pooled(ctx)
}

// pooled returns the pools' statements, prepared on first use.
func (s *Store) pooled(ctx context.Context) (*stmts, error) {
	st := s.st
	// Every operation comes here: no lock once the statements exist.
	if st.ready.Load() {
		return st, nil
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.ready.Load() {
		return st, nil
	}
	st.listSQL = s.listSQL(true)
	err := s.prepareOn(ctx, st, s.r, s.w)
	if isMySQLError(err, 1176) { // no id1_type index (tables made by another tool)
		st.closeLocked()
		st.listSQL = s.listSQL(false)
		err = s.prepareOn(ctx, st, s.r, s.w)
	}
	if err == nil && s.useProc {
		st.call, err = s.prepareProc(ctx)
	}
	if err != nil {
		st.closeLocked()
		if cerr := s.CheckSchema(ctx); cerr != nil {
			return nil, cerr
		}
		return nil, classify(err)
	}
	st.ready.Store(true)
	return st, nil
}

// prepareOn prepares the statements but the procedure's CALL: the reads
// and the node writes on r, a link write's statements on w (without the
// procedure), GET_LINKS_LIST's as st.listSQL says.
func (s *Store) prepareOn(ctx context.Context, st *stmts, r, w preparer) error {
	t := s.requestSQL(st.listSQL)
	var err error
	prep := func(p preparer, dst **sql.Stmt, text string) {
		if err == nil {
			*dst, err = p.PrepareContext(ctx, text)
		}
	}
	if !s.useProc {
		for k, text := range t.link {
			prep(w, &st.link[k], text)
		}
	}
	prep(r, &st.list, t.list)
	prep(r, &st.count, t.count)
	prep(r, &st.getNode, t.getNode)
	prep(r, &st.insNode, t.insNode)
	prep(r, &st.updNode, t.updNode)
	prep(r, &st.delNode, t.delNode)
	return err
}

// linkStmt names a statement of a link write's transaction.
type linkStmt int

const (
	readVis linkStmt = iota
	insLink
	addCount
	updLink
	hideLink
	delLink
	incCount
)

// requestTexts are the texts of the request statements but the CALL.
type requestTexts struct {
	list, count, getNode, insNode, updNode, delNode string
	link                                            [incCount + 1]string
}

// requestSQL returns the reference's request statements (LinkStoreSql
// and LinkStoreMysql), with the store's quoted table names,
// GET_LINKS_LIST's being list. They differ from its texts in what the
// server cannot tell apart, and in the list's ORDER BY (listSQL).
func (s *Store) requestSQL(list string) requestTexts {
	L, C, N := q(s.t.Link), q(s.t.Count), q(s.t.Node)
	return requestTexts{
		list:    list,
		count:   "SELECT count FROM " + C + " WHERE id = ? AND link_type = ?",
		getNode: "SELECT id, type, version, time, data FROM " + N + " WHERE id = ?",
		insNode: "INSERT INTO " + N + " (type, version, time, data) VALUES (?, ?, ?, ?)",
		updNode: "UPDATE " + N + " SET version = ?, time = ?, data = ? WHERE id = ? AND type = ?",
		delNode: "DELETE FROM " + N + " WHERE id = ? AND type = ?",
		link: [...]string{
			readVis: "SELECT visibility FROM " + L + " WHERE id1 = ? AND id2 = ? AND link_type = ? FOR UPDATE",
			insLink: "INSERT INTO " + L + " (id1, id2, link_type, visibility, data, version, time) VALUES (?, ?, ?, ?, ?, ?, ?)",
			addCount: "INSERT INTO " + C + " (id, link_type, count, time, version) VALUES (?, ?, ?, ?, 0)" +
				" ON DUPLICATE KEY UPDATE count = count + ?, version = version + 1, time = ?",
			updLink:  "UPDATE " + L + " SET visibility = ?, data = ?, version = ?, time = ? WHERE id1 = ? AND id2 = ? AND link_type = ?",
			hideLink: "UPDATE " + L + " SET visibility = 0 WHERE id1 = ? AND id2 = ? AND link_type = ?",
			delLink:  "DELETE FROM " + L + " WHERE id1 = ? AND id2 = ? AND link_type = ?",
			incCount: "UPDATE " + C + " SET count = count + ?, version = version + 1, time = ? WHERE id = ? AND link_type = ?",
		},
	}
}

// listSQL is GET_LINKS_LIST's statement. With hint it names the covering
// index, as the reference does: without it MariaDB reads a short list
// through the primary key and sorts it (EXPLAIN: "Using filesort"). Its
// ORDER BY names id2 after time, so that links of one time come in one
// order (the SPEC's); the index gives both orders, and the plan is the
// reference's.
func (s *Store) listSQL(hint bool) string {
	force := ""
	if hint {
		force = " FORCE INDEX (id1_type)"
	}
	return "SELECT id1, id2, link_type, visibility, data, version, time FROM " + q(s.t.Link) + force +
		" WHERE id1 = ? AND link_type = ? AND time >= ? AND time <= ? AND visibility = 1 ORDER BY time DESC, id2 DESC LIMIT ? OFFSET ?"
}

func nowMs() int64 { return time.Now().UnixMilli() }

func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// linkArgs are the arguments of a link write's statement k for l (delta
// for the count's, base for an insert's count).
func linkArgs(k linkStmt, l *graph.Link, delta int64, dst []any) []any {
	key := func(n int) []any {
		dst[n], dst[n+1], dst[n+2] = l.ID1, l.ID2, l.LinkType
		return dst[:n+3]
	}
	switch k {
	case insLink:
		dst[0], dst[1], dst[2], dst[3], dst[4], dst[5], dst[6] = l.ID1, l.ID2, l.LinkType, int64(l.Visibility), nonNil(l.Data), int64(l.Version), l.Time
		return dst[:7]
	case addCount:
		now := nowMs()
		dst[0], dst[1], dst[2], dst[3], dst[4], dst[5] = l.ID1, l.LinkType, delta, now, delta, now
		return dst[:6]
	case updLink:
		dst[0], dst[1], dst[2], dst[3] = int64(l.Visibility), nonNil(l.Data), int64(l.Version), l.Time
		return key(4)
	case incCount:
		dst[0], dst[1], dst[2], dst[3] = delta, nowMs(), l.ID1, l.LinkType
		return dst[:4]
	}
	return key(0)
}

// refTx is a link write's transaction as the reference's store sends it
// (sqlstore.RefTx), on statements run by exec (k with args, the rows it
// reports) and read (the visibility for update), and ended by end.
type refTx struct {
	l    *graph.Link
	args [7]any
	exec func(k linkStmt, args []any) (int64, error)
	read func(args []any) (vis uint8, found bool, err error)
	end  func(commit bool) error
}

func (t *refTx) run(k linkStmt, delta int64) (int64, error) {
	return t.exec(k, linkArgs(k, t.l, delta, t.args[:]))
}

func (t *refTx) Insert() (bool, error) {
	_, err := t.run(insLink, 0)
	return isMySQLError(err, 1062), err
}

func (t *refTx) AddCount(base int64) error { _, err := t.run(addCount, base); return err }

func (t *refTx) ReadVisibility() (uint8, bool, error) {
	return t.read(linkArgs(readVis, t.l, 0, t.args[:]))
}

func (t *refTx) Update() (int64, error)              { return t.run(updLink, 0) }
func (t *refTx) Hide() (int64, error)                { return t.run(hideLink, 0) }
func (t *refTx) Expunge() (int64, error)             { return t.run(delLink, 0) }
func (t *refTx) IncCount(delta int64) (int64, error) { return t.run(incCount, delta) }
func (t *refTx) Commit() error                       { return t.end(true) }
func (t *refTx) Rollback() error                     { return t.end(false) }

// pooledTx runs a link write's transaction on the pools' statements, in a
// database/sql transaction of the write pool begun by its first statement.
// Only a store that is not a session uses it (the request phase's
// requesters each have one).
func (s *Store) pooledTx(ctx context.Context, st *stmts, l *graph.Link) *refTx {
	var tx *sql.Tx
	begin := func() error {
		var err error
		if tx == nil {
			tx, err = s.w.BeginTx(ctx, nil)
		}
		return err
	}
	return &refTx{l: l,
		exec: func(k linkStmt, args []any) (int64, error) {
			if err := begin(); err != nil {
				return 0, err
			}
			res, err := tx.StmtContext(ctx, st.link[k]).ExecContext(ctx, args...)
			if err != nil {
				return 0, err
			}
			return res.RowsAffected()
		},
		read: func(args []any) (uint8, bool, error) {
			if err := begin(); err != nil {
				return 0, false, err
			}
			var vis int64
			err := tx.StmtContext(ctx, st.link[readVis]).QueryRowContext(ctx, args...).Scan(&vis)
			if errors.Is(err, sql.ErrNoRows) {
				return 0, false, nil
			}
			return uint8(vis), err == nil, err
		},
		end: func(commit bool) error {
			if tx == nil {
				return nil
			}
			t := tx
			tx = nil
			if commit {
				return t.Commit()
			}
			return t.Rollback()
		},
	}
}

func (s *Store) tx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	return sqlstore.InTx(ctx, s.w, classify, fn)
}

// linkWrite runs fn, one link write as the reference sends it, on the
// session's write connection or the pools'.
func (s *Store) linkWrite(ctx context.Context, l *graph.Link, fn func(sqlstore.RefTx) error) error {
	st, err := s.prepared(ctx)
	if err != nil {
		return err
	}
	if s.sess != nil {
		return s.sess.refWrite(ctx, l, fn)
	}
	t := s.pooledTx(ctx, st, l)
	err = fn(t)
	if err != nil {
		t.end(false) // a transaction that an error left open
	}
	return err
}

// routineWrite runs one link write in one CALL of the procedure; mode is
// a graph.WriteMode or procUpsertReadFirst. It returns the procedure's
// result (0/1/2 unchanged/inserted/updated for an upsert, 0/1
// absent/existed for a delete), or 0 without report.
func (s *Store) routineWrite(ctx context.Context, l *graph.Link, mode int, report bool) (int, error) {
	st, err := s.prepared(ctx)
	if err != nil {
		return 0, err
	}
	if s.sess != nil {
		return s.sess.procWrite(ctx, l, mode, report)
	}
	return s.procWrite(ctx, st.call, l, mode, report)
}

func (s *Store) upsert(ctx context.Context, l *graph.Link, readFirst, report bool) (res graph.WriteResult, err error) {
	ctx, done := s.detach(ctx)
	defer func() { err = done(err) }()
	if s.useProc {
		mode := int(graph.WriteUpsert)
		if readFirst {
			mode = procUpsertReadFirst
		}
		var n int
		n, err = s.routineWrite(ctx, l, mode, report)
		res = graph.WriteResult(n)
	} else {
		err = s.linkWrite(ctx, l, func(t sqlstore.RefTx) (err error) {
			res, err = sqlstore.RefUpsert(t, l, readFirst)
			return err
		})
	}
	if err != nil {
		return 0, fmt.Errorf("write link %d/%d/%d: %w", l.ID1, l.LinkType, l.ID2, classify(err))
	}
	return res, nil
}

func (s *Store) deleteLink(ctx context.Context, id1, lt, id2 int64, expunge, report bool) (existed bool, err error) {
	ctx, done := s.detach(ctx)
	defer func() { err = done(err) }()
	l := &graph.Link{ID1: id1, LinkType: lt, ID2: id2}
	if s.useProc {
		var n int
		n, err = s.routineWrite(ctx, l, int(graph.DeleteMode(expunge)), report)
		existed = n == 1
	} else {
		err = s.linkWrite(ctx, l, func(t sqlstore.RefTx) (err error) {
			existed, err = sqlstore.RefDelete(t, expunge)
			return err
		})
	}
	if err != nil {
		return false, fmt.Errorf("delete link %d/%d/%d: %w", id1, lt, id2, classify(err))
	}
	return existed, nil
}

// RefWrites implements store.RefWriter: with link_writes = reference. The
// write connection asks for the rows an UPDATE changed, as the
// reference's does (its driver's useAffectedRows): InnoDB reports none
// for an identical rewrite, which is then reported unchanged, but MyRocks
// reports the row it matched.
func (s *Store) RefWrites() (on, matched bool) { return !s.useProc, s.engine == "rocksdb" }

// AddLink implements store.Store.
func (s *Store) AddLink(ctx context.Context, l *graph.Link) (graph.WriteResult, error) {
	return s.upsert(ctx, l, false, true)
}

// UpdateLink implements store.Store.
func (s *Store) UpdateLink(ctx context.Context, l *graph.Link) (graph.WriteResult, error) {
	return s.upsert(ctx, l, true, true)
}

// DeleteLink implements store.Store.
func (s *Store) DeleteLink(ctx context.Context, id1, lt, id2 int64, expunge bool) (bool, error) {
	return s.deleteLink(ctx, id1, lt, id2, expunge, true)
}

// AddLinkBlind implements store.BlindLinkWriter: AddLink without the
// procedure's result set (link_writes = routine); the reference's
// statements cost the same either way.
func (s *Store) AddLinkBlind(ctx context.Context, l *graph.Link) error {
	_, err := s.upsert(ctx, l, false, false)
	return err
}

// UpdateLinkBlind implements store.BlindLinkWriter.
func (s *Store) UpdateLinkBlind(ctx context.Context, l *graph.Link) error {
	_, err := s.upsert(ctx, l, true, false)
	return err
}

// DeleteLinkBlind implements store.BlindLinkWriter.
func (s *Store) DeleteLinkBlind(ctx context.Context, id1, lt, id2 int64, expunge bool) error {
	_, err := s.deleteLink(ctx, id1, lt, id2, expunge, false)
	return err
}

// MultigetLinks implements store.Store. The statement carries its ids and
// goes as text, as the reference sends it, not as a prepared statement:
// MariaDB's UPDATE and DELETE clear the covering indexes of the table
// instance they ran on, and a prepared statement executed on such an
// instance (every instance is shared through the table cache) reads each
// row it finds through the primary key (EXPLAIN: "Using index condition"
// or "Using where" without "Using index"). A text statement is resolved
// anew on the instance it gets, which restores them for the statements
// that come after it there, as the reference's multigets do for its
// prepared list reads (docs/performance.md).
func (s *Store) MultigetLinks(ctx context.Context, id1, lt int64, id2s []int64, dst []graph.Link) (_ []graph.Link, err error) {
	ctx, done := s.detach(ctx)
	defer func() { err = done(err) }()
	if len(id2s) == 0 {
		return dst, nil
	}
	// The session's connections are taken with its statements.
	if _, err := s.prepared(ctx); err != nil {
		return dst, err
	}
	if s.sess != nil {
		if dst, err = s.sess.multiget(ctx, s.multigetSQL(id1, lt, id2s), id1, lt, dst); err != nil {
			return dst, fmt.Errorf("multiget %d/%d: %w", id1, lt, classify(err))
		}
		return dst, nil
	}
	rows, err := s.r.QueryContext(ctx, s.multigetSQL(id1, lt, id2s))
	if err != nil {
		return dst, fmt.Errorf("multiget %d/%d: %w", id1, lt, classify(err))
	}
	return sqlstore.ScanRefLinks(rows, dst, classify)
}

// multigetSQL is the reference's multiget of id2s, with every id written
// in it.
func (s *Store) multigetSQL(id1, lt int64, id2s []int64) string {
	return sqlstore.RefMultigetSQL(s.qLink, id1, lt, id2s)
}

// GetLinkList implements store.Store.
func (s *Store) GetLinkList(ctx context.Context, lq graph.ListQuery, dst []graph.Link) (_ []graph.Link, err error) {
	ctx, done := s.detach(ctx)
	defer func() { err = done(err) }()
	st, err := s.prepared(ctx)
	if err != nil {
		return dst, err
	}
	limit := lq.Limit
	if limit <= 0 {
		limit = graph.DefaultListLimit
	}
	minT := max(lq.MinTime, 0) // time is unsigned in the reference schema
	if s.sess != nil {
		return s.sess.getLinkList(ctx, lq, int64(limit), minT, dst)
	}
	rows, err := st.list.QueryContext(ctx, lq.ID1, lq.LinkType, minT, lq.MaxTime, limit, max(lq.Offset, 0))
	if err != nil {
		return dst, fmt.Errorf("list %d/%d: %w", lq.ID1, lq.LinkType, classify(err))
	}
	return sqlstore.ScanRefLinks(rows, dst, classify)
}

// nodes gathers the node and count statements for package sqlstore.
func (st *stmts) nodes() sqlstore.NodeStmts {
	return sqlstore.NodeStmts{Count: st.count, Insert: st.insNode, Get: st.getNode, Update: st.updNode, Delete: st.delNode}
}

// CountLinks implements store.Store.
func (s *Store) CountLinks(ctx context.Context, id1, lt int64) (_ int64, err error) {
	ctx, done := s.detach(ctx)
	defer func() { err = done(err) }()
	st, err := s.prepared(ctx)
	if err != nil {
		return 0, err
	}
	if s.sess != nil {
		return s.sess.countLinks(ctx, id1, lt)
	}
	return st.nodes().CountLinks(ctx, id1, lt, classify)
}

// AddNode implements store.Store.
func (s *Store) AddNode(ctx context.Context, n *graph.Node) (_ int64, err error) {
	ctx, done := s.detach(ctx)
	defer func() { err = done(err) }()
	st, err := s.prepared(ctx)
	if err != nil {
		return 0, err
	}
	if s.sess != nil {
		return s.sess.addNode(ctx, n)
	}
	return st.nodes().AddNode(ctx, n, classify)
}

// GetNode implements store.Store.
func (s *Store) GetNode(ctx context.Context, nodeType int32, id int64) (_ graph.Node, _ bool, err error) {
	ctx, done := s.detach(ctx)
	defer func() { err = done(err) }()
	st, err := s.prepared(ctx)
	if err != nil {
		return graph.Node{}, false, err
	}
	if s.sess != nil {
		return s.sess.getNode(ctx, nodeType, id)
	}
	return st.nodes().GetNodeByID(ctx, nodeType, id, classify)
}

// UpdateNode implements store.Store.
func (s *Store) UpdateNode(ctx context.Context, n *graph.Node) (_ bool, err error) {
	ctx, done := s.detach(ctx)
	defer func() { err = done(err) }()
	st, err := s.prepared(ctx)
	if err != nil {
		return false, err
	}
	if s.sess != nil {
		return s.sess.updateNode(ctx, n)
	}
	return st.nodes().UpdateNode(ctx, n, classify)
}

// DeleteNode implements store.Store.
func (s *Store) DeleteNode(ctx context.Context, nodeType int32, id int64) (_ bool, err error) {
	ctx, done := s.detach(ctx)
	defer func() { err = done(err) }()
	st, err := s.prepared(ctx)
	if err != nil {
		return false, err
	}
	if s.sess != nil {
		return s.sess.deleteNode(ctx, nodeType, id)
	}
	return st.nodes().DeleteNode(ctx, nodeType, id, classify)
}
