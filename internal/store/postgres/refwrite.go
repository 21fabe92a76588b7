package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/linkbench/linkbench/internal/graph"
	"github.com/linkbench/linkbench/internal/store/sqlstore"
)

// refTx is a link write's transaction as the reference's store sends it
// (link_writes = reference, sqlstore.RefTx): its statements on the write
// connection, one round trip each, in transactions that BEGIN opens with
// the first statement (a JDBC driver with autocommit off sends it so) and
// COMMIT or ROLLBACK ends. A session keeps one for its writes.
type refTx struct {
	s         *Store
	ctx, ectx context.Context // the write's, and the one its statements run with (armed)
	c         *pgxpool.Conn
	direct    bool // the connection needs no watching of ctx: directTx
	status    byte // the server's transaction status after the last statement
	l         *graph.Link
	args      [7]arg
	vis       int64 // what ReadVisibility's row held
	found     bool
	readRow   func(row) error // readVis, bound once
}

func (t *refTx) readVis(r row) (err error) {
	t.vis, err = r.int(0)
	t.found = err == nil
	return err
}

// do runs st with args, BEGIN before it when no transaction is open.
func (t *refTx) do(st *stmt, args []arg, each func(row) error) (int64, error) {
	var first *stmt
	if t.status != 'T' && t.status != 'E' {
		first = &t.s.q.begin
	}
	if t.direct {
		n, status, err := directTx(t.ctx, t.c, first, st, args, each)
		t.status = status
		return n, err
	}
	tag, err := run(t.ctx, t.ectx, t.c, first, st, args, each)
	t.status = t.c.Conn().PgConn().TxStatus()
	return tag.RowsAffected(), err
}

// key sets the arguments to the link's id1, id2 and link_type after n
// others and returns them.
func (t *refTx) key(n int) []arg {
	t.args[n], t.args[n+1], t.args[n+2] = num(t.l.ID1), num(t.l.ID2), num(t.l.LinkType)
	return t.args[:n+3]
}

func (t *refTx) Insert() (bool, error) {
	l := t.l
	t.args = [7]arg{num(l.ID1), num(l.ID2), num(l.LinkType), num(int64(l.Visibility)), blob(l.Data), num(int64(l.Version)), num(l.Time)}
	_, err := t.do(&t.s.q.insLink, t.args[:], nil)
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505", err
}

func (t *refTx) AddCount(base int64) error {
	now := nowMs()
	t.args[0], t.args[1], t.args[2], t.args[3], t.args[4], t.args[5] = num(t.l.ID1), num(t.l.LinkType), num(base), num(now), num(base), num(now)
	_, err := t.do(&t.s.q.addCount, t.args[:6], nil)
	return err
}

func (t *refTx) ReadVisibility() (uint8, bool, error) {
	t.vis, t.found = 0, false
	_, err := t.do(&t.s.q.readVis, t.key(0), t.readRow)
	return uint8(t.vis), t.found, err
}

func (t *refTx) Update() (int64, error) {
	l := t.l
	t.args[0], t.args[1], t.args[2], t.args[3] = num(int64(l.Visibility)), blob(l.Data), num(int64(l.Version)), num(l.Time)
	return t.do(&t.s.q.updLink, t.key(4), nil)
}

func (t *refTx) Hide() (int64, error)    { return t.do(&t.s.q.hideLink, t.key(0), nil) }
func (t *refTx) Expunge() (int64, error) { return t.do(&t.s.q.delLink, t.key(0), nil) }

func (t *refTx) IncCount(delta int64) (int64, error) {
	t.args[0], t.args[1], t.args[2], t.args[3] = num(delta), num(nowMs()), num(t.l.ID1), num(t.l.LinkType)
	return t.do(&t.s.q.incCount, t.args[:4], nil)
}

func (t *refTx) Commit() error   { return t.end(&t.s.q.commit) }
func (t *refTx) Rollback() error { return t.end(&t.s.q.rollback) }

// end ends the transaction with st.
func (t *refTx) end(st *stmt) error {
	if t.direct {
		_, status, err := directTx(t.ctx, t.c, nil, st, nil, nil)
		t.status = status
		return err
	}
	_, err := run(t.ctx, t.ectx, t.c, nil, st, nil, nil)
	t.status = t.c.Conn().PgConn().TxStatus()
	return err
}

// refWrite runs fn, a link write as the reference sends it, on the write
// connection. A transaction that an error left open is rolled back on its
// connection, which stays usable; one that cannot be is closed, and the
// pool replaces it.
func (s *Store) refWrite(ctx context.Context, l *graph.Link, fn func(sqlstore.RefTx) error) (err error) {
	c, err := s.wconns.get(ctx)
	if err != nil {
		return err
	}
	defer s.wconns.put(c)
	t := s.refTx
	if t == nil {
		t = &refTx{s: s}
		t.readRow = t.readVis
	}
	// Deferred before the arming below, so it runs once the connection is
	// disarmed again.
	defer func() {
		if pc := c.Conn().PgConn(); !pc.IsClosed() && (t.status == 'T' || t.status == 'E') {
			rctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			if _, rerr := pc.Exec(rctx, "ROLLBACK").ReadAll(); rerr != nil {
				pc.Close(rctx) // the pool replaces it
			}
			cancel()
		}
		t.c, t.l, t.ctx, t.ectx = nil, nil, nil, nil
	}()
	ectx, ic, err := armed(ctx, c)
	if err != nil {
		return err
	}
	if ic != nil {
		defer ic.Disarm()
	}
	// Every statement is prepared outside the transaction, the first time
	// the connection writes (pgx keeps them by name, so later this only
	// looks them up). directTx reads the server's answers itself, and
	// pgconn's own view of the transaction's status, which its Prepare
	// would update mid-transaction, stays idle.
	for _, st := range []*stmt{&s.q.begin, &s.q.commit, &s.q.rollback, &s.q.readVis, &s.q.insLink, &s.q.addCount, &s.q.updLink, &s.q.hideLink, &s.q.delLink, &s.q.incCount} {
		if _, err := c.Conn().Prepare(ctx, st.name, st.sql); err != nil {
			return err
		}
	}
	t.ctx, t.ectx, t.c, t.l = ctx, ectx, c, l
	t.direct = ic != nil || ctx.Done() == nil
	t.status = 'I'
	return fn(t)
}
