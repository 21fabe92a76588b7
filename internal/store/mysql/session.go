package mysql

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"time"

	gomysql "github.com/go-sql-driver/mysql"
	"github.com/linkbench/linkbench/internal/graph"
	"github.com/linkbench/linkbench/internal/store"
	"github.com/linkbench/linkbench/internal/store/sqlstore"
)

// A session keeps one connection of the read pool and one of the write
// pool between a requester's operations, as a requester of the reference
// keeps its two JDBC connections, with the request statements prepared on
// them. A statement of the pools instead takes a connection from a pool
// and gives it back, looks up its own preparation on that connection, and
// has the driver check the connection's liveness (a recvfrom) each time.
// An operation that fails other than with the server's answer (a broken
// or aborted connection, a context's end) gives both connections back,
// their statements closed, and the next operation takes new ones. Link
// writes run on the write connection, as the reference's statements in
// its transactions (autocommit off) or as CALLs of the procedure; all the
// rest runs on the read connection.
type session struct {
	r, w    *sql.Conn
	manual  bool              // w runs with autocommit off (link_writes = reference)
	st      stmts             // listSQL, and ready
	tx      refTx             // a link write's transaction, kept for the next (refWrite)
	txOpen  bool              // a statement of tx succeeded since it last ended
	txCtx   context.Context   // the context of the write under way
	raw     rawStmts          // the other request statements (raw.go)
	settle  func(error) error // the session's settleErr, bound once
	listBuf []byte            // the list reads' and node reads' data, reused (store.Sessioner)

	// The driver-level statements' arguments and row values, and the
	// data of the link a client transaction read, reused.
	args         [10]driver.NamedValue
	dest         [7]driver.Value
	oldData      []byte
	multigetCols int // the multiget's columns, learnt at its first result

	// The requester's context the session watches (detach), the same
	// without cancellation, the watch's stop, and settleWatchedErr bound
	// once.
	watched, detached context.Context
	stopWatch         func() bool
	settleWatched     func(error) error
}

// acquireWait bounds the wait for a pool's connection. Sessions take at
// most one of each pool per requester, and the pools hold two more than
// the store's concurrency, so the wait is short unless more sessions than
// that are open at once.
const acquireWait = 30 * time.Second

// Session implements store.Sessioner: a copy of the store whose request
// operations run on the session's connections. Its Close gives them back
// and leaves the store open.
func (s *Store) Session() store.Store {
	c := *s
	ss := &session{}
	ss.bindTx()
	ss.settle = ss.settleErr
	ss.settleWatched = ss.settleWatchedErr
	c.sess = ss
	return &c
}

// prepared returns the session's statements, taking its connections and
// preparing the statements on them first when it has none.
func (ss *session) prepared(ctx context.Context, s *Store) (*stmts, error) {
	if ss.st.ready.Load() {
		return &ss.st, nil
	}
	// The pools' statements first: they check the schema, and say which
	// list statement and whether the procedure to use.
	pooled, err := s.pooled(ctx)
	if err != nil {
		return nil, err
	}
	actx, cancel := context.WithTimeout(ctx, acquireWait)
	defer cancel()
	if ss.r == nil {
		if ss.r, err = s.r.Conn(actx); err != nil {
			return nil, ss.acquireError(err)
		}
	}
	if ss.w == nil {
		if ss.w, err = s.w.Conn(actx); err != nil {
			return nil, ss.acquireError(err)
		}
	}
	// A link write runs the CALL on the session's write connection, or
	// else the reference's statements there, in transactions: as the
	// reference's connections do, the write connection runs with
	// autocommit off and only link writes.
	ss.st.listSQL = pooled.listSQL
	if !s.useProc && !ss.manual {
		if _, err = ss.w.ExecContext(ctx, "SET autocommit = 0"); err == nil {
			ss.manual = true
		}
	}
	if err == nil {
		err = ss.prepareRaw(ctx, s)
	}
	if err != nil {
		ss.drop()
		return nil, classify(err)
	}
	ss.st.ready.Store(true)
	return &ss.st, nil
}

// refWrite runs fn, a link write as the reference sends it, on the
// session's write connection, whose autocommit is off: its first
// statement begins the transaction, which fn ends. A transaction that
// cannot be ended (its ROLLBACK failed) gives the connections back, so no
// later statement runs in it.
func (ss *session) refWrite(ctx context.Context, l *graph.Link, fn func(sqlstore.RefTx) error) error {
	ss.txCtx, ss.tx.l = ctx, l
	defer func() { ss.txCtx, ss.tx.l = nil, nil }()
	return fn(&ss.tx)
}

// bindTx binds the session's link-write transaction to its statements.
func (ss *session) bindTx() {
	ss.tx.exec = func(k linkStmt, args []any) (int64, error) {
		n, _, err := ss.raw.link[k].exec(ss.txCtx, ss.with(args...))
		ss.txOpen = ss.txOpen || err == nil
		return n, err
	}
	ss.tx.read = func(args []any) (vis uint8, found bool, err error) {
		err = ss.raw.link[readVis].query(ss.txCtx, ss.with(args...), ss.dest[:], func(v []driver.Value) error {
			var n int64
			err := sqlstore.Ints(v, &n)
			vis, found = uint8(n), err == nil
			return err
		})
		ss.txOpen = ss.txOpen || err == nil
		return vis, found, err
	}
	ss.tx.end = func(commit bool) error {
		// As the reference's driver keeps the transaction's state from the
		// server's answers (Connector/J's useLocalTransactionState), it
		// ends one only when a statement of it succeeded: an error answer
		// says nothing of a transaction, so after a failed first statement
		// (the duplicate key of an ADD_LINK) no ROLLBACK is sent, and the
		// next statements go on in the transaction the server has open.
		open := ss.txOpen
		ss.txOpen = false
		if !open {
			return nil
		}
		if commit {
			err := ss.text(ss.txCtx, "COMMIT")
			if err == nil {
				return nil
			}
			if rerr := ss.text(ss.txCtx, "ROLLBACK"); rerr != nil {
				ss.drop()
			}
			return err
		}
		err := ss.text(ss.txCtx, "ROLLBACK")
		if err != nil {
			ss.drop()
		}
		return err
	}
}

func (ss *session) acquireError(err error) error {
	ss.drop()
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("no free connection in the pool within %s: more sessions are open than the store's concurrency allows", acquireWait)
	}
	return classify(err)
}

// settleErr gives the connections back after an error that may have left
// them unusable; a server's answer (a deadlock, a duplicate key, a lock
// wait timeout) leaves them as they are.
func (ss *session) settleErr(err error) error {
	if err != nil && !answered(err) {
		ss.drop()
	}
	return err
}

// answered reports an error the server sent in answer to a statement, on
// a connection that is still open.
func answered(err error) bool {
	var me *gomysql.MySQLError
	return errors.As(err, &me) && !errors.Is(err, graph.ErrConnection)
}

// drop closes the session's statements, which frees them in the server
// while their connection is still open, and gives the connections back: the
// pool keeps a healthy one and discards a broken one.
func (ss *session) drop() {
	ss.st.close()
	ss.closeRaw()
	if ss.manual && ss.w != nil {
		// Its autocommit is off: the pool must not give it to anyone else.
		ss.w.Raw(func(any) error { return driver.ErrBadConn })
	}
	ss.manual, ss.txOpen = false, false
	for _, c := range []*sql.Conn{ss.r, ss.w} {
		if c != nil {
			c.Close()
		}
	}
	ss.r, ss.w = nil, nil
}
