package postgres

import (
	"encoding/binary"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/linkbench/linkbench/internal/graph"
)

// The request phase's statements, built once: the same text every call
// also finds pgx's statement cache without building a string.
type queries struct {
	write, multiget, list, count, addNode, getNode, updNode, delNode string
}

func (s *Store) buildQueries() queries {
	t := s.t
	return queries{
		write:    "SELECT " + s.writeFunc() + "($1, $2, $3, $4, $5, $6, $7, $8, $9)",
		multiget: "SELECT id2, visibility, data, time, version FROM " + t.Link + " WHERE link_type = $1 AND id1 = $2 AND id2 = ANY($3)",
		list: "SELECT id2, data, time, version FROM " + t.Link +
			" WHERE id1 = $1 AND link_type = $2 AND visibility = 1 AND time >= $3 AND time <= $4 ORDER BY time DESC, id2 DESC LIMIT $5 OFFSET $6",
		count:   "SELECT count FROM " + t.Count + " WHERE id = $1 AND link_type = $2",
		addNode: "INSERT INTO " + t.Node + " (type, version, time, data) VALUES ($1, $2, $3, $4) RETURNING id",
		getNode: "SELECT version, time, data FROM " + t.Node + " WHERE id = $1 AND type = $2",
		updNode: "UPDATE " + t.Node + " SET version = $1, time = $2, data = $3 WHERE id = $4 AND type = $5",
		delNode: "DELETE FROM " + t.Node + " WHERE id = $1 AND type = $2",
	}
}

// binaryAs reports whether every column of a result arrives in binary
// format with the given type: then rows are decoded from their wire bytes
// instead of through pgx's per-value scan plans. Tables made by the
// reference (other column types) take the Scan path.
func binaryAs(fds []pgconn.FieldDescription, oids ...uint32) bool {
	if len(fds) != len(oids) {
		return false
	}
	for i, fd := range fds {
		if fd.Format != pgx.BinaryFormatCode || fd.DataTypeOID != oids[i] {
			return false
		}
	}
	return true
}

// wireInt decodes a binary int2, int4 or int8 value of want bytes.
func wireInt(v []byte, want int, col string) (int64, error) {
	if len(v) != want {
		return 0, fmt.Errorf("column %s: %d bytes on the wire, want %d", col, len(v), want)
	}
	switch want {
	case 2:
		return int64(int16(binary.BigEndian.Uint16(v))), nil
	case 4:
		return int64(int32(binary.BigEndian.Uint32(v))), nil
	}
	return int64(binary.BigEndian.Uint64(v)), nil
}

// payloads collects the data of one result's rows in one growing buffer:
// a few allocations per result instead of one per row. Slices handed out
// stay valid when the buffer grows (they keep the old array).
type payloads struct{ buf []byte }

func (p *payloads) add(v []byte) []byte {
	if len(v) == 0 {
		return []byte{}
	}
	off := len(p.buf)
	p.buf = append(p.buf, v...)
	return p.buf[off:len(p.buf):len(p.buf)]
}

// listRow decodes id2, data, time, version.
func listRow(v [][]byte, l *graph.Link, data *payloads) error {
	return linkCols(v[0], v[1], v[2], v[3], l, data)
}

// multigetRow decodes id2, visibility, data, time, version.
func multigetRow(v [][]byte, l *graph.Link, data *payloads) error {
	vis, err := wireInt(v[1], 2, "visibility")
	if err != nil {
		return err
	}
	l.Visibility = uint8(vis)
	return linkCols(v[0], v[2], v[3], v[4], l, data)
}

func linkCols(id2v, datav, tmv, verv []byte, l *graph.Link, data *payloads) error {
	id2, err := wireInt(id2v, 8, "id2")
	if err != nil {
		return err
	}
	tm, err := wireInt(tmv, 8, "time")
	if err != nil {
		return err
	}
	ver, err := wireInt(verv, 8, "version")
	if err != nil {
		return err
	}
	l.ID2, l.Time, l.Version, l.Data = id2, tm, int32(ver), data.add(datav)
	return nil
}

var (
	listOIDs     = []uint32{pgtype.Int8OID, pgtype.ByteaOID, pgtype.Int8OID, pgtype.Int8OID}
	multigetOIDs = []uint32{pgtype.Int8OID, pgtype.Int2OID, pgtype.ByteaOID, pgtype.Int8OID, pgtype.Int8OID}
)
