package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/linkbench/linkbench/internal/graph"
)

// Inserter writes n rows of width columns with multi-row INSERTs that
// start with head ("INSERT ... INTO table (cols) VALUES "); row appends
// the values of row i.
type Inserter func(ctx context.Context, head string, width, n int, row func(i int, args []any) []any) error

// InsertBatched writes n rows of width columns in tx, rowsPerInsert rows
// an INSERT that starts with head; row appends the values of row i.
func InsertBatched(ctx context.Context, tx *sql.Tx, rowsPerInsert int, head string, width, n int, row func(i int, args []any) []any) error {
	args := make([]any, 0, rowsPerInsert*width)
	for start := 0; start < n; start += rowsPerInsert {
		k := min(rowsPerInsert, n-start)
		args = args[:0]
		for i := start; i < start+k; i++ {
			args = row(i, args)
		}
		if _, err := tx.ExecContext(ctx, head+ValuesList(k, width), args...); err != nil {
			return err
		}
	}
	return nil
}

// LoadNodes writes nodes into table with ins; verb is the store's
// "INSERT ... INTO " that replaces or keeps existing rows.
func LoadNodes(ctx context.Context, ins Inserter, verb, table string, nodes []graph.Node) error {
	return load(ctx, ins, verb+table+" (id, type, version, time, data) VALUES ", "nodes", nodes, func(a []any, n *graph.Node) []any {
		return append(a, n.ID, n.Type, n.Version, n.Time, nonNil(n.Data))
	}, 5)
}

// LoadLinks writes links into table with ins, as LoadNodes.
func LoadLinks(ctx context.Context, ins Inserter, verb, table string, links []graph.Link) error {
	return load(ctx, ins, verb+table+" (id1, id2, link_type, visibility, data, time, version) VALUES ", "links", links, func(a []any, l *graph.Link) []any {
		return append(a, l.ID1, l.ID2, l.LinkType, l.Visibility, nonNil(l.Data), l.Time, l.Version)
	}, 7)
}

// LoadCounts writes counts into table with ins, as LoadNodes.
func LoadCounts(ctx context.Context, ins Inserter, verb, table string, counts []graph.Count) error {
	return load(ctx, ins, verb+table+" (id, link_type, count, time, version) VALUES ", "counts", counts, func(a []any, c *graph.Count) []any {
		return append(a, c.ID1, c.LinkType, c.Count, c.Time, c.Version)
	}, 5)
}

// load writes rows of width columns with ins; what names them in errors.
func load[T any](ctx context.Context, ins Inserter, head, what string, rows []T, values func(a []any, r *T) []any, width int) error {
	if err := ins(ctx, head, width, len(rows), func(i int, a []any) []any { return values(a, &rows[i]) }); err != nil {
		return fmt.Errorf("load %s: %w", what, err)
	}
	return nil
}

// ReadLink reads the stored link of l with get (parameters link_type,
// id1, id2; columns visibility, data, time, version), a statement of the
// write's transaction, for the write: found is false when there is none.
func ReadLink(ctx context.Context, get *sql.Stmt, l *graph.Link) (old graph.Link, found bool, err error) {
	err = get.QueryRowContext(ctx, l.LinkType, l.ID1, l.ID2).Scan(&old.Visibility, &old.Data, &old.Time, &old.Version)
	if errors.Is(err, sql.ErrNoRows) {
		return old, false, nil
	}
	return old, err == nil, err
}

// WriteLinkTx writes l as its upsert's result says (graph.WriteOutcome):
// ins (id1, id2, link_type, visibility, data, time, version) when no link
// was found, upd (visibility, data, time, version, link_type, id1, id2)
// when it changed, nothing when it is unchanged.
func WriteLinkTx(ctx context.Context, tx *sql.Tx, ins, upd *sql.Stmt, l *graph.Link, found bool, res graph.WriteResult) error {
	var err error
	switch {
	case !found:
		_, err = tx.StmtContext(ctx, ins).ExecContext(ctx, l.ID1, l.ID2, l.LinkType, l.Visibility, nonNil(l.Data), l.Time, l.Version)
	case res == graph.Updated:
		_, err = tx.StmtContext(ctx, upd).ExecContext(ctx, l.Visibility, nonNil(l.Data), l.Time, l.Version, l.LinkType, l.ID1, l.ID2)
	}
	return err
}
