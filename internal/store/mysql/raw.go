package mysql

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"io"

	"github.com/linkbench/linkbench/internal/graph"
	"github.com/linkbench/linkbench/internal/store"
	"github.com/linkbench/linkbench/internal/store/sqlstore"
)

// A session runs its request statements on the driver's connections under
// its two *sql.Conn (sql.Conn.Raw), with statements the driver prepared
// there. database/sql's statement on a held connection looks up its
// preparation, converts each argument, wraps the driver's rows in a Rows
// with its own locks, and copies each column through Scan: about a fifth
// of the driver's CPU a request at 4 requesters (docs/performance.md).
// The statements, the bytes on the wire and the errors are the driver's,
// as before; only database/sql's bookkeeping around them is gone. The
// multiget, a text statement, goes to the read connection's driver as
// text. The pools' statements stay on database/sql.

// rawStmt is a statement prepared on the driver connection of one of a
// session's *sql.Conn; it is used only inside that Conn's Raw.
type rawStmt struct {
	c    *sql.Conn
	q    driver.StmtQueryContext
	e    driver.StmtExecContext
	st   driver.Stmt
	cols int // the result's columns, learnt at the first query
}

// rawStmts are a session's request statements: call with the procedure
// (link_writes = routine), link (a link write's transaction) without.
type rawStmts struct {
	list, count, getNode, insNode, updNode, delNode, call rawStmt
	link                                                  [incCount + 1]rawStmt
}

func (rs *rawStmts) all() []*rawStmt {
	all := []*rawStmt{&rs.list, &rs.count, &rs.getNode, &rs.insNode, &rs.updNode, &rs.delNode, &rs.call}
	for i := range rs.link {
		all = append(all, &rs.link[i])
	}
	return all
}

// prepare prepares text on c's driver connection.
func (p *rawStmt) prepare(ctx context.Context, c *sql.Conn, text string) error {
	return c.Raw(func(dc any) error {
		pc, ok := dc.(driver.ConnPrepareContext)
		if !ok {
			return fmt.Errorf("the MySQL driver's connection (%T) cannot prepare a statement with a context", dc)
		}
		st, err := pc.PrepareContext(ctx, text)
		if err != nil {
			return err
		}
		q, qok := st.(driver.StmtQueryContext)
		e, eok := st.(driver.StmtExecContext)
		if !qok || !eok {
			st.Close()
			return fmt.Errorf("the MySQL driver's statement (%T) cannot run with a context", st)
		}
		*p = rawStmt{c: c, q: q, e: e, st: st}
		return nil
	})
}

// ok reports a prepared statement.
func (p *rawStmt) ok() bool { return p.st != nil }

// close frees the statement in the server while its connection is open
// (on a broken one there is nothing left to free).
func (p *rawStmt) close() {
	if p.st != nil {
		p.c.Raw(func(any) error {
			p.st.Close()
			return nil
		})
	}
	*p = rawStmt{}
}

// query runs the statement and calls row with each row's values, which
// are valid until the next row. dest holds at least as many values as
// the result has columns.
func (p *rawStmt) query(ctx context.Context, args []driver.NamedValue, dest []driver.Value, row func([]driver.Value) error) error {
	return p.c.Raw(func(any) error {
		rows, err := p.q.QueryContext(ctx, args)
		if err != nil {
			return err
		}
		return eachRow(rows, &p.cols, dest, row)
	})
}

// eachRow calls row with each of rows' rows, then closes them. *cols is
// the result's number of columns, learnt at the first result when 0.
func eachRow(rows driver.Rows, cols *int, dest []driver.Value, row func([]driver.Value) error) error {
	if *cols == 0 {
		*cols = len(rows.Columns())
	}
	if *cols > len(dest) {
		rows.Close()
		return fmt.Errorf("a request statement returned %d columns, more than the %d it asks for", *cols, len(dest))
	}
	d := dest[:*cols]
	var err error
	for err == nil {
		if err = rows.Next(d); err == nil {
			err = row(d)
		}
	}
	// After a server's error the rows are done and Close says nothing.
	cerr := rows.Close()
	if err == io.EOF {
		err = cerr
	}
	return err
}

// exec runs the statement and returns the rows it affected and the id it
// inserted.
func (p *rawStmt) exec(ctx context.Context, args []driver.NamedValue) (affected, lastID int64, err error) {
	err = p.c.Raw(func(any) error {
		res, err := p.e.ExecContext(ctx, args)
		if err != nil {
			return err
		}
		if affected, err = res.RowsAffected(); err == nil {
			lastID, err = res.LastInsertId()
		}
		return err
	})
	return affected, lastID, err
}

// prepareRaw prepares the session's request statements: the reads and
// the node writes on r, and on w the procedure's CALL (link_writes =
// routine) or else a link write's statements.
func (ss *session) prepareRaw(ctx context.Context, s *Store) error {
	t := s.requestSQL(ss.st.listSQL)
	type stmt struct {
		dst  *rawStmt
		c    *sql.Conn
		text string
	}
	all := []stmt{
		{&ss.raw.list, ss.r, t.list}, {&ss.raw.count, ss.r, t.count}, {&ss.raw.getNode, ss.r, t.getNode},
		{&ss.raw.insNode, ss.r, t.insNode}, {&ss.raw.updNode, ss.r, t.updNode}, {&ss.raw.delNode, ss.r, t.delNode},
	}
	if s.useProc {
		all = append(all, stmt{&ss.raw.call, ss.w, s.callSQL()})
	} else {
		for k, text := range t.link {
			all = append(all, stmt{&ss.raw.link[k], ss.w, text})
		}
	}
	for _, p := range all {
		if err := p.dst.prepare(ctx, p.c, p.text); err != nil {
			return err
		}
	}
	return nil
}

// closeRaw closes the session's driver-level statements.
func (ss *session) closeRaw() {
	for _, p := range ss.raw.all() {
		p.close()
	}
}

// with sets the session's statement arguments to vs, each an int64, a
// bool or a []byte (the driver takes them as they are: database/sql's
// conversion is not run).
func (ss *session) with(vs ...any) []driver.NamedValue {
	a := ss.args[:len(vs)]
	for i, v := range vs {
		a[i] = driver.NamedValue{Ordinal: i + 1, Value: v}
	}
	return a
}

func (ss *session) getLinkList(ctx context.Context, lq graph.ListQuery, limit, minT int64, dst []graph.Link) ([]graph.Link, error) {
	data := store.ListDataFrom(&ss.listBuf)
	err := ss.raw.list.query(ctx, ss.with(lq.ID1, lq.LinkType, minT, lq.MaxTime, limit, int64(max(lq.Offset, 0))), ss.dest[:], func(v []driver.Value) (err error) {
		dst, err = appendRefLink(dst, v, &data)
		return err
	})
	data.Keep(&ss.listBuf)
	if err != nil {
		return dst, fmt.Errorf("list %d/%d: %w", lq.ID1, lq.LinkType, classify(err))
	}
	return dst, nil
}

// appendRefLink appends the link of a row of the reference's link columns
// (id1, id2, link_type, visibility, data, version, time), its data added
// to data.
func appendRefLink(dst []graph.Link, v []driver.Value, data *store.ListData) ([]graph.Link, error) {
	var l graph.Link
	if b, ok := v[4].([]byte); ok {
		l.Data = data.Add(b)
	}
	var vis, ver int64
	if err := sqlstore.Ints(v, &l.ID1, &l.ID2, &l.LinkType, &vis, nil, &ver, &l.Time); err != nil {
		return dst, err
	}
	l.Visibility, l.Version = uint8(vis), int32(ver)
	return append(dst, l), nil
}

func (ss *session) countLinks(ctx context.Context, id1, lt int64) (int64, error) {
	var n int64
	err := ss.raw.count.query(ctx, ss.with(id1, lt), ss.dest[:], func(v []driver.Value) error {
		return sqlstore.Ints(v, &n)
	})
	if err != nil {
		return 0, fmt.Errorf("count %d/%d: %w", id1, lt, classify(err))
	}
	return n, nil
}

// getNode reads a node by its id and compares its type, as the
// reference does; its data is in the session's read buffer, as a list's
// is (store.Sessioner).
func (ss *session) getNode(ctx context.Context, nodeType int32, id int64) (graph.Node, bool, error) {
	n := graph.Node{ID: id}
	found := false
	data := store.ListDataFrom(&ss.listBuf)
	err := ss.raw.getNode.query(ctx, ss.with(id), ss.dest[:], func(v []driver.Value) error {
		var typ, t int64
		if err := sqlstore.Ints(v, nil, &typ, &n.Version, &t, nil); err != nil {
			return err
		}
		n.Type, n.Time, found = int32(typ), int32(t), true
		if b, ok := v[4].([]byte); ok {
			n.Data = data.Add(b)
		}
		return nil
	})
	data.Keep(&ss.listBuf)
	if err != nil {
		return graph.Node{}, false, fmt.Errorf("get node %d: %w", id, classify(err))
	}
	if !found || n.Type != nodeType {
		return graph.Node{}, false, nil
	}
	return n, true, nil
}

func (ss *session) addNode(ctx context.Context, n *graph.Node) (int64, error) {
	_, id, err := ss.raw.insNode.exec(ctx, ss.with(int64(n.Type), n.Version, int64(n.Time), nonNil(n.Data)))
	if err != nil {
		return 0, fmt.Errorf("add node: %w", classify(err))
	}
	return id, nil
}

func (ss *session) updateNode(ctx context.Context, n *graph.Node) (bool, error) {
	k, _, err := ss.raw.updNode.exec(ctx, ss.with(n.Version, int64(n.Time), nonNil(n.Data), n.ID, int64(n.Type)))
	if err != nil {
		return false, fmt.Errorf("update node %d: %w", n.ID, classify(err))
	}
	return k > 0, nil
}

func (ss *session) deleteNode(ctx context.Context, nodeType int32, id int64) (bool, error) {
	k, _, err := ss.raw.delNode.exec(ctx, ss.with(id, int64(nodeType)))
	if err != nil {
		return false, fmt.Errorf("delete node %d: %w", id, classify(err))
	}
	return k > 0, nil
}

// procWrite is Store.procWrite on the session's CALL.
func (ss *session) procWrite(ctx context.Context, l *graph.Link, mode int, report bool) (int, error) {
	args := ss.with(l.ID1, l.LinkType, l.ID2, int64(l.Visibility), nonNil(l.Data), l.Time, int64(l.Version), nowMs(), int64(mode), report)
	if !report {
		_, _, err := ss.raw.call.exec(ctx, args)
		return 0, classify(err)
	}
	var res int64
	found := false
	err := ss.raw.call.query(ctx, args, ss.dest[:], func(v []driver.Value) error {
		found = true
		return sqlstore.Ints(v, &res)
	})
	if err == nil && !found {
		err = sql.ErrNoRows
	}
	return int(res), classify(err)
}

// text runs query, without arguments, as text on the write connection.
func (ss *session) text(ctx context.Context, query string) error {
	return ss.w.Raw(func(dc any) error {
		e, ok := dc.(driver.ExecerContext)
		if !ok {
			return fmt.Errorf("the MySQL driver's connection (%T) cannot run a statement with a context", dc)
		}
		_, err := e.ExecContext(ctx, query, nil)
		return err
	})
}

// multiget runs a multiget's text (Store.multigetSQL) on the read
// connection and appends its links (id2, visibility, data, time,
// version), their data copied into one new buffer (store.ListData).
func (ss *session) multiget(ctx context.Context, text string, id1, lt int64, dst []graph.Link) ([]graph.Link, error) {
	var data store.ListData
	err := ss.r.Raw(func(dc any) error {
		qc, ok := dc.(driver.QueryerContext)
		if !ok {
			return fmt.Errorf("the MySQL driver's connection (%T) cannot query with a context", dc)
		}
		rows, err := qc.QueryContext(ctx, text, nil)
		if err != nil {
			return err
		}
		return eachRow(rows, &ss.multigetCols, ss.dest[:], func(v []driver.Value) (err error) {
			dst, err = appendRefLink(dst, v, &data)
			return err
		})
	})
	return dst, err
}
