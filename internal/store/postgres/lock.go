package postgres

import (
	"context"
	"fmt"
	"hash/fnv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/linkbench/linkbench/internal/store"
)

// lockTries is how many times Lock tries its key while each refusal's
// holder has let go before it could be named.
const lockTries = 3

// lockKey is the advisory lock key of one of the schema's two locks
// ("load" or "run"; see store.Locker).
func (s *Store) lockKey(which string) int64 {
	h := fnv.New64a()
	h.Write([]byte("linkbench " + which + " " + s.db + "." + s.schema))
	return int64(h.Sum64())
}

// Lock implements store.Locker with session advisory locks, held on a
// connection of their own that names this process in its
// application_name, so that the process refused can say who holds them.
// The server frees them when the connection ends.
func (s *Store) Lock(ctx context.Context, mode store.LockMode, holder string) (func(), error) {
	pc, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, classify(err)
	}
	conn := pc.Hijack()
	fail := func(err error) (func(), error) {
		cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		// A refused attempt may hold its first key: freed before the
		// connection goes, as in the release below.
		conn.Exec(cctx, "SELECT pg_advisory_unlock_all()")
		conn.Close(cctx)
		return nil, err
	}
	// application_name keeps 63 bytes: drop whole parts from the end.
	for len(holder) > 63 {
		i := strings.LastIndex(holder, ", ")
		if i < 0 {
			holder = holder[:63]
			break
		}
		holder = holder[:i]
	}
	if _, err := conn.Exec(ctx, "SELECT set_config('application_name', $1, false)", holder); err != nil {
		return fail(classify(err))
	}
	own, other, take := s.lockKey("run"), s.lockKey("load"), "pg_try_advisory_lock_shared"
	switch mode {
	case store.LockShardLoad:
		own, other = other, own
	case store.LockLoad:
		own, other, take = other, own, "pg_try_advisory_lock"
	}
	// A holder that lets go between the refused try and the lookup (a
	// stopped process's backend exiting) leaves nobody to name: the key
	// is tried again then, a few times, instead of refusing on behalf of
	// "another session".
	for try := 1; ; try++ {
		var ok bool
		if err := conn.QueryRow(ctx, "SELECT "+take+"($1)", own).Scan(&ok); err != nil {
			return fail(classify(err))
		}
		if ok {
			break
		}
		if s.refused != nil {
			s.refused()
		}
		// A failed lookup refuses the lock without naming the holder.
		holders, err := s.holders(ctx, conn, own)
		if err != nil || len(holders) > 0 || try == lockTries {
			return fail(s.lockedBy(holders, mode))
		}
	}
	// The other phase's key is looked up, not tried: a try would hold it
	// for an instant, and the processes of this phase that look at the
	// same moment (the shards of a load, runs side by side) would refuse
	// each other. Each process takes its own key before it looks, so of a
	// load and a run that start together at least one sees the other.
	holders, err := s.holders(ctx, conn, other)
	if err != nil {
		return fail(classify(err))
	}
	if len(holders) > 0 {
		return fail(s.lockedBy(holders, mode))
	}
	s.lockConn.Store(conn)
	return func() {
		if c := s.lockConn.Swap(nil); c != nil {
			cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			// Unlocked before the connection goes: the server frees the
			// locks of a closed connection only when its backend exits,
			// after Close has returned.
			c.Exec(cctx, "SELECT pg_advisory_unlock_all()")
			c.Close(cctx)
		}
	}, nil
}

// holders names the other sessions that hold the advisory lock key, in
// any mode.
func (s *Store) holders(ctx context.Context, conn *pgx.Conn, key int64) ([]string, error) {
	u := uint64(key)
	rows, err := conn.Query(ctx, `SELECT coalesce(a.application_name, ''), l.pid, coalesce(host(a.client_addr), 'a local socket'), coalesce(a.usename::text, '')
		FROM pg_locks l LEFT JOIN pg_stat_activity a ON a.pid = l.pid
		WHERE l.locktype = 'advisory' AND l.granted AND l.classid::bigint = $1 AND l.objid::bigint = $2 AND l.objsubid = 1 AND l.pid <> pg_backend_pid()`,
		int64(u>>32), int64(u&0xffffffff))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var holders []string
	for rows.Next() {
		var app, client, user string
		var pid int32
		if err := rows.Scan(&app, &pid, &client, &user); err != nil {
			return nil, err
		}
		if strings.HasPrefix(app, "linkbench ") {
			holders = append(holders, app)
		} else {
			holders = append(holders, fmt.Sprintf("a session of user %q from %s (server pid %d)", user, client, pid))
		}
	}
	return holders, rows.Err()
}

// lockedBy is the error of a lock refused because the holders hold its
// key (none named: they let go before they were looked up).
func (s *Store) lockedBy(holders []string, mode store.LockMode) error {
	if len(holders) == 0 {
		holders = []string{"another session"}
	}
	return &store.LockedError{Where: fmt.Sprintf("schema %s of database %s at %s", s.schema, s.db, s.addr), Holder: strings.Join(holders, "; "), Mode: mode}
}
