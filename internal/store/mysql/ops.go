package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	gomysql "github.com/go-sql-driver/mysql"
	"github.com/linkbench/linkbench/internal/graph"
	"github.com/linkbench/linkbench/internal/store/sqlstore"
)

// stmts are server-side prepared statements, prepared on first use.
type stmts struct {
	mu                                              sync.Mutex
	ready                                           atomic.Bool // set after the statements, read without mu
	getLink, insLink, updLink, delLink, hideLink    *sql.Stmt
	upsertCount                                     *sql.Stmt
	list, count, getNode, insNode, updNode, delNode *sql.Stmt
	call                                            *sql.Stmt // the write procedure, nil without it
	listSQL                                         string    // GET_LINKS_LIST's text, with or without the index hint
}

func (st *stmts) all() []*sql.Stmt {
	return []*sql.Stmt{st.getLink, st.insLink, st.updLink, st.delLink, st.hideLink, st.upsertCount,
		st.list, st.count, st.getNode, st.insNode, st.updNode, st.delNode, st.call}
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
	st.getLink, st.insLink, st.updLink, st.delLink, st.hideLink, st.upsertCount = nil, nil, nil, nil, nil, nil
	st.list, st.count, st.getNode, st.insNode, st.updNode, st.delNode = nil, nil, nil, nil, nil, nil
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
	err := s.prepareOn(ctx, st, s.r, s.w, s.w, true)
	if isMySQLError(err, 1176) { // no id1_type index (tables made by another tool)
		st.closeLocked()
		st.listSQL = s.listSQL(false)
		err = s.prepareOn(ctx, st, s.r, s.w, s.w, true)
	}
	if err == nil {
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

// prepareOn prepares the statements but the procedure's CALL, the reads
// on r, the node writes on nodes and the link writes on w, GET_LINKS_LIST's
// as st.listSQL says; those of a link write's client transaction only with
// linkTx.
func (s *Store) prepareOn(ctx context.Context, st *stmts, r, w, nodes preparer, linkTx bool) error {
	t := s.requestSQL(st.listSQL)
	var err error
	prep := func(p preparer, dst **sql.Stmt, text string) {
		if err == nil {
			*dst, err = p.PrepareContext(ctx, text)
		}
	}
	if linkTx {
		prep(w, &st.getLink, t.getLink)
		prep(w, &st.insLink, t.insLink)
		prep(w, &st.updLink, t.updLink)
		prep(w, &st.delLink, t.delLink)
		prep(w, &st.hideLink, t.hideLink)
		prep(w, &st.upsertCount, t.upsertCount)
	}
	prep(r, &st.list, t.list)
	prep(r, &st.count, t.count)
	prep(r, &st.getNode, t.getNode)
	prep(nodes, &st.insNode, t.insNode)
	prep(nodes, &st.updNode, t.updNode)
	prep(nodes, &st.delNode, t.delNode)
	return err
}

// requestTexts are the texts of the request statements but the CALL.
type requestTexts struct {
	list, count, getNode, insNode, updNode, delNode           string
	getLink, insLink, updLink, delLink, hideLink, upsertCount string // a link write's client transaction
}

// requestSQL returns the request statements' texts, GET_LINKS_LIST's
// being list.
func (s *Store) requestSQL(list string) requestTexts {
	L, C, N := q(s.t.Link), q(s.t.Count), q(s.t.Node)
	pk := s.linkRowHint()
	return requestTexts{
		list:    list,
		count:   "SELECT count FROM " + C + " WHERE id = ? AND link_type = ?",
		getNode: "SELECT version, time, data FROM " + N + " WHERE id = ? AND type = ?",
		insNode: "INSERT INTO " + N + " (type, version, time, data) VALUES (?, ?, ?, ?)",
		updNode: "UPDATE " + N + " SET version = ?, time = ?, data = ? WHERE id = ? AND type = ?",
		delNode: "DELETE FROM " + N + " WHERE id = ? AND type = ?",

		getLink:  "SELECT visibility, data, time, version FROM " + L + " WHERE link_type = ? AND id1 = ? AND id2 = ? FOR UPDATE",
		insLink:  "INSERT INTO " + L + " (id1, id2, link_type, visibility, data, time, version) VALUES (?, ?, ?, ?, ?, ?, ?)",
		updLink:  "UPDATE " + L + pk + " SET visibility = ?, data = ?, time = ?, version = ? WHERE link_type = ? AND id1 = ? AND id2 = ?",
		delLink:  "DELETE l FROM " + L + " l" + pk + " WHERE link_type = ? AND id1 = ? AND id2 = ?",
		hideLink: "UPDATE " + L + pk + " SET visibility = 0 WHERE link_type = ? AND id1 = ? AND id2 = ?",
		upsertCount: "INSERT INTO " + C + " (id, link_type, count, time, version) VALUES (?, ?, GREATEST(?, 0), ?, 1)" +
			" ON DUPLICATE KEY UPDATE count = GREATEST(CAST(count AS SIGNED) + ?, 0), time = VALUES(time), version = version + 1",
	}
}

// listSQL is GET_LINKS_LIST's statement. With hint it names the covering
// index, as the reference does: without it MariaDB reads a short list
// through the primary key and sorts it (EXPLAIN: "Using filesort"), which
// cost the server 20-35 % more CPU per request at 16 and 64 requesters
// (docs/performance.md).
func (s *Store) listSQL(hint bool) string {
	force := ""
	if hint {
		force = " FORCE INDEX (id1_type)"
	}
	return "SELECT id2, data, time, version FROM " + q(s.t.Link) + force +
		" WHERE id1 = ? AND link_type = ? AND visibility = 1 AND time >= ? AND time <= ? ORDER BY time DESC, id2 DESC LIMIT ? OFFSET ?"
}

// linkRowHint makes a link UPDATE or DELETE find its row by the primary
// key. On a small table MariaDB plans them as a range over id1_type (every
// column of linktable is in that index), and MyRocks locks every row of
// the list it reads: writers of one list then wait on one another's rows,
// and without deadlock detection (MyRocks' default) they wait out lock
// timeouts (TestLinkWritesLockOnlyTheirRow). The rows written are the
// reference's; only the path to them is pinned. TiDB locks only the rows
// it writes, and keeps its own plans.
func (s *Store) linkRowHint() string {
	if s.kind == "TiDB" {
		return ""
	}
	return " FORCE INDEX (PRIMARY)"
}

func nowMs() int64 { return time.Now().UnixMilli() }

func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

func (s *Store) tx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	return sqlstore.InTx(ctx, s.w, classify, fn)
}

// linkWrite runs one link write. It returns the graph.WriteResult (0/1/2
// = unchanged/inserted/updated) of an upsert and 0/1 = absent/existed for
// a hide or an expunge, as the stored procedure does; with report false
// (store.BlindLinkWriter) the procedure leaves the result out and
// linkWrite returns 0. readFirst (the procedure's UPDATE_LINK) reads the
// link before writing it; otherwise an upsert inserts first, as ADD_LINK
// does.
func (s *Store) linkWrite(ctx context.Context, l *graph.Link, mode graph.WriteMode, readFirst, report bool) (int, error) {
	st, err := s.prepared(ctx)
	if err != nil {
		return 0, err
	}
	pm := int(mode)
	if readFirst && mode == graph.WriteUpsert {
		pm = procUpsertReadFirst
	}
	if s.callsProc(st) {
		if s.sess != nil {
			return s.sess.procWrite(ctx, l, pm, report)
		}
		return s.procWrite(ctx, st.call, l, pm, report)
	}
	var res int
	if s.sess != nil {
		err = s.sess.inTx(ctx, func() (err error) {
			res, err = s.sess.linkStatements(ctx, l, mode, readFirst)
			return err
		})
	} else {
		err = s.tx(ctx, func(tx *sql.Tx) (err error) {
			exec := func(k linkStmt, args ...any) error {
				_, err := tx.StmtContext(ctx, st.link(k)).ExecContext(ctx, args...)
				return err
			}
			read := func() (graph.Link, bool, error) { return sqlstore.ReadLink(ctx, tx.StmtContext(ctx, st.getLink), l) }
			res, err = linkStatements(exec, read, l, mode, readFirst)
			return err
		})
	}
	// res is read after the transaction that sets it (in "return res,
	// f()" Go leaves the order of the two open).
	return res, err
}

// linkStmt names a write statement of a link write's client transaction.
type linkStmt int

const (
	insLink linkStmt = iota
	updLink
	hideLink
	delLink
	upsertCount
)

// link returns the pools' statement k.
func (st *stmts) link(k linkStmt) *sql.Stmt {
	return [...]*sql.Stmt{insLink: st.insLink, updLink: st.updLink, hideLink: st.hideLink, delLink: st.delLink, upsertCount: st.upsertCount}[k]
}

// linkStatements are a link write's statements in a client transaction,
// those of the procedure in its order (sqlstore.WriteLink). exec runs the
// write statement k with its arguments (each an int64 or a []byte), read
// reads the link for update.
func linkStatements(exec func(k linkStmt, args ...any) error, read func() (graph.Link, bool, error), l *graph.Link, mode graph.WriteMode, readFirst bool) (int, error) {
	return sqlstore.WriteLink(sqlstore.LinkSteps{
		Read: read,
		Insert: func() (bool, error) {
			err := exec(insLink, l.ID1, l.ID2, l.LinkType, int64(l.Visibility), nonNil(l.Data), l.Time, int64(l.Version))
			if isMySQLError(err, 1062) {
				return true, nil // the failed insert holds the row's shared lock
			}
			return false, err
		},
		Update: func() error {
			return exec(updLink, int64(l.Visibility), nonNil(l.Data), l.Time, int64(l.Version), l.LinkType, l.ID1, l.ID2)
		},
		Hide:    func() error { return exec(hideLink, l.LinkType, l.ID1, l.ID2) },
		Expunge: func() error { return exec(delLink, l.LinkType, l.ID1, l.ID2) },
		Count:   func(delta int64) error { return exec(upsertCount, l.ID1, l.LinkType, delta, nowMs(), delta) },
		// A server's answer, as a deadlock is: the session keeps its
		// connections (answered) and the write is retried.
		Vanished: errVanished,
	}, l, mode, readFirst)
}

// errVanished is a client link write's error when the link its insert
// found was gone when read.
var errVanished = &gomysql.MySQLError{Number: 1213, Message: sqlstore.VanishedMessage}

func (s *Store) upsert(ctx context.Context, l *graph.Link, readFirst, report bool) (_ graph.WriteResult, err error) {
	ctx, done := s.detach(ctx)
	defer func() { err = done(err) }()
	res, err := s.linkWrite(ctx, l, graph.WriteUpsert, readFirst, report)
	if err != nil {
		return 0, fmt.Errorf("write link %d/%d/%d: %w", l.ID1, l.LinkType, l.ID2, err)
	}
	return graph.WriteResult(res), nil
}

func (s *Store) deleteLink(ctx context.Context, id1, lt, id2 int64, expunge, report bool) (_ bool, err error) {
	ctx, done := s.detach(ctx)
	defer func() { err = done(err) }()
	mode := graph.WriteHide
	if expunge {
		mode = graph.WriteExpunge
	}
	res, err := s.linkWrite(ctx, &graph.Link{ID1: id1, LinkType: lt, ID2: id2}, mode, false, report)
	if err != nil {
		return false, fmt.Errorf("delete link %d/%d/%d: %w", id1, lt, id2, err)
	}
	return res == 1, nil
}

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
// procedure's result set.
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
	return sqlstore.ScanLinks(rows, id1, lt, dst, classify)
}

// multigetSQL is the multiget of id2s with every id written in it.
func (s *Store) multigetSQL(id1, lt int64, id2s []int64) string {
	b := make([]byte, 0, 96+len(s.t.Link)+21*(len(id2s)+2))
	b = append(b, "SELECT id2, visibility, data, time, version FROM "...)
	b = append(b, '`')
	b = append(b, strings.ReplaceAll(s.t.Link, "`", "``")...) // q without its allocations
	b = append(b, '`')
	b = append(b, " WHERE link_type = "...)
	b = strconv.AppendInt(b, lt, 10)
	b = append(b, " AND id1 = "...)
	b = strconv.AppendInt(b, id1, 10)
	b = append(b, " AND id2 IN ("...)
	for i, id2 := range id2s {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = strconv.AppendInt(b, id2, 10)
	}
	return string(append(b, ')'))
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
	return sqlstore.ScanList(rows, lq.ID1, lq.LinkType, dst, classify)
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
	return st.nodes().GetNode(ctx, nodeType, id, classify)
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
