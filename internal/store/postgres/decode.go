package postgres

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/linkbench/linkbench/internal/graph"
	"github.com/linkbench/linkbench/internal/store"
	"github.com/linkbench/linkbench/internal/store/netconn"
)

// The request phase's statements run below pgx's query layer: each is
// prepared on a connection under its own name the first time that
// connection runs it, its parameters are encoded in binary for the types
// the server gave them, and rows are decoded from their wire bytes. pgx's
// Query and Scan (a query builder, a type map and a scan plan per value)
// cost more driver CPU per request than the server spends on a primary-key
// read; this path does only the protocol's work.

// stmt is one request-phase statement.
type stmt struct{ name, sql string }

type queries struct {
	list, count, addNode, getNode, updNode, delNode stmt
	// A link write's statements, as the reference's store sends them
	// (link_writes = reference), or the write function's call (routine).
	begin, commit, rollback, readVis, insLink, addCount, updLink, hideLink, delLink, incCount, write stmt
}

// buildQueries are the reference's request statements (LinkStoreSql and
// LinkStorePgsql), with the store's quoted table names. They differ from
// its texts in what the server cannot tell apart, and in one thing it can:
// the list's ORDER BY names id2 after time, so that links of one time come
// in one order (the SPEC's); the index the list reads gives both orders,
// and the plan is the same. The count upsert names its conflict by its
// columns rather than by the name the reference's DDL gives the primary
// key.
func (s *Store) buildQueries() queries {
	t := s.t
	return queries{
		list: stmt{"lb_list", "SELECT id1, id2, link_type, visibility, data, version, time FROM " + t.Link +
			" WHERE id1 = $1 AND link_type = $2 AND time >= $3 AND time <= $4 AND visibility = 1 ORDER BY time DESC, id2 DESC LIMIT $5 OFFSET $6"},
		count:   stmt{"lb_count", "SELECT count FROM " + t.Count + " WHERE id = $1 AND link_type = $2"},
		addNode: stmt{"lb_add_node", "INSERT INTO " + t.Node + " (type, version, time, data) VALUES ($1, $2, $3, $4) RETURNING *"},
		getNode: stmt{"lb_get_node", "SELECT id, type, version, time, data FROM " + t.Node + " WHERE id = $1"},
		updNode: stmt{"lb_update_node", "UPDATE " + t.Node + " SET version = $1, time = $2, data = $3 WHERE id = $4 AND type = $5"},
		delNode: stmt{"lb_delete_node", "DELETE FROM " + t.Node + " WHERE id = $1 AND type = $2"},

		begin:    stmt{"lb_begin", "BEGIN"},
		commit:   stmt{"lb_commit", "COMMIT"},
		rollback: stmt{"lb_rollback", "ROLLBACK"},
		readVis:  stmt{"lb_read_visibility", "SELECT visibility FROM " + t.Link + " WHERE id1 = $1 AND id2 = $2 AND link_type = $3 FOR UPDATE"},
		insLink:  stmt{"lb_insert_link", "INSERT INTO " + t.Link + " (id1, id2, link_type, visibility, data, version, time) VALUES ($1, $2, $3, $4, $5, $6, $7)"},
		addCount: stmt{"lb_add_count", "INSERT INTO " + t.Count + " AS c (id, link_type, count, time, version) VALUES ($1, $2, $3, $4, 0)" +
			" ON CONFLICT (id, link_type) DO UPDATE SET count = c.count + $5, version = c.version + 1, time = $6"},
		updLink:  stmt{"lb_update_link", "UPDATE " + t.Link + " SET visibility = $1, data = $2, version = $3, time = $4 WHERE id1 = $5 AND id2 = $6 AND link_type = $7"},
		hideLink: stmt{"lb_hide_link", "UPDATE " + t.Link + " SET visibility = 0 WHERE id1 = $1 AND id2 = $2 AND link_type = $3"},
		delLink:  stmt{"lb_delete_link", "DELETE FROM " + t.Link + " WHERE id1 = $1 AND id2 = $2 AND link_type = $3"},
		incCount: stmt{"lb_inc_count", "UPDATE " + t.Count + " SET count = count + $1, version = version + 1, time = $2 WHERE id = $3 AND link_type = $4"},
		write:    stmt{"lb_write", "SELECT " + s.writeFunc() + "($1, $2, $3, $4, $5, $6, $7, $8, $9)"},
	}
}

// arg is one parameter: an integer, a byte string or a list of ids.
type arg struct {
	n    int64
	b    []byte
	kind uint8
}

const (
	argInt = iota
	argBytes
)

func num(n int64) arg   { return arg{n: n} }
func blob(b []byte) arg { return arg{b: b, kind: argBytes} }

// maxArgs is the most parameters a request statement has (the link write).
const maxArgs = 9

// binary is the format code of every parameter and result column.
var binary9 = []int16{1, 1, 1, 1, 1, 1, 1, 1, 1}

// scratch holds one call's encoded parameters; pooled, so a request
// allocates nothing for them.
type scratch struct {
	vals [maxArgs][]byte
	buf  []byte
}

var scratches = sync.Pool{New: func() any { return &scratch{buf: make([]byte, 0, 256)} }}

// encode writes args in binary for the parameter types oids.
func (sc *scratch) encode(oids []uint32, args []arg) ([][]byte, error) {
	if len(oids) != len(args) {
		return nil, fmt.Errorf("the server expects %d parameters, linkbench sends %d", len(oids), len(args))
	}
	sc.buf = sc.buf[:0]
	var ends [maxArgs]int
	for i, a := range args {
		var err error
		switch a.kind {
		case argInt:
			sc.buf, err = appendInt(sc.buf, oids[i], a.n)
		case argBytes:
			if oids[i] != pgtype.ByteaOID {
				err = fmt.Errorf("parameter %d has type oid %d, want bytea", i+1, oids[i])
			}
		}
		if err != nil {
			return nil, err
		}
		ends[i] = len(sc.buf)
	}
	// Slice only now: appends above may have moved the buffer.
	start := 0
	for i, a := range args {
		if a.kind == argBytes {
			sc.vals[i] = a.b
			if sc.vals[i] == nil {
				sc.vals[i] = []byte{} // NULL is not an empty payload
			}
		} else {
			sc.vals[i] = sc.buf[start:ends[i]:ends[i]]
		}
		start = ends[i]
	}
	return sc.vals[:len(args)], nil
}

func appendInt(b []byte, oid uint32, n int64) ([]byte, error) {
	switch oid {
	case pgtype.Int8OID:
		return binary.BigEndian.AppendUint64(b, uint64(n)), nil
	case pgtype.Int4OID:
		if n < math.MinInt32 || n > math.MaxInt32 {
			return b, fmt.Errorf("%d does not fit the integer column", n)
		}
		return binary.BigEndian.AppendUint32(b, uint32(int32(n))), nil
	case pgtype.Int2OID:
		if n < math.MinInt16 || n > math.MaxInt16 {
			return b, fmt.Errorf("%d does not fit the smallint column", n)
		}
		return binary.BigEndian.AppendUint16(b, uint16(int16(n))), nil
	}
	return b, fmt.Errorf("a parameter has type oid %d; linkbench sends smallint, integer or bigint", oid)
}

// row is one result row: its values in binary and their columns.
type row struct {
	v   [][]byte
	fds []pgconn.FieldDescription
}

// int reads integer column i (smallint, integer or bigint).
func (r row) int(i int) (int64, error) {
	v, fd := r.v[i], r.fds[i]
	switch {
	case fd.DataTypeOID == pgtype.Int8OID && len(v) == 8:
		return int64(binary.BigEndian.Uint64(v)), nil
	case fd.DataTypeOID == pgtype.Int4OID && len(v) == 4:
		return int64(int32(binary.BigEndian.Uint32(v))), nil
	case fd.DataTypeOID == pgtype.Int2OID && len(v) == 2:
		return int64(int16(binary.BigEndian.Uint16(v))), nil
	}
	return 0, fmt.Errorf("column %s: type oid %d with %d bytes; linkbench reads smallint, integer or bigint", fd.Name, fd.DataTypeOID, len(v))
}

// bytes reads bytea column i; the slice is only valid until the next row.
func (r row) bytes(i int) ([]byte, error) {
	if r.fds[i].DataTypeOID != pgtype.ByteaOID || r.v[i] == nil {
		return nil, fmt.Errorf("column %s: type oid %d; linkbench reads a non-NULL bytea", r.fds[i].Name, r.fds[i].DataTypeOID)
	}
	return r.v[i], nil
}

// exec runs st with args on a connection of cs, calling each (when
// not nil) for every row, and returns the rows it affected (or returned).
// On a connection that needs no watching of ctx (a blocking one, armed,
// or ctx that cannot end) the statement goes through direct.
func exec(ctx context.Context, cs conns, st *stmt, args []arg, each func(row) error) (int64, error) {
	c, err := cs.get(ctx)
	if err != nil {
		return 0, err
	}
	defer cs.put(c)
	ectx, ic, err := armed(ctx, c)
	if err != nil {
		return 0, err
	}
	if ic != nil {
		defer ic.Disarm()
	}
	if ic != nil || ctx.Done() == nil {
		return direct(ctx, c, st, args, each)
	}
	tag, err := run(ctx, ectx, c, nil, st, args, each)
	return tag.RowsAffected(), err
}

// unprepared runs text, a statement without parameters, on a connection
// of cs as pgconn's unnamed statement (parsed and planned by the server
// each time, as a JDBC driver runs a statement it does not prepare),
// calling each for every row, its columns in binary.
func unprepared(ctx context.Context, cs conns, text string, each func(row) error) error {
	c, err := cs.get(ctx)
	if err != nil {
		return err
	}
	defer cs.put(c)
	ectx, ic, err := armed(ctx, c)
	if err != nil {
		return err
	}
	if ic != nil {
		defer ic.Disarm()
	}
	rr := c.Conn().PgConn().ExecParams(ectx, text, nil, nil, nil, binary9[:1])
	var r row
	for rr.NextRow() {
		r.v, r.fds = rr.Values(), rr.FieldDescriptions()
		if err := each(r); err != nil {
			rr.Close()
			return err
		}
	}
	_, err = rr.Close()
	return err
}

// direct runs st as run does without a first statement, writing its
// Bind, Execute and Sync with the connection's protocol layer and reading
// the answer up to ReadyForQuery itself: pgconn's result reader, its
// guard against a write that blocks (a timer set and stopped around every
// flush) and its command tag (a string made for every statement) cost
// the driver more CPU per request than the protocol's work, and none of
// them is needed by a single statement of a few hundred bytes on a
// connection that is not watched for ctx (armed). The connection's state
// is left as pgconn's would be: idle, or closed (and so dropped by the
// pool) when the answer could not be read to its end.
func direct(ctx context.Context, c *pgxpool.Conn, st *stmt, args []arg, each func(row) error) (int64, error) {
	n, _, err := directTx(ctx, c, nil, st, args, each)
	return n, err
}

// directTx is direct with first (no parameters, no rows: BEGIN) sent
// before st when not nil, in the same message, as run sends it. It also
// returns the transaction status of the server's ReadyForQuery ('I' idle,
// 'T' in a transaction, 'E' in a failed one; 0 when the answer was not
// read): pgconn, which did not read it, still holds the one before.
func directTx(ctx context.Context, c *pgxpool.Conn, first, st *stmt, args []arg, each func(row) error) (int64, byte, error) {
	sc := scratches.Get().(*scratch)
	defer scratches.Put(sc)
	var fd *pgconn.StatementDescription
	if first != nil {
		var err error
		if fd, err = c.Conn().Prepare(ctx, first.name, first.sql); err != nil {
			return 0, 0, err
		}
	}
	sd, vals, err := prepared(ctx, c, st, args, sc)
	if err != nil {
		return 0, 0, err
	}
	pc := c.Conn().PgConn()
	fe := pc.Frontend()
	if fd != nil {
		fe.SendBind(&pgproto3.Bind{PreparedStatement: fd.Name})
		fe.SendExecute(&pgproto3.Execute{})
	}
	fe.SendBind(&pgproto3.Bind{PreparedStatement: sd.Name, ParameterFormatCodes: binary9[:len(vals)], Parameters: vals, ResultFormatCodes: binary9[:len(sd.Fields)]})
	fe.SendExecute(&pgproto3.Execute{})
	fe.SendSync(&pgproto3.Sync{})
	if err := fe.Flush(); err != nil {
		return 0, 0, broken(pc, err)
	}
	var (
		n      int64
		failed error // the first error of the statement, reported once ReadyForQuery came
		r      = row{fds: sd.Fields}
	)
	for {
		msg, err := fe.Receive()
		if err != nil {
			return 0, 0, broken(pc, errors.Join(failed, err))
		}
		switch msg := msg.(type) {
		case *pgproto3.DataRow:
			if each != nil && failed == nil {
				r.v = msg.Values
				failed = each(r)
			}
		case *pgproto3.CommandComplete:
			n = rowsAffected(msg.CommandTag)
		case *pgproto3.ErrorResponse:
			if failed == nil {
				failed = pgconn.ErrorResponseToPgError(msg)
			}
		case *pgproto3.ReadyForQuery:
			return n, msg.TxStatus, failed
		case *pgproto3.BindComplete, *pgproto3.EmptyQueryResponse, *pgproto3.NoticeResponse, *pgproto3.ParameterStatus, *pgproto3.NotificationResponse:
		default:
			return 0, 0, broken(pc, fmt.Errorf("%s: the server sent an unexpected %T", st.name, msg))
		}
	}
}

// prepared is st prepared on c (once per connection) and args encoded
// into sc for its parameter types.
func prepared(ctx context.Context, c *pgxpool.Conn, st *stmt, args []arg, sc *scratch) (*pgconn.StatementDescription, [][]byte, error) {
	sd, err := c.Conn().Prepare(ctx, st.name, st.sql)
	if err != nil {
		return nil, nil, err
	}
	vals, err := sc.encode(sd.ParamOIDs, args)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", st.name, err)
	}
	return sd, vals, nil
}

// broken closes pc, whose answer could not be read to its end, so the
// pool drops it, and returns err.
func broken(pc *pgconn.PgConn, err error) error {
	pc.Conn().Close() // the Terminate that Close sends then fails at once
	pc.Close(context.Background())
	return err
}

// rowsAffected is the count at the end of a command tag ("UPDATE 1",
// "INSERT 0 1", "SELECT 10"), 0 when it has none.
func rowsAffected(tag []byte) int64 {
	i := len(tag)
	for i > 0 && tag[i-1] >= '0' && tag[i-1] <= '9' {
		i--
	}
	if i == len(tag) || i == 0 || tag[i-1] != ' ' {
		return 0
	}
	var n int64
	for _, d := range tag[i:] {
		n = n*10 + int64(d-'0')
	}
	return n
}

// armed is the context to run statements on c with. A blocking
// connection watches ctx itself (at its tick, as it does the deadline pgx
// would set on cancellation), so pgconn is given a context it need not
// watch; the connection is returned armed, for the caller to disarm.
func armed(ctx context.Context, c *pgxpool.Conn) (context.Context, netconn.Interruptible, error) {
	ic, ok := c.Conn().PgConn().Conn().(netconn.Interruptible)
	if !ok || ctx.Done() == nil {
		return ctx, nil, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	ic.Arm(ctx.Done())
	return context.Background(), ic, nil
}

// run runs st with args on c, as exec does; ectx is the context of its
// execution (armed). With first not nil, first (no parameters, no rows:
// BEGIN) is sent in the same message, as a JDBC driver sends a
// transaction's BEGIN with its first statement.
func run(ctx, ectx context.Context, c *pgxpool.Conn, first, st *stmt, args []arg, each func(row) error) (pgconn.CommandTag, error) {
	sc := scratches.Get().(*scratch)
	defer scratches.Put(sc)
	sd, vals, err := prepared(ctx, c, st, args, sc)
	if err != nil {
		return pgconn.CommandTag{}, err
	}
	pc := c.Conn().PgConn()
	var (
		rr  *pgconn.ResultReader
		mrr *pgconn.MultiResultReader
	)
	if first != nil {
		fd, err := c.Conn().Prepare(ctx, first.name, first.sql)
		if err != nil {
			return pgconn.CommandTag{}, err
		}
		var b pgconn.Batch
		b.ExecStatement(fd, nil, nil, nil)
		b.ExecStatement(sd, vals, binary9[:len(vals)], binary9[:len(sd.Fields)])
		mrr = pc.ExecBatch(ectx, &b)
		for i := range 2 {
			if !mrr.NextResult() {
				return pgconn.CommandTag{}, errors.Join(mrr.Close(), fmt.Errorf("%s: the server sent %d results of 2", st.name, i))
			}
			if i == 0 {
				if _, err := mrr.ResultReader().Close(); err != nil {
					return pgconn.CommandTag{}, errors.Join(err, mrr.Close())
				}
			}
		}
		rr = mrr.ResultReader()
	} else {
		rr = pc.ExecStatement(ectx, sd, vals, binary9[:len(vals)], binary9[:len(sd.Fields)])
	}
	if each != nil {
		r := row{fds: sd.Fields}
		for rr.NextRow() {
			r.v = rr.Values()
			if err := each(r); err != nil {
				rr.Close()
				if mrr != nil {
					mrr.Close()
				}
				return pgconn.CommandTag{}, err
			}
		}
	}
	tag, err := rr.Close()
	if mrr != nil {
		if cerr := mrr.Close(); err == nil {
			err = cerr
		}
	}
	return tag, err
}

// link reads a row of the reference's link columns (id1, id2, link_type,
// visibility, data, version, time) into l, its data added to data.
func (r row) link(l *graph.Link, data *store.ListData) error {
	var vals [7]int64
	for i := range vals {
		if i == 4 {
			continue
		}
		var err error
		if vals[i], err = r.int(i); err != nil {
			return err
		}
	}
	d, err := r.bytes(4)
	if err != nil {
		return err
	}
	l.ID1, l.ID2, l.LinkType, l.Visibility = vals[0], vals[1], vals[2], uint8(vals[3])
	l.Version, l.Time, l.Data = int32(vals[5]), vals[6], data.Add(d)
	return nil
}
