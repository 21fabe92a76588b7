package postgres

import (
	"context"
	"time"

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
// statement takes another. A session's two are linked as siblings, taken
// together: when one is found closed (the
// server restarted, the network failed) the other is closed too, for it
// most likely went the same way and would fail its next statement (the
// pool gives back a connection used a moment ago without a ping), and the
// next statement takes two new ones.
type held struct {
	pool    *pgxpool.Pool
	c       *pgxpool.Conn
	sibling *held
}

func (h *held) get(ctx context.Context) (*pgxpool.Conn, error) {
	if h.c == nil {
		if err := h.acquire(ctx); err != nil {
			return nil, err
		}
		if h.sibling != nil && h.sibling.c == nil {
			if err := h.sibling.acquire(ctx); err != nil {
				h.drop()
				return nil, err
			}
		}
	}
	return h.c, nil
}

func (h *held) acquire(ctx context.Context) error {
	c, err := h.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	h.c = c
	return nil
}

func (h *held) put(c *pgxpool.Conn) {
	pc := c.Conn().PgConn()
	if pc.IsClosed() && h.sibling != nil {
		h.sibling.discard()
	}
	if pc.IsClosed() || pc.IsBusy() || pc.TxStatus() != 'I' {
		h.drop()
	}
}

// discard closes the held connection, so the pool destroys it rather than
// keep it, and lets it go.
func (h *held) discard() {
	if h.c == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	h.c.Conn().Close(ctx)
	cancel()
	h.drop()
}

func (h *held) drop() {
	if h.c != nil {
		h.c.Release()
		h.c = nil
	}
}

// Session implements store.Sessioner: a copy of the store whose request
// statements run on two held connections, as a requester of the
// reference keeps two: its link writes on one, in their transactions (or
// the write function's calls), and everything else on the other,
// autocommit. Its Close gives them back and leaves the store open. Its list reads reuse one buffer for the
// rows' data (store.Sessioner allows it): a list of the hot ids' 10,000
// rows copies about 230 KB, and a new buffer for each made the collector
// run several times a second at 4 requesters (docs/performance.md).
func (s *Store) Session() store.Store {
	c := *s
	r := &held{pool: s.pool}
	w := &held{pool: s.wpool, sibling: r}
	r.sibling = w
	c.conns, c.wconns = r, w
	c.listBuf = new([]byte)
	c.refTx = &refTx{s: &c}
	c.refTx.readRow = c.refTx.readVis
	return &c
}
