package sqlstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/linkbench/linkbench/internal/graph"
)

// rowsDriver is a database/sql driver whose every query returns the same
// rows, as a MySQL or SQLite driver hands them over: integers as int64 (or,
// with numbers as text, as []byte) and data as a []byte the driver reuses
// for the next row. It prices and checks the scanning, nothing else.
type rowsDriver struct {
	rows    [][]driver.Value
	asText  bool // integers as decimal []byte, as a text protocol sends them
	queries atomic.Int64
}

var driverSeq atomic.Int64

func openRows(t testing.TB, d *rowsDriver) *sql.DB {
	name := fmt.Sprintf("sqlstore-rows-%d", driverSeq.Add(1))
	sql.Register(name, d)
	db, err := sql.Open(name, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// query runs one query on a database of d.
func query(t testing.TB, d *rowsDriver) *sql.Rows {
	rows, err := openRows(t, d).QueryContext(context.Background(), "rows")
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func (d *rowsDriver) Open(string) (driver.Conn, error) { return rowsConn{d}, nil }

type rowsConn struct{ d *rowsDriver }

func (c rowsConn) Prepare(string) (driver.Stmt, error) { return rowsStmt(c), nil }
func (rowsConn) Close() error                          { return nil }
func (rowsConn) Begin() (driver.Tx, error)             { return nil, errors.New("no transactions") }

type rowsStmt struct{ d *rowsDriver }

func (rowsStmt) Close() error                               { return nil }
func (rowsStmt) NumInput() int                              { return -1 }
func (rowsStmt) Exec([]driver.Value) (driver.Result, error) { return nil, errors.New("no exec") }
func (s rowsStmt) Query([]driver.Value) (driver.Rows, error) {
	s.d.queries.Add(1)
	return &fixedRows{d: s.d, buf: make([]byte, 0, 256)}, nil
}

type fixedRows struct {
	d   *rowsDriver
	i   int
	buf []byte
}

func (r *fixedRows) Columns() []string {
	if len(r.d.rows) == 0 {
		return []string{"a"}
	}
	cols := make([]string, len(r.d.rows[0]))
	for i := range cols {
		cols[i] = "c" + strconv.Itoa(i)
	}
	return cols
}

func (*fixedRows) Close() error { return nil }

func (r *fixedRows) Next(dest []driver.Value) error {
	if r.i == len(r.d.rows) {
		return io.EOF
	}
	r.buf = r.buf[:0]
	for j, v := range r.d.rows[r.i] {
		switch v := v.(type) {
		case int64:
			if r.d.asText {
				dest[j] = strconv.AppendInt(nil, v, 10)
			} else {
				dest[j] = v
			}
		case []byte:
			// The driver's buffer: valid until the next call.
			start := len(r.buf)
			r.buf = append(r.buf, v...)
			dest[j] = r.buf[start:len(r.buf):len(r.buf)]
		default:
			dest[j] = v
		}
	}
	r.i++
	return nil
}

// listRows are n rows of a list query (id2, data, time, version).
func listRows(n int) [][]driver.Value {
	rows := make([][]driver.Value, n)
	for i := range rows {
		rows[i] = []driver.Value{int64(1_000_000 + i), []byte(fmt.Sprintf("data-%03d-of-a-link", i)), int64(1_700_000_000_000 - i), int64(i % 7)}
	}
	return rows
}

func TestScanListReadsEveryColumn(t *testing.T) {
	for _, text := range []bool{false, true} {
		t.Run(fmt.Sprintf("text=%v", text), func(t *testing.T) {
			rows := query(t, &rowsDriver{rows: listRows(3), asText: text})
			got, err := ScanList(rows, 42, 7, nil, func(err error) error { return err })
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 3 {
				t.Fatalf("%d links, want 3", len(got))
			}
			for i, l := range got {
				want := graph.Link{ID1: 42, LinkType: 7, ID2: int64(1_000_000 + i), Visibility: graph.VisibilityDefault,
					Data: []byte(fmt.Sprintf("data-%03d-of-a-link", i)), Time: int64(1_700_000_000_000 - i), Version: int32(i % 7)}
				if l.ID1 != want.ID1 || l.LinkType != want.LinkType || l.ID2 != want.ID2 || l.Visibility != want.Visibility ||
					string(l.Data) != string(want.Data) || l.Time != want.Time || l.Version != want.Version {
					t.Errorf("link %d = %+v, want %+v", i, l, want)
				}
			}
			// The data is the link's own: the driver's buffer was reused for
			// every row.
			if string(got[0].Data) != "data-000-of-a-link" {
				t.Errorf("first link's data %q was overwritten", got[0].Data)
			}
		})
	}
}

func TestScanLinksReadsVisibility(t *testing.T) {
	rows := query(t, &rowsDriver{rows: [][]driver.Value{
		{int64(5), int64(0), []byte("hidden"), int64(99), int64(3)},
		{int64(6), int64(1), []byte{}, int64(100), int64(0)},
	}})
	got, err := ScanLinks(rows, 1, 2, nil, func(err error) error { return err })
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ID2 != 5 || got[0].Visibility != 0 || string(got[0].Data) != "hidden" || got[0].Time != 99 || got[0].Version != 3 ||
		got[1].ID2 != 6 || got[1].Visibility != 1 || got[1].Data == nil || got[1].Time != 100 {
		t.Fatalf("links = %+v", got)
	}
}

// TestScanRefLinksReadsEveryColumn: the reference's seven link columns
// (id1, id2, link_type, visibility, data, version, time) land in their
// fields, with each row's data its own though the driver reuses its
// buffer, and in text as in binary.
func TestScanRefLinksReadsEveryColumn(t *testing.T) {
	for _, text := range []bool{false, true} {
		buf := []byte("first")
		rows := query(t, &rowsDriver{asText: text, rows: [][]driver.Value{
			{int64(1), int64(5), int64(2), int64(0), buf, int64(3), int64(99)},
			{int64(1), int64(6), int64(2), int64(1), []byte{}, int64(0), int64(100)},
		}})
		got, err := ScanRefLinks(rows, nil, func(err error) error { return err })
		if err != nil {
			t.Fatal(err)
		}
		want := []graph.Link{{ID1: 1, ID2: 5, LinkType: 2, Visibility: 0, Data: []byte("first"), Version: 3, Time: 99},
			{ID1: 1, ID2: 6, LinkType: 2, Visibility: 1, Data: []byte{}, Version: 0, Time: 100}}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("text %v: links = %+v, want %+v", text, got, want)
		}
	}
}

func TestScanListRefusesANonNumber(t *testing.T) {
	rows := query(t, &rowsDriver{rows: [][]driver.Value{{"twelve", []byte("d"), int64(1), int64(0)}}})
	if _, err := ScanList(rows, 1, 2, nil, func(err error) error { return err }); err == nil {
		t.Fatal("a list row with id2 \"twelve\" was accepted")
	}
}

func TestGetNodeAndCount(t *testing.T) {
	nodes := openRows(t, &rowsDriver{rows: [][]driver.Value{{int64(3), int64(1_600_000_000), []byte("payload")}}})
	get, err := nodes.Prepare("get")
	if err != nil {
		t.Fatal(err)
	}
	counts := openRows(t, &rowsDriver{rows: [][]driver.Value{{int64(12345)}}})
	count, err := counts.Prepare("count")
	if err != nil {
		t.Fatal(err)
	}
	none := openRows(t, &rowsDriver{})
	missing, err := none.Prepare("none")
	if err != nil {
		t.Fatal(err)
	}
	classify := func(err error) error { return err }
	ctx := context.Background()

	n, ok, err := NodeStmts{Get: get}.GetNode(ctx, 2, 77, classify)
	if err != nil || !ok || n.ID != 77 || n.Type != 2 || n.Version != 3 || n.Time != 1_600_000_000 || string(n.Data) != "payload" {
		t.Fatalf("GetNode = %+v, %v, %v", n, ok, err)
	}
	if _, ok, err := (NodeStmts{Get: missing}).GetNode(ctx, 2, 77, classify); ok || err != nil {
		t.Fatalf("GetNode of no row = %v, %v", ok, err)
	}
	c, err := NodeStmts{Count: count}.CountLinks(ctx, 1, 2, classify)
	if err != nil || c != 12345 {
		t.Fatalf("CountLinks = %d, %v", c, err)
	}
	if c, err := (NodeStmts{Count: missing}).CountLinks(ctx, 1, 2, classify); c != 0 || err != nil {
		t.Fatalf("CountLinks of no row = %d, %v", c, err)
	}
}

// BenchmarkScanList prices reading lists of 1 and 10 rows through
// database/sql, the driver's own work excluded.
func BenchmarkScanList(b *testing.B) {
	for _, n := range []int{1, 10} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			db := openRows(b, &rowsDriver{rows: listRows(n)})
			st, err := db.Prepare("list")
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			classify := func(err error) error { return err }
			var dst []graph.Link
			b.ReportAllocs()
			for b.Loop() {
				rows, err := st.QueryContext(ctx)
				if err != nil {
					b.Fatal(err)
				}
				if dst, err = ScanList(rows, 1, 2, dst[:0], classify); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkGetNode prices reading one node row through database/sql.
func BenchmarkGetNode(b *testing.B) {
	db := openRows(b, &rowsDriver{rows: [][]driver.Value{{int64(3), int64(1_600_000_000), make([]byte, 168)}}})
	get, err := db.Prepare("get")
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	classify := func(err error) error { return err }
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := (NodeStmts{Get: get}).GetNode(ctx, 2, 77, classify); err != nil {
			b.Fatal(err)
		}
	}
}
