package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"hash/fnv"
	"strings"
	"time"

	gomysql "github.com/go-sql-driver/mysql"
	"github.com/linkbench/linkbench/internal/store"
)

// lockSlots is how many processes can share one of the locks. MySQL's
// named locks (GET_LOCK) are exclusive: a shared lock is one free slot of
// lockSlots names, an exclusive one all of them.
const lockSlots = 32

// lockNames are the slot names of one of the database's two locks
// ("load" or "run"; see store.Locker), within GET_LOCK's 64 characters.
func (s *Store) lockNames(which string) []string {
	h := fnv.New32a()
	h.Write([]byte(s.db)) // named locks are the server's: the database names the graph
	out := make([]string, lockSlots)
	for i := range out {
		out[i] = fmt.Sprintf("linkbench/%08x/%s/%d", h.Sum32(), which, i)
	}
	return out
}

// Lock implements store.Locker with named locks (GET_LOCK) held by a
// connection of its own, outside the pools whose sockets a cancellation
// closes. The holder is written to the table linkbench_locks under the
// connection's id, so the process refused can say who holds the lock;
// the server frees the locks when the connection ends. On a server
// without named locks (some TiDB versions) the store is not locked.
func (s *Store) Lock(ctx context.Context, mode store.LockMode, holder string) (func(), error) {
	c := s.cfg.Clone()
	c.DialFunc = nil
	conn, err := gomysql.NewConnector(c)
	if err != nil {
		return nil, err
	}
	db := sql.OpenDB(conn)
	db.SetMaxOpenConns(1)
	lc, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		return nil, classify(err)
	}
	fail := func(err error) (func(), error) {
		lc.Close()
		db.Close()
		if err == nil {
			return func() {}, nil
		}
		return nil, err
	}
	own, other, exclusive := s.lockNames("run"), s.lockNames("load"), false
	switch mode {
	case store.LockShardLoad:
		own, other = other, own
	case store.LockLoad:
		own, other, exclusive = other, own, true
	}
	// A holder that lets go between the refusal and the lookup of its
	// name (a stopped process's connection closing) leaves nobody to
	// name: the locks are tried again then, a few times, instead of
	// refusing on behalf of "another connection".
	for try := 1; ; try++ {
		held, err := s.tryLocks(ctx, lc, own, other, exclusive)
		if err != nil {
			if strings.Contains(strings.ToLower(err.Error()), "get_lock") {
				s.logf("mysql: the server at %s has no named locks (GET_LOCK): this store is not protected from a concurrent load", s.addr)
				return fail(nil)
			}
			return fail(classify(err))
		}
		if held == "" {
			break
		}
		if !exclusive && mode == store.LockRun && held == own[0] {
			return fail(fmt.Errorf("database %s at %s: all %d slots of the run lock are taken; at most %d runs can share a database", s.db, s.addr, lockSlots, lockSlots))
		}
		if s.refused != nil {
			s.refused()
		}
		if holder, named := s.holder(ctx, lc, held); named || try == lockTries {
			return fail(&store.LockedError{Where: fmt.Sprintf("database %s at %s", s.db, s.addr), Holder: holder, Mode: mode})
		}
	}
	// Who holds it, for the others; a user without CREATE leaves them
	// with the connection's address only.
	if _, err := lc.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS linkbench_locks (conn BIGINT UNSIGNED NOT NULL PRIMARY KEY, holder VARCHAR(255) NOT NULL) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4"); err == nil {
		lc.ExecContext(ctx, "REPLACE INTO linkbench_locks (conn, holder) VALUES (CONNECTION_ID(), ?)", holder)
	}
	return func() {
		rctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		lc.ExecContext(rctx, "DO RELEASE_ALL_LOCKS()")
		lc.Close()
		db.Close()
	}, nil
}

// lockCalls evaluates expr (with one ? for the name) for every name in
// one statement.
func lockCalls(ctx context.Context, lc *sql.Conn, expr string, names []string) ([]bool, error) {
	cols := make([]string, len(names))
	args := make([]any, len(names))
	for i, n := range names {
		cols[i], args[i] = expr, n
	}
	vals := make([]sql.NullInt64, len(names))
	dst := make([]any, len(names))
	for i := range vals {
		dst[i] = &vals[i]
	}
	if err := lc.QueryRowContext(ctx, "SELECT "+strings.Join(cols, ", "), args...).Scan(dst...); err != nil {
		return nil, err
	}
	out := make([]bool, len(names))
	for i, v := range vals {
		out[i] = v.Int64 == 1
	}
	return out, nil
}

// lockTries is how many times Lock tries the locks while each refusal's
// holder has let go before it could be named.
const lockTries = 3

// tryLocks takes own (all of its names if exclusive, else the first
// free one) and checks that no name of other is held. It returns the
// name found held ("" when the locks are taken), having let go of what it
// took; a shared lock refused for want of a free slot is own[0].
func (s *Store) tryLocks(ctx context.Context, lc *sql.Conn, own, other []string, exclusive bool) (string, error) {
	var got []bool
	var err error
	if exclusive {
		got, err = lockCalls(ctx, lc, "GET_LOCK(?, 0)", own)
	} else {
		// The first free slot.
		taken := false
		for _, n := range own {
			var r sql.NullInt64
			if err = lc.QueryRowContext(ctx, "SELECT GET_LOCK(?, 0)", n).Scan(&r); err != nil {
				break
			}
			if taken = r.Int64 == 1; taken {
				break
			}
		}
		got = []bool{taken}
	}
	if err != nil {
		return "", err
	}
	for i, ok := range got {
		if !ok {
			lc.ExecContext(ctx, "DO RELEASE_ALL_LOCKS()")
			return own[i], nil
		}
	}
	used, err := lockCalls(ctx, lc, "IS_USED_LOCK(?) IS NOT NULL", other)
	if err != nil {
		return "", err
	}
	for i, u := range used {
		if u {
			lc.ExecContext(ctx, "DO RELEASE_ALL_LOCKS()")
			return other[i], nil
		}
	}
	return "", nil
}

// holder names the connection that holds the named lock; named is false
// when none does any more.
func (s *Store) holder(ctx context.Context, lc *sql.Conn, name string) (holder string, named bool) {
	var id sql.NullInt64
	if lc.QueryRowContext(ctx, "SELECT IS_USED_LOCK(?)", name).Scan(&id) != nil || !id.Valid {
		return "another connection", false
	}
	var h string
	if lc.QueryRowContext(ctx, "SELECT holder FROM linkbench_locks WHERE conn = ?", id.Int64).Scan(&h) == nil {
		return h, true
	}
	if lc.QueryRowContext(ctx, "SELECT host FROM information_schema.processlist WHERE id = ?", id.Int64).Scan(&h) == nil {
		return fmt.Sprintf("connection %d from %s", id.Int64, h), true
	}
	return fmt.Sprintf("connection %d", id.Int64), true
}
