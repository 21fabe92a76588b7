package postgres

import (
	"context"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/linkbench/linkbench/internal/store"
)

// conns is where a request statement gets its connection: the pool (the
// Store) or the one a session keeps.
type conns interface {
	get(ctx context.Context) (*pgxpool.Conn, error)
	put(c *pgxpool.Conn)
}

// pooled takes a connection from the pool for each statement.
type pooled struct{ pool *pgxpool.Pool }

func (p pooled) get(ctx context.Context) (*pgxpool.Conn, error) { return p.pool.Acquire(ctx) }
func (p pooled) put(c *pgxpool.Conn)                            { c.Release() }

// held keeps one connection of the pool between statements; one that broke
// or was left mid-statement goes back (the pool destroys it) and the next
// statement takes another.
type held struct {
	pool *pgxpool.Pool
	c    *pgxpool.Conn
}

func (h *held) get(ctx context.Context) (*pgxpool.Conn, error) {
	if h.c == nil {
		c, err := h.pool.Acquire(ctx)
		if err != nil {
			return nil, err
		}
		h.c = c
	}
	return h.c, nil
}

func (h *held) put(c *pgxpool.Conn) {
	if pc := c.Conn().PgConn(); pc.IsClosed() || pc.IsBusy() || pc.TxStatus() != 'I' {
		h.drop()
	}
}

func (h *held) drop() {
	if h.c != nil {
		h.c.Release()
		h.c = nil
	}
}

// Session implements store.Sessioner: a copy of the store whose request
// statements run on one held connection, or with pg_write_connection =
// own its reads on one and its writes on a second. Its Close gives them
// back and leaves the store open. Its list reads reuse one buffer for the
// rows' data (store.Sessioner allows it): a list of the hot ids' 10,000
// rows copies about 230 KB, and a new buffer for each made the collector
// run several times a second at 4 requesters (docs/performance.md).
func (s *Store) Session() store.Store {
	c := *s
	c.conns = &held{pool: s.pool}
	c.wconns = c.conns
	if s.ownWrite {
		c.wconns = &held{pool: s.pool}
	}
	c.listBuf = new([]byte)
	return &c
}
