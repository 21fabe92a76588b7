package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/linkbench/linkbench/internal/graph"
	"github.com/linkbench/linkbench/internal/store"
	"github.com/linkbench/linkbench/internal/store/sqlstore"
)

func nowMs() int64 { return time.Now().UnixMilli() }

func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// write runs one link write: mode 0 upsert inserting first, 1 hide, 2
// expunge, upsertReadFirst upsert reading first. It returns 0 unchanged /
// 1 inserted / 2 updated for upserts, 0 absent / 1 existed for deletes.
func (s *Store) write(ctx context.Context, id1, lt, id2 int64, vis uint8, data []byte, tm int64, ver int32, mode int) (int, error) {
	if !s.useFunc {
		l := graph.Link{ID1: id1, LinkType: lt, ID2: id2, Visibility: vis, Data: data, Time: tm, Version: ver}
		res, err := s.clientWrite(ctx, &l, mode)
		return res, classify(err)
	}
	res := -1
	_, err := exec(ctx, s.wconns, &s.q.write, []arg{num(id1), num(lt), num(id2), num(int64(vis)), blob(data), num(tm), num(int64(ver)), num(nowMs()), num(int64(mode))},
		func(r row) (err error) {
			var n int64
			n, err = r.int(0)
			res = int(n)
			return err
		})
	if err == nil && (res < 0 || res > 2) {
		err = fmt.Errorf("%s returned %d, want 0, 1 or 2", s.writeFunc(), res)
	}
	return res, classify(err)
}

// clientWrite is write as a client transaction of the write function's
// statements, in its order (pg_write_function = false): the link row read
// for update or inserted first, then written, the count row upserted last,
// then COMMIT; one round trip each, BEGIN sent with the first. A failed
// transaction is rolled back on its connection, which stays usable.
func (s *Store) clientWrite(ctx context.Context, l *graph.Link, mode int) (res int, err error) {
	c, err := s.wconns.get(ctx)
	if err != nil {
		return 0, err
	}
	defer s.wconns.put(c)
	// Deferred before the arming below, so it runs once the connection is
	// disarmed again.
	defer func() {
		if pc := c.Conn().PgConn(); err != nil && !pc.IsClosed() && pc.TxStatus() != 'I' {
			rctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			if _, rerr := pc.Exec(rctx, "ROLLBACK").ReadAll(); rerr != nil {
				pc.Close(rctx) // the pool replaces it
			}
			cancel()
		}
	}()
	ectx, ic, err := armed(ctx, c)
	if err != nil {
		return 0, err
	}
	if ic != nil {
		defer ic.Disarm()
	}
	begin := &s.q.begin
	do := func(st *stmt, args []arg, each func(row) error) (pgconn.CommandTag, error) {
		tag, err := run(ctx, ectx, c, begin, st, args, each)
		begin = nil
		return tag, err
	}
	res, err = s.linkStatements(l, mode, do)
	if err == nil {
		_, err = do(&s.q.commit, nil, nil)
	}
	return res, err
}

// linkStatements are clientWrite's statements but COMMIT
// (sqlstore.WriteLink), each run by do.
func (s *Store) linkStatements(l *graph.Link, mode int, do func(*stmt, []arg, func(row) error) (pgconn.CommandTag, error)) (int, error) {
	key := []arg{num(l.LinkType), num(l.ID1), num(l.ID2)}
	upsert := mode == 0 || mode == upsertReadFirst
	// A delete reads the visibility alone, as the reference's does.
	rd := &s.q.readVis
	wm := graph.WriteMode(mode) // 1 hide, 2 expunge
	if upsert {
		rd, wm = &s.q.readLink, graph.WriteUpsert
	}
	exec := func(st *stmt, args ...arg) error {
		_, err := do(st, args, nil)
		return err
	}
	return sqlstore.WriteLink(sqlstore.LinkSteps{
		Read: func() (old graph.Link, found bool, err error) {
			_, err = do(rd, key, func(r row) error {
				vis, err := r.int(0)
				if err != nil || !upsert {
					old.Visibility, found = uint8(vis), err == nil
					return err
				}
				d, err := r.bytes(1)
				if err != nil {
					return err
				}
				tm, err := r.int(2)
				if err != nil {
					return err
				}
				ver, err := r.int(3)
				old, found = graph.Link{Visibility: uint8(vis), Data: append([]byte{}, d...), Time: tm, Version: int32(ver)}, true
				return err
			})
			return old, found, err
		},
		Insert: func() (bool, error) {
			tag, err := do(&s.q.insLink, []arg{num(l.ID1), num(l.ID2), num(l.LinkType), num(int64(l.Visibility)), blob(l.Data), num(l.Time), num(int64(l.Version))}, nil)
			// ON CONFLICT DO NOTHING inserts no row when the key exists (or
			// a concurrent insert of it committed first).
			return err == nil && tag.RowsAffected() == 0, err
		},
		Update: func() error {
			return exec(&s.q.updLink, num(int64(l.Visibility)), blob(l.Data), num(l.Time), num(int64(l.Version)), key[0], key[1], key[2])
		},
		Hide:    func() error { return exec(&s.q.hideLink, key...) },
		Expunge: func() error { return exec(&s.q.delLink, key...) },
		Count: func(delta int64) error {
			return exec(&s.q.upsertCount, num(l.ID1), num(l.LinkType), num(delta), num(nowMs()))
		},
	}, l, wm, mode == upsertReadFirst)
}

// upsertReadFirst is the write function's mode for UPDATE_LINK, which
// reads the link before writing it; 0 inserts first, as ADD_LINK does.
const upsertReadFirst = 3

func (s *Store) upsert(ctx context.Context, l *graph.Link, mode int) (graph.WriteResult, error) {
	res, err := s.write(ctx, l.ID1, l.LinkType, l.ID2, l.Visibility, l.Data, l.Time, l.Version, mode)
	if err != nil {
		return 0, fmt.Errorf("write link %d/%d/%d: %w", l.ID1, l.LinkType, l.ID2, err)
	}
	return [...]graph.WriteResult{graph.Unchanged, graph.Inserted, graph.Updated}[res], nil
}

// AddLink implements store.Store.
func (s *Store) AddLink(ctx context.Context, l *graph.Link) (graph.WriteResult, error) {
	return s.upsert(ctx, l, 0)
}

// UpdateLink implements store.Store.
func (s *Store) UpdateLink(ctx context.Context, l *graph.Link) (graph.WriteResult, error) {
	return s.upsert(ctx, l, upsertReadFirst)
}

// DeleteLink implements store.Store.
func (s *Store) DeleteLink(ctx context.Context, id1, lt, id2 int64, expunge bool) (bool, error) {
	mode := 1
	if expunge {
		mode = 2
	}
	res, err := s.write(ctx, id1, lt, id2, 0, nil, 0, 0, mode)
	if err != nil {
		return false, fmt.Errorf("delete link %d/%d/%d: %w", id1, lt, id2, err)
	}
	return res == 1, nil
}

// MultigetLinks implements store.Store.
func (s *Store) MultigetLinks(ctx context.Context, id1, lt int64, id2s []int64, dst []graph.Link) ([]graph.Link, error) {
	if len(id2s) == 0 {
		return dst, nil
	}
	var data store.ListData
	_, err := exec(ctx, s.conns, &s.q.multiget, []arg{num(lt), num(id1), idList(id2s)}, func(r row) error {
		l := graph.Link{ID1: id1, LinkType: lt}
		vis, err := r.int(1)
		if err != nil {
			return err
		}
		l.Visibility = uint8(vis)
		if err := r.link(0, 2, &l, &data); err != nil {
			return err
		}
		dst = append(dst, l)
		return nil
	})
	if err != nil {
		return dst, fmt.Errorf("multiget %d/%d: %w", id1, lt, classify(err))
	}
	return dst, nil
}

// GetLinkList implements store.Store.
func (s *Store) GetLinkList(ctx context.Context, q graph.ListQuery, dst []graph.Link) ([]graph.Link, error) {
	limit := q.Limit
	if limit <= 0 {
		limit = graph.DefaultListLimit
	}
	data := store.ListDataFrom(s.listBuf)
	_, err := exec(ctx, s.conns, &s.q.list, []arg{num(q.ID1), num(q.LinkType), num(q.MinTime), num(q.MaxTime), num(int64(limit)), num(int64(max(q.Offset, 0)))},
		func(r row) error {
			l := graph.Link{ID1: q.ID1, LinkType: q.LinkType, Visibility: graph.VisibilityDefault}
			if err := r.link(0, 1, &l, &data); err != nil {
				return err
			}
			dst = append(dst, l)
			return nil
		})
	data.Keep(s.listBuf)
	if err != nil {
		return dst, fmt.Errorf("list %d/%d: %w", q.ID1, q.LinkType, classify(err))
	}
	return dst, nil
}

// CountLinks implements store.Store.
func (s *Store) CountLinks(ctx context.Context, id1, lt int64) (int64, error) {
	var n int64
	_, err := exec(ctx, s.conns, &s.q.count, []arg{num(id1), num(lt)}, func(r row) (err error) {
		n, err = r.int(0)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("count %d/%d: %w", id1, lt, classify(err))
	}
	return n, nil
}

// AddNode implements store.Store.
func (s *Store) AddNode(ctx context.Context, n *graph.Node) (int64, error) {
	id := int64(-1)
	_, err := exec(ctx, s.wconns, &s.q.addNode, []arg{num(int64(n.Type)), num(n.Version), num(int64(n.Time)), blob(n.Data)}, func(r row) (err error) {
		id, err = r.int(0)
		return err
	})
	if err == nil && id < 0 {
		err = errors.New("the insert returned no id")
	}
	if err != nil {
		return 0, fmt.Errorf("add node: %w", classify(err))
	}
	return id, nil
}

// GetNode implements store.Store.
func (s *Store) GetNode(ctx context.Context, nodeType int32, id int64) (graph.Node, bool, error) {
	n := graph.Node{ID: id, Type: nodeType}
	found := false
	// A session copies the data into its lists' buffer (store.Sessioner).
	data := store.ListDataFrom(s.listBuf)
	defer data.Keep(s.listBuf)
	_, err := exec(ctx, s.conns, &s.q.getNode, []arg{num(id), num(int64(nodeType))}, func(r row) error {
		var err error
		if n.Version, err = r.int(0); err != nil {
			return err
		}
		tm, err := r.int(1)
		if err != nil {
			return err
		}
		n.Time = int32(tm)
		d, err := r.bytes(2)
		if err != nil {
			return err
		}
		n.Data, found = data.Add(d), true
		return nil
	})
	if err != nil {
		return graph.Node{}, false, fmt.Errorf("get node %d: %w", id, classify(err))
	}
	if !found {
		return graph.Node{}, false, nil
	}
	return n, true, nil
}

// UpdateNode implements store.Store.
func (s *Store) UpdateNode(ctx context.Context, n *graph.Node) (bool, error) {
	rows, err := exec(ctx, s.wconns, &s.q.updNode, []arg{num(n.Version), num(int64(n.Time)), blob(n.Data), num(n.ID), num(int64(n.Type))}, nil)
	if err != nil {
		return false, fmt.Errorf("update node %d: %w", n.ID, classify(err))
	}
	return rows > 0, nil
}

// DeleteNode implements store.Store.
func (s *Store) DeleteNode(ctx context.Context, nodeType int32, id int64) (bool, error) {
	rows, err := exec(ctx, s.wconns, &s.q.delNode, []arg{num(id), num(int64(nodeType))}, nil)
	if err != nil {
		return false, fmt.Errorf("delete node %d: %w", id, classify(err))
	}
	return rows > 0, nil
}
