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
	write, multiget, list, count, addNode, getNode, updNode, delNode stmt
	// The write function's statements, for link writes sent from the
	// client (pg_write_function = false).
	begin, commit, readLink, readVis, insLink, updLink, hideLink, delLink, upsertCount stmt
}

func (s *Store) buildQueries() queries {
	t := s.t
	return queries{
		write:    stmt{"lb_write", "SELECT " + s.writeFunc() + "($1, $2, $3, $4, $5, $6, $7, $8, $9)"},
		multiget: stmt{"lb_multiget", "SELECT id2, visibility, data, time, version FROM " + t.Link + " WHERE link_type = $1 AND id1 = $2 AND id2 = ANY($3)"},
		list: stmt{"lb_list", "SELECT id2, data, time, version FROM " + t.Link +
			" WHERE id1 = $1 AND link_type = $2 AND visibility = 1 AND time >= $3 AND time <= $4 ORDER BY time DESC, id2 DESC LIMIT $5 OFFSET $6"},
		count:   stmt{"lb_count", "SELECT count FROM " + t.Count + " WHERE id = $1 AND link_type = $2"},
		addNode: stmt{"lb_add_node", "INSERT INTO " + t.Node + " (type, version, time, data) VALUES ($1, $2, $3, $4) RETURNING id"},
		getNode: stmt{"lb_get_node", "SELECT version, time, data FROM " + t.Node + " WHERE id = $1 AND type = $2"},
		updNode: stmt{"lb_update_node", "UPDATE " + t.Node + " SET version = $1, time = $2, data = $3 WHERE id = $4 AND type = $5"},
		delNode: stmt{"lb_delete_node", "DELETE FROM " + t.Node + " WHERE id = $1 AND type = $2"},

		begin:    stmt{"lb_begin", "BEGIN"},
		commit:   stmt{"lb_commit", "COMMIT"},
		readLink: stmt{"lb_read_link", "SELECT visibility, data, time, version FROM " + t.Link + " WHERE link_type = $1 AND id1 = $2 AND id2 = $3 FOR UPDATE"},
		readVis:  stmt{"lb_read_visibility", "SELECT visibility FROM " + t.Link + " WHERE link_type = $1 AND id1 = $2 AND id2 = $3 FOR UPDATE"},
		insLink: stmt{"lb_insert_link", "INSERT INTO " + t.Link + " (id1, id2, link_type, visibility, data, time, version) VALUES ($1, $2, $3, $4, $5, $6, $7)" +
			" ON CONFLICT DO NOTHING"},
		updLink:  stmt{"lb_update_link", "UPDATE " + t.Link + " SET visibility = $1, data = $2, time = $3, version = $4 WHERE link_type = $5 AND id1 = $6 AND id2 = $7"},
		hideLink: stmt{"lb_hide_link", "UPDATE " + t.Link + " SET visibility = 0 WHERE link_type = $1 AND id1 = $2 AND id2 = $3"},
		delLink:  stmt{"lb_delete_link", "DELETE FROM " + t.Link + " WHERE link_type = $1 AND id1 = $2 AND id2 = $3"},
		upsertCount: stmt{"lb_upsert_count", "INSERT INTO " + t.Count + " AS c (id, link_type, count, time, version) VALUES ($1, $2, GREATEST($3, 0), $4, 1)" +
			" ON CONFLICT (id, link_type) DO UPDATE SET count = GREATEST(c.count + $3, 0), time = $4, version = c.version + 1"},
	}
}

// arg is one parameter: an integer, a byte string or a list of ids.
type arg struct {
	n    int64
	b    []byte
	ids  []int64
	kind uint8
}

const (
	argInt = iota
	argBytes
	argIDs
)

func num(n int64) arg      { return arg{n: n} }
func blob(b []byte) arg    { return arg{b: b, kind: argBytes} }
func idList(v []int64) arg { return arg{ids: v, kind: argIDs} }

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
		case argIDs:
			if oids[i] != pgtype.Int8ArrayOID {
				err = fmt.Errorf("parameter %d has type oid %d, want bigint[]", i+1, oids[i])
				break
			}
			sc.buf = appendIDArray(sc.buf, a.ids)
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

// appendIDArray encodes a one-dimensional bigint[] without NULLs.
func appendIDArray(b []byte, ids []int64) []byte {
	b = binary.BigEndian.AppendUint32(b, 1) // dimensions
	b = binary.BigEndian.AppendUint32(b, 0) // no NULLs
	b = binary.BigEndian.AppendUint32(b, pgtype.Int8OID)
	b = binary.BigEndian.AppendUint32(b, uint32(len(ids)))
	b = binary.BigEndian.AppendUint32(b, 1) // lower bound
	for _, id := range ids {
		b = binary.BigEndian.AppendUint32(b, 8)
		b = binary.BigEndian.AppendUint64(b, uint64(id))
	}
	return b
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

// direct runs st as run does without a first statement, writing its
// Bind, Execute and Sync with the connection's protocol layer and reading
// the answer up to ReadyForQuery itself: pgconn's result reader, its
// guard against a write that blocks (a timer set and stopped around every
// flush) and its command tag (a string made for every statement) cost
// the driver more CPU per request than the protocol's work, and none of
// them is needed by a single autocommit statement of a few hundred bytes
// on a connection that is not watched for ctx (armed). The connection's
// state is left as pgconn's would be: idle, or closed (and so dropped by
// the pool) when the answer could not be read to its end.
func direct(ctx context.Context, c *pgxpool.Conn, st *stmt, args []arg, each func(row) error) (int64, error) {
	sc := scratches.Get().(*scratch)
	defer scratches.Put(sc)
	sd, vals, err := prepared(ctx, c, st, args, sc)
	if err != nil {
		return 0, err
	}
	pc := c.Conn().PgConn()
	fe := pc.Frontend()
	fe.SendBind(&pgproto3.Bind{PreparedStatement: sd.Name, ParameterFormatCodes: binary9[:len(vals)], Parameters: vals, ResultFormatCodes: binary9[:len(sd.Fields)]})
	fe.SendExecute(&pgproto3.Execute{})
	fe.SendSync(&pgproto3.Sync{})
	if err := fe.Flush(); err != nil {
		return 0, broken(pc, err)
	}
	var (
		n      int64
		failed error // the first error of the statement, reported once ReadyForQuery came
		r      = row{fds: sd.Fields}
	)
	for {
		msg, err := fe.Receive()
		if err != nil {
			return 0, broken(pc, errors.Join(failed, err))
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
			return n, failed
		case *pgproto3.BindComplete, *pgproto3.EmptyQueryResponse, *pgproto3.NoticeResponse, *pgproto3.ParameterStatus, *pgproto3.NotificationResponse:
		default:
			return 0, broken(pc, fmt.Errorf("%s: the server sent an unexpected %T", st.name, msg))
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

// link reads id2 from column id2c and data, time and version from
// columns rest, rest+1 and rest+2 of r.
func (r row) link(id2c, rest int, l *graph.Link, data *store.ListData) error {
	id2, err := r.int(id2c)
	if err != nil {
		return err
	}
	d, err := r.bytes(rest)
	if err != nil {
		return err
	}
	tm, err := r.int(rest + 1)
	if err != nil {
		return err
	}
	ver, err := r.int(rest + 2)
	if err != nil {
		return err
	}
	l.ID2, l.Time, l.Version, l.Data = id2, tm, int32(ver), data.Add(d)
	return nil
}
