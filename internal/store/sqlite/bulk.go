package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"os"

	"github.com/linkbench/linkbench/internal/graph"
	"github.com/linkbench/linkbench/internal/store"
	"github.com/linkbench/linkbench/internal/store/sqlstore"
)

// rowsPerInsert is the rows of one multi-row INSERT (7 columns each, well
// under SQLite's limit of 32766 bound variables).
const rowsPerInsert = 256

// insertBatched writes rows with multi-row INSERTs in one transaction.
func (s *Store) insertBatched(ctx context.Context, head string, cols, n int, row func(i int, args []any) []any) error {
	return s.writeTx(ctx, func(tx *sql.Tx) error {
		return sqlstore.InsertBatched(ctx, tx, rowsPerInsert, head, cols, n, row)
	})
}

// BeginLoad implements store.BulkLoader: relaxes synchronous and, with
// defer_index and an empty link table, drops the secondary index until
// the EndLoad that finishes the graph. A table that holds rows (a resumed
// load, a later --shard process) is left as it is.
func (s *Store) BeginLoad(ctx context.Context, _ store.LoadInfo) error {
	if _, err := s.w.ExecContext(ctx, "PRAGMA synchronous = "+s.loadSync); err != nil {
		return classify(err)
	}
	if !s.deferIndex {
		return nil
	}
	var any int
	if err := s.w.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM "+s.t.Link+")").Scan(&any); err != nil {
		return classify(err)
	}
	if any != 0 {
		return nil
	}
	s.stmts.close()
	if _, err := s.w.ExecContext(ctx, "DROP INDEX IF EXISTS id1_type"); err != nil {
		return classify(err)
	}
	return nil
}

// LoadNodes implements store.BulkLoader.
func (s *Store) LoadNodes(ctx context.Context, nodes []graph.Node) error {
	return sqlstore.LoadNodes(ctx, s.insertBatched, "INSERT OR REPLACE INTO ", s.t.Node, nodes)
}

// LoadLinks implements store.BulkLoader.
func (s *Store) LoadLinks(ctx context.Context, links []graph.Link) error {
	return sqlstore.LoadLinks(ctx, s.insertBatched, "INSERT OR REPLACE INTO ", s.t.Link, links)
}

// LoadCounts implements store.BulkLoader.
func (s *Store) LoadCounts(ctx context.Context, counts []graph.Count) error {
	return sqlstore.LoadCounts(ctx, s.insertBatched, "INSERT OR REPLACE INTO ", s.t.Count, counts)
}

// EndLoad implements store.BulkLoader: builds the index when it is
// missing, moves the node id allocator to at least MaxID1, restores
// synchronous, checkpoints and analyzes; a partial load's EndLoad only
// restores synchronous and checkpoints (its rows are durable), and
// leaves the rest to the process that finishes the graph.
func (s *Store) EndLoad(ctx context.Context, info store.LoadInfo) error {
	if info.Partial {
		if _, err := s.w.ExecContext(ctx, "PRAGMA synchronous = "+s.sync); err != nil {
			return classify(err)
		}
		end := info.BeginStage("checkpoint WAL", 0)
		if _, err := s.w.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
			return classify(err)
		}
		end()
		return nil
	}
	var n int
	if err := s.w.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = 'id1_type'").Scan(&n); err != nil {
		return classify(err)
	}
	if n == 0 {
		end := info.BeginStage("build index id1_type", info.Links)
		if _, err := s.w.ExecContext(ctx, sqlstore.Tables(s.t).LinkIndex()); err != nil {
			return fmt.Errorf("build index id1_type: %w", classify(err))
		}
		end()
		s.stmts.close()
	}
	end := info.BeginStage("set node id allocator", 0)
	err := s.writeTx(ctx, func(tx *sql.Tx) error {
		var maxID sql.NullInt64
		if err := tx.QueryRowContext(ctx, "SELECT max(id) FROM "+s.t.Node).Scan(&maxID); err != nil {
			return err
		}
		seq := max(info.MaxID1-1, maxID.Int64)
		r, err := tx.ExecContext(ctx, "UPDATE sqlite_sequence SET seq = max(seq, ?) WHERE name = ?", seq, s.raw.Node)
		if err != nil {
			return err
		}
		if k, _ := r.RowsAffected(); k == 0 {
			_, err = tx.ExecContext(ctx, "INSERT INTO sqlite_sequence (name, seq) VALUES (?, ?)", s.raw.Node, seq)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("set the node id allocator: %w", err)
	}
	end()
	if _, err := s.w.ExecContext(ctx, "PRAGMA synchronous = "+s.sync); err != nil {
		return classify(err)
	}
	end = info.BeginStage("checkpoint WAL", 0)
	if _, err := s.w.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		return classify(err)
	}
	end()
	end = info.BeginStage("analyze", info.Links+info.Nodes+info.Counts)
	if _, err := s.w.ExecContext(ctx, "ANALYZE"); err != nil {
		return classify(err)
	}
	end()
	return nil
}

// Reset implements store.Resetter.
func (s *Store) Reset(ctx context.Context) error {
	return s.writeTx(ctx, func(tx *sql.Tx) error {
		for _, t := range []string{s.t.Link, s.t.Count, s.t.Node, store.MetaTable} {
			if _, err := tx.ExecContext(ctx, "DELETE FROM "+t); err != nil {
				return err
			}
		}
		_, err := tx.ExecContext(ctx, "DELETE FROM sqlite_sequence WHERE name = ?", s.raw.Node)
		return err
	})
}

// IsEmpty implements store.EmptyChecker.
func (s *Store) IsEmpty(ctx context.Context) (bool, error) {
	return sqlstore.IsEmpty(ctx, s.r, classify, s.t.Link, s.t.Count, s.t.Node)
}

// GetMeta implements store.MetaStore.
func (s *Store) GetMeta(ctx context.Context) (map[string]string, error) {
	return sqlstore.GetMeta(ctx, s.r, store.MetaTable, classify)
}

// PutMeta implements store.MetaStore.
func (s *Store) PutMeta(ctx context.Context, meta map[string]string) error {
	return s.writeTx(ctx, func(tx *sql.Tx) error { return sqlstore.PutMeta(ctx, tx, store.MetaTable, meta) })
}

// UpdateMeta implements store.Journaler. The bulk loads are INSERT OR
// REPLACE already, so replayed rows need nothing more.
func (s *Store) UpdateMeta(ctx context.Context, set map[string]string, deletePrefix string) error {
	return s.writeTx(ctx, func(tx *sql.Tx) error { return sqlstore.UpdateMeta(ctx, tx, store.MetaTable, set, deletePrefix) })
}

// ClaimMeta implements store.Journaler.
func (s *Store) ClaimMeta(ctx context.Context, key, value string) (string, error) {
	return sqlstore.ClaimMeta(ctx, s.w, store.MetaTable, "INSERT OR IGNORE INTO ", key, value, classify)
}

// ScanCounts implements store.Scanner.
func (s *Store) ScanCounts(ctx context.Context, fn func(graph.Count) error) error {
	return sqlstore.ScanCounts(ctx, s.r, sqlstore.Tables(s.t), classify, fn)
}

// ScanVisibleLinkCounts implements store.Scanner.
func (s *Store) ScanVisibleLinkCounts(ctx context.Context, fn func(id1, lt, n int64) error) error {
	return sqlstore.ScanVisibleLinkCounts(ctx, s.r, sqlstore.Tables(s.t), classify, fn)
}

// NodeIDRange implements store.Scanner.
func (s *Store) NodeIDRange(ctx context.Context) (lo, hi int64, ok bool, err error) {
	return sqlstore.NodeIDRange(ctx, s.r, sqlstore.Tables(s.t), classify)
}

// SizeOnDisk implements store.Sizer: the database file plus its WAL.
func (s *Store) SizeOnDisk(context.Context) (int64, error) {
	var total int64
	for _, p := range []string{s.path, s.path + "-wal", s.path + "-shm"} {
		if fi, err := os.Stat(p); err == nil {
			total += fi.Size()
		}
	}
	return total, nil
}

// Describe implements store.Describer.
func (s *Store) Describe(ctx context.Context) (store.Description, error) {
	var v, mode string
	var syncN int
	if err := s.r.QueryRowContext(ctx, "SELECT sqlite_version()").Scan(&v); err != nil {
		return store.Description{}, classify(err)
	}
	s.w.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode)
	s.w.QueryRowContext(ctx, "PRAGMA synchronous").Scan(&syncN)
	names := map[int]string{0: "OFF", 1: "NORMAL", 2: "FULL", 3: "EXTRA"}
	return store.Description{Version: "SQLite " + v, Settings: map[string]string{
		"path": s.path, "journal_mode": mode, "synchronous": names[syncN],
	}}, nil
}
