package sqlstore

import (
	"github.com/linkbench/linkbench/internal/graph"
	"github.com/linkbench/linkbench/internal/store"
)

// Tables are a SQL store's table names, quoted for its server: the
// statements every SQL store (SQLite, MySQL, PostgreSQL) runs alike are
// built from them here, once, and read by the scanners below, which take
// rows of database/sql and of pgx alike.
type Tables store.Tables

// CountsQuery reads the count table in (id, link_type) order (EachCount).
func (t Tables) CountsQuery() string {
	return "SELECT id, link_type, count, time, version FROM " + t.Count + " ORDER BY id, link_type"
}

// VisibleCountsQuery counts the visible links per (id1, link_type), in
// that order (EachVisibleCount).
func (t Tables) VisibleCountsQuery() string {
	return "SELECT id1, link_type, count(*) FROM " + t.Link + " WHERE visibility = 1 GROUP BY id1, link_type ORDER BY id1, link_type"
}

// NodeIDRangeQuery reads the smallest and largest node id.
func (t Tables) NodeIDRangeQuery() string { return "SELECT min(id), max(id) FROM " + t.Node }

// LinkIndex creates the link table's list index, which the bulk load
// drops and builds again at its end.
func (t Tables) LinkIndex() string {
	return "CREATE INDEX IF NOT EXISTS id1_type ON " + t.Link + " (id1, link_type, visibility, time, id2, version, data)"
}

// Rows is a result set being read, of database/sql or of pgx.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// EachCount calls fn with each row of CountsQuery; the rows' own error
// is classified.
func EachCount(rows Rows, classify Classifier, fn func(graph.Count) error) error {
	for rows.Next() {
		var c graph.Count
		if err := rows.Scan(&c.ID1, &c.LinkType, &c.Count, &c.Time, &c.Version); err != nil {
			return err
		}
		if err := fn(c); err != nil {
			return err
		}
	}
	return classify(rows.Err())
}

// EachVisibleCount calls fn with each row of VisibleCountsQuery; the
// rows' own error is classified.
func EachVisibleCount(rows Rows, classify Classifier, fn func(id1, lt, n int64) error) error {
	for rows.Next() {
		var id1, lt, n int64
		if err := rows.Scan(&id1, &lt, &n); err != nil {
			return err
		}
		if err := fn(id1, lt, n); err != nil {
			return err
		}
	}
	return classify(rows.Err())
}
