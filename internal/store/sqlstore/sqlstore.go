// Package sqlstore holds what the SQL stores share. Tables builds the
// statements SQLite, MySQL and PostgreSQL run alike, and its scanners
// read database/sql and pgx rows alike. The database/sql stores (SQLite,
// MySQL) also share the consistency scans, the metadata table, emptiness,
// the bulk INSERTs, the client-side link upsert, the row scanning of
// lists and nodes, and multi-row VALUES lists. Table names are passed
// already quoted for the dialect; placeholders are '?'.
package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/linkbench/linkbench/internal/graph"
	"github.com/linkbench/linkbench/internal/store"
)

// Classifier maps a driver error to the graph error kinds.
type Classifier func(error) error

// InTx runs fn in a transaction of db: committed when fn returns nil,
// rolled back otherwise; errors are classified.
func InTx(ctx context.Context, db *sql.DB, classify Classifier, fn func(tx *sql.Tx) error) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return classify(err)
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return classify(err)
	}
	return classify(tx.Commit())
}

// ValuesList is "(?, ?), (?, ?)" for rows rows of cols columns.
func ValuesList(rows, cols int) string {
	one := "(" + strings.Repeat("?, ", cols-1) + "?)"
	return strings.Repeat(one+", ", rows-1) + one
}

// MultigetArgs are the parameters of a multiget: link_type, id1, then
// each id2 (for "link_type = ? AND id1 = ? AND id2 IN (InList)").
func MultigetArgs(id1, lt int64, id2s []int64) []any {
	args := make([]any, 0, len(id2s)+2)
	args = append(args, lt, id1)
	for _, id2 := range id2s {
		args = append(args, id2)
	}
	return args
}

// InList is "?, ?, ?" for n values.
func InList(n int) string { return "?" + strings.Repeat(", ?", n-1) }

// ScanCounts streams the count table in (id, link_type) order.
func ScanCounts(ctx context.Context, db *sql.DB, t Tables, classify Classifier, fn func(graph.Count) error) error {
	rows, err := db.QueryContext(ctx, t.CountsQuery())
	if err != nil {
		return classify(err)
	}
	defer rows.Close()
	return EachCount(rows, classify, fn)
}

// ScanVisibleLinkCounts streams the number of visible links per
// (id1, link_type) in that order.
func ScanVisibleLinkCounts(ctx context.Context, db *sql.DB, t Tables, classify Classifier, fn func(id1, lt, n int64) error) error {
	rows, err := db.QueryContext(ctx, t.VisibleCountsQuery())
	if err != nil {
		return classify(err)
	}
	defer rows.Close()
	return EachVisibleCount(rows, classify, fn)
}

// NodeIDRange returns the smallest and largest node id.
func NodeIDRange(ctx context.Context, db *sql.DB, t Tables, classify Classifier) (lo, hi int64, ok bool, err error) {
	var a, b sql.NullInt64
	if err := db.QueryRowContext(ctx, t.NodeIDRangeQuery()).Scan(&a, &b); err != nil {
		return 0, 0, false, classify(err)
	}
	return a.Int64, b.Int64, a.Valid, nil
}

// IsEmpty reports whether every table is empty.
func IsEmpty(ctx context.Context, db *sql.DB, classify Classifier, tables ...string) (bool, error) {
	for _, t := range tables {
		var any int
		if err := db.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM "+t+")").Scan(&any); err != nil {
			return false, classify(err)
		}
		if any != 0 {
			return false, nil
		}
	}
	return true, nil
}

// GetMeta reads the metadata table.
func GetMeta(ctx context.Context, db *sql.DB, metaTable string, classify Classifier) (map[string]string, error) {
	rows, err := db.QueryContext(ctx, MetaQuery(metaTable))
	if err != nil {
		return nil, classify(err)
	}
	defer rows.Close()
	return ReadMeta(rows, classify)
}

// MetaQuery reads the metadata table (ReadMeta).
func MetaQuery(metaTable string) string { return "SELECT k, v FROM " + metaTable }

// ReadMeta collects the rows of MetaQuery; the rows' own error is
// classified.
func ReadMeta(rows Rows, classify Classifier) (map[string]string, error) {
	m := map[string]string{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return nil, err
		}
		m[k] = v
	}
	return m, classify(rows.Err())
}

// PutMeta replaces the metadata inside tx.
func PutMeta(ctx context.Context, tx *sql.Tx, metaTable string, meta map[string]string) error {
	if _, err := tx.ExecContext(ctx, "DELETE FROM "+metaTable); err != nil {
		return err
	}
	for k, v := range meta {
		if _, err := tx.ExecContext(ctx, "INSERT INTO "+metaTable+" (k, v) VALUES (?, ?)", k, v); err != nil {
			return err
		}
	}
	return nil
}

// UpdateMeta deletes the keys that start with deletePrefix (when it is not
// empty) and sets the given keys inside tx, leaving the other keys. REPLACE
// INTO is both SQLite's and MySQL's upsert.
func UpdateMeta(ctx context.Context, tx *sql.Tx, metaTable string, set map[string]string, deletePrefix string) error {
	if deletePrefix != "" {
		if _, err := tx.ExecContext(ctx, "DELETE FROM "+metaTable+" WHERE substr(k, 1, ?) = ?", len(deletePrefix), deletePrefix); err != nil {
			return err
		}
	}
	// In key order, so that concurrent updates (the processes of a --shard
	// load) lock the rows in one order and cannot deadlock.
	for _, k := range slices.Sorted(maps.Keys(set)) {
		if _, err := tx.ExecContext(ctx, "REPLACE INTO "+metaTable+" (k, v) VALUES (?, ?)", k, set[k]); err != nil {
			return err
		}
	}
	return nil
}

// ClaimMeta is store.Journaler's ClaimMeta: insert, a verb that skips a
// key already there (INSERT IGNORE INTO, INSERT OR IGNORE INTO), then
// read the key in a statement of its own, which sees a claim that
// committed while the insert waited for it.
func ClaimMeta(ctx context.Context, db *sql.DB, metaTable, insertIgnore, key, value string, classify Classifier) (string, error) {
	if _, err := db.ExecContext(ctx, insertIgnore+metaTable+" (k, v) VALUES (?, ?)", key, value); err != nil {
		return "", classify(err)
	}
	var held string
	if err := db.QueryRowContext(ctx, "SELECT v FROM "+metaTable+" WHERE k = ?", key).Scan(&held); err != nil {
		return "", classify(err)
	}
	return held, nil
}

// ScanList appends the rows of a list query (id2, data, time, version).
// The rows' data is copied into one new buffer (store.ListData).
func ScanList(rows *sql.Rows, id1, lt int64, dst []graph.Link, classify Classifier) ([]graph.Link, error) {
	defer rows.Close()
	var r row
	dest := r.dest(4, 1)
	dest[1] = &r.raw // valid until the next row: copied below
	var data store.ListData
	var err error
	for err == nil && rows.Next() {
		if err = rows.Scan(dest...); err != nil {
			break
		}
		l := graph.Link{ID1: id1, LinkType: lt, Visibility: graph.VisibilityDefault}
		if r.raw != nil {
			l.Data = data.Add(r.raw)
		}
		var ver int64
		if err = r.ints(&l.ID2, nil, &l.Time, &ver); err != nil {
			break
		}
		l.Version = int32(ver)
		dst = append(dst, l)
	}
	if err == nil {
		err = rows.Err()
	}
	return dst, classify(err)
}

// ScanLinks appends the rows of a multiget (id2, visibility, data, time, version).
func ScanLinks(rows *sql.Rows, id1, lt int64, dst []graph.Link, classify Classifier) ([]graph.Link, error) {
	defer rows.Close()
	var r row
	dest := r.dest(5, 2)
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return dst, classify(err)
		}
		l := graph.Link{ID1: id1, LinkType: lt, Data: r.data}
		var vis, ver int64
		if err := r.ints(&l.ID2, &vis, nil, &l.Time, &ver); err != nil {
			return dst, classify(err)
		}
		l.Visibility, l.Version = uint8(vis), int32(ver)
		dst = append(dst, l)
	}
	return dst, classify(rows.Err())
}

// RefMultigetSQL is the reference's multiget of id2s from table (quoted
// for its server) with every id written in its text, as the reference
// sends it: a statement it does not prepare, which the server parses and
// plans each time.
func RefMultigetSQL(table string, id1, lt int64, id2s []int64) string {
	b := make([]byte, 0, 128+len(table)+21*len(id2s))
	b = append(b, "SELECT id1, id2, link_type, visibility, data, version, time FROM "...)
	b = append(b, table...)
	b = append(b, " WHERE id1 = "...)
	b = strconv.AppendInt(b, id1, 10)
	b = append(b, " AND link_type = "...)
	b = strconv.AppendInt(b, lt, 10)
	b = append(b, " AND id2 IN ("...)
	for i, id2 := range id2s {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, id2, 10)
	}
	return string(append(b, ')'))
}

// ScanRefLinks appends the rows of a query of the reference's link
// columns (id1, id2, link_type, visibility, data, version, time). The
// rows' data is copied into one new buffer (store.ListData).
func ScanRefLinks(rows *sql.Rows, dst []graph.Link, classify Classifier) ([]graph.Link, error) {
	defer rows.Close()
	var r row
	dest := r.dest(7, 4)
	dest[4] = &r.raw // valid until the next row: copied below
	var data store.ListData
	var err error
	for err == nil && rows.Next() {
		if err = rows.Scan(dest...); err != nil {
			break
		}
		var l graph.Link
		if r.raw != nil {
			l.Data = data.Add(r.raw)
		}
		var vis, ver int64
		if err = r.ints(&l.ID1, &l.ID2, &l.LinkType, &vis, nil, &ver, &l.Time); err != nil {
			break
		}
		l.Visibility, l.Version = uint8(vis), int32(ver)
		dst = append(dst, l)
	}
	if err == nil {
		err = rows.Err()
	}
	return dst, classify(err)
}

// row holds the destinations of one result row, reused for every row.
// database/sql assigns a driver's integer to an *int64 by reflection, and
// to a narrower integer by formatting and parsing it; into an *any it is
// a plain copy, converted here. The data column goes to a *[]byte (into
// an *any, its copy would be boxed too).
type row struct {
	v    [7]any
	data []byte
	raw  sql.RawBytes
	ptr  [7]any
}

// dest returns the Scan destinations of a row of n columns whose column
// data (from 0; -1 for none) is the data.
func (r *row) dest(n, data int) []any {
	for i := range n {
		if i == data {
			r.ptr[i] = &r.data
		} else {
			r.ptr[i] = &r.v[i]
		}
	}
	return r.ptr[:n]
}

// ints stores the row's integer columns in the non-nil pointers, column by
// column; the data column is given nil.
func (r *row) ints(cols ...*int64) error { return Ints(r.v[:], cols...) }

// Ints stores a row's integer values, as a driver gives them (in any or
// driver.Value), in the non-nil pointers, value by value; a column that is
// not an integer is given nil.
func Ints[V any](v []V, cols ...*int64) error {
	for i, p := range cols {
		if p == nil {
			continue
		}
		n, err := asInt(any(v[i]))
		if err != nil {
			return fmt.Errorf("column %d: %w", i+1, err)
		}
		*p = n
	}
	return nil
}

// asInt is a driver's integer value as an int64: drivers give int64, or
// the digits when they read numbers as text.
func asInt(v any) (int64, error) {
	switch x := v.(type) {
	case int64:
		return x, nil
	case []byte:
		return strconv.ParseInt(string(x), 10, 64)
	case string:
		return strconv.ParseInt(x, 10, 64)
	case uint64:
		if x > math.MaxInt64 {
			return 0, fmt.Errorf("%d is out of range", x)
		}
		return int64(x), nil
	}
	return 0, fmt.Errorf("%T (%v) where an integer was expected", v, v)
}

// Columns returns the lower-cased column names the query lists (one per row).
func Columns(ctx context.Context, db *sql.DB, classify Classifier, query string, args ...any) (map[string]bool, error) {
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, classify(err)
	}
	defer rows.Close()
	have := map[string]bool{}
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			return nil, err
		}
		have[strings.ToLower(c)] = true
	}
	return have, classify(rows.Err())
}

// NodeStmts are the prepared statements of the node and count reads and
// writes, which both database/sql stores phrase alike:
//
//	Count:  SELECT count ... WHERE id = ? AND link_type = ?
//	Insert: INSERT ... (type, version, time, data) VALUES (?, ?, ?, ?)
//	Get:    SELECT version, time, data ... WHERE id = ? AND type = ?
//	Update: UPDATE ... SET version = ?, time = ?, data = ? WHERE id = ? AND type = ?
//	Delete: DELETE ... WHERE id = ? AND type = ?
type NodeStmts struct {
	Count, Insert, Get, Update, Delete *sql.Stmt
}

func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// CountLinks returns the count row's value, 0 when there is none.
func (st NodeStmts) CountLinks(ctx context.Context, id1, lt int64, classify Classifier) (int64, error) {
	var r row
	var n int64
	err := st.Count.QueryRowContext(ctx, id1, lt).Scan(r.dest(1, -1)...)
	if err == nil {
		err = r.ints(&n)
	}
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("count %d/%d: %w", id1, lt, classify(err))
	}
	return n, nil
}

// AddNode inserts n and returns the id the database assigned.
func (st NodeStmts) AddNode(ctx context.Context, n *graph.Node, classify Classifier) (int64, error) {
	r, err := st.Insert.ExecContext(ctx, n.Type, n.Version, n.Time, nonNil(n.Data))
	if err != nil {
		return 0, fmt.Errorf("add node: %w", classify(err))
	}
	return r.LastInsertId()
}

// GetNode reads a node of the given type.
func (st NodeStmts) GetNode(ctx context.Context, nodeType int32, id int64, classify Classifier) (graph.Node, bool, error) {
	n := graph.Node{ID: id, Type: nodeType}
	var r row
	var t int64
	err := st.Get.QueryRowContext(ctx, id, nodeType).Scan(r.dest(3, 2)...)
	if err == nil {
		err = r.ints(&n.Version, &t, nil)
		n.Time, n.Data = int32(t), r.data
	}
	if errors.Is(err, sql.ErrNoRows) {
		return graph.Node{}, false, nil
	}
	if err != nil {
		return graph.Node{}, false, fmt.Errorf("get node %d: %w", id, classify(err))
	}
	return n, true, nil
}

// GetNodeByID reads a node by its id alone, as the reference does, with
// Get being "SELECT id, type, version, time, data ... WHERE id = ?", and
// compares its type here.
func (st NodeStmts) GetNodeByID(ctx context.Context, nodeType int32, id int64, classify Classifier) (graph.Node, bool, error) {
	n := graph.Node{ID: id}
	var r row
	var typ, t int64
	err := st.Get.QueryRowContext(ctx, id).Scan(r.dest(5, 4)...)
	if err == nil {
		err = r.ints(nil, &typ, &n.Version, &t, nil)
		n.Type, n.Time, n.Data = int32(typ), int32(t), r.data
	}
	if errors.Is(err, sql.ErrNoRows) || err == nil && n.Type != nodeType {
		return graph.Node{}, false, nil
	}
	if err != nil {
		return graph.Node{}, false, fmt.Errorf("get node %d: %w", id, classify(err))
	}
	return n, true, nil
}

// UpdateNode overwrites version, time and data; it reports whether a row matched.
func (st NodeStmts) UpdateNode(ctx context.Context, n *graph.Node, classify Classifier) (bool, error) {
	r, err := st.Update.ExecContext(ctx, n.Version, n.Time, nonNil(n.Data), n.ID, n.Type)
	if err != nil {
		return false, fmt.Errorf("update node %d: %w", n.ID, classify(err))
	}
	k, _ := r.RowsAffected()
	return k > 0, nil
}

// DeleteNode deletes a node of the given type; it reports whether a row matched.
func (st NodeStmts) DeleteNode(ctx context.Context, nodeType int32, id int64, classify Classifier) (bool, error) {
	r, err := st.Delete.ExecContext(ctx, id, nodeType)
	if err != nil {
		return false, fmt.Errorf("delete node %d: %w", id, classify(err))
	}
	k, _ := r.RowsAffected()
	return k > 0, nil
}
