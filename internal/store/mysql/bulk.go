package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"

	gomysql "github.com/go-sql-driver/mysql"
	"github.com/linkbench/linkbench/internal/graph"
	"github.com/linkbench/linkbench/internal/store"
	"github.com/linkbench/linkbench/internal/store/sqlstore"
)

// rowsPerInsert is the rows of one multi-row INSERT.
const rowsPerInsert = 1024

// BulkBatchRows implements store.BatchHinter.
func (s *Store) BulkBatchRows() int { return 4096 }

// insertBatched writes rows with multi-row INSERTs in one transaction on
// the load pool.
func (s *Store) insertBatched(ctx context.Context, head string, cols, n int, row func(i int, args []any) []any) error {
	return sqlstore.InTx(ctx, s.load, classify, func(tx *sql.Tx) error {
		return sqlstore.InsertBatched(ctx, tx, rowsPerInsert, head, cols, n, row)
	})
}

// BeginLoad implements store.BulkLoader: with defer_index and an empty
// link table, the id1_type index is dropped until the EndLoad that
// finishes the graph. A table that holds rows (a resumed load, a --shard
// process that starts after others have written) is left as it is.
func (s *Store) BeginLoad(ctx context.Context, _ store.LoadInfo) error {
	if !s.deferIndex {
		return nil
	}
	var any int
	if err := s.r.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM "+q(s.t.Link)+")").Scan(&any); err != nil {
		return classify(err)
	}
	if any != 0 {
		return nil
	}
	has, err := s.hasLinkIndex(ctx)
	if err != nil || !has {
		return err
	}
	s.st.close()
	// Another --shard process may have dropped it a moment ago (1091).
	if _, err := s.w.ExecContext(ctx, "ALTER TABLE "+q(s.t.Link)+" DROP INDEX id1_type"); err != nil && !isMySQLError(err, 1091) {
		return classify(err)
	}
	return nil
}

// hasLinkIndex reports whether the link table has its id1_type index.
func (s *Store) hasLinkIndex(ctx context.Context) (bool, error) {
	var n int
	if err := s.r.QueryRowContext(ctx, "SELECT count(*) FROM information_schema.statistics WHERE table_schema = DATABASE() AND table_name = ? AND index_name = 'id1_type'", s.t.Link).Scan(&n); err != nil {
		return false, classify(err)
	}
	return n > 0, nil
}

// isMySQLError reports whether err is the server error number n.
func isMySQLError(err error, numbers ...uint16) bool {
	var me *gomysql.MySQLError
	return errors.As(err, &me) && slices.Contains(numbers, me.Number)
}

// insertVerb is INSERT, or INSERT IGNORE when a replayed load unit may
// find some of its rows already written (store.SkipExisting).
func insertVerb(ctx context.Context) string {
	if store.SkipExisting(ctx) {
		return "INSERT IGNORE INTO "
	}
	return "INSERT INTO "
}

// LoadNodes implements store.BulkLoader.
func (s *Store) LoadNodes(ctx context.Context, nodes []graph.Node) error {
	if ok, err := s.tryInfile("nodes", func() error { return s.loadNodesInfile(ctx, nodes) }); ok {
		return err
	}
	return sqlstore.LoadNodes(ctx, s.insertBatched, insertVerb(ctx), q(s.t.Node), nodes)
}

// tryInfile runs load, a LOAD DATA LOCAL INFILE of what, unless the
// server has refused those; ok is false when it has (now or before), and
// the caller writes with INSERTs instead.
func (s *Store) tryInfile(what string, load func() error) (ok bool, err error) {
	if s.noInfile.Load() {
		return false, nil
	}
	if err := load(); err == nil {
		return true, nil
	} else if !isInfileRefused(err) {
		return true, fmt.Errorf("load %s: %w", what, err)
	}
	s.noInfile.Store(true) // the server refuses LOCAL INFILE: use INSERTs
	return false, nil
}

// LoadLinks implements store.BulkLoader.
func (s *Store) LoadLinks(ctx context.Context, links []graph.Link) error {
	if ok, err := s.tryInfile("links", func() error { return s.loadLinksInfile(ctx, links) }); ok {
		return err
	}
	return sqlstore.LoadLinks(ctx, s.insertBatched, insertVerb(ctx), q(s.t.Link), links)
}

// LoadCounts implements store.BulkLoader.
func (s *Store) LoadCounts(ctx context.Context, counts []graph.Count) error {
	if ok, err := s.tryInfile("counts", func() error { return s.loadCountsInfile(ctx, counts) }); ok {
		return err
	}
	return sqlstore.LoadCounts(ctx, s.insertBatched, insertVerb(ctx), q(s.t.Count), counts)
}

// EndLoad implements store.BulkLoader: builds the index when it is
// missing and sets AUTO_INCREMENT to at least MaxID1; a partial load's
// EndLoad leaves both, and the statistics, to the process that finishes
// the graph.
func (s *Store) EndLoad(ctx context.Context, info store.LoadInfo) error {
	if info.Partial {
		return nil
	}
	has, err := s.hasLinkIndex(ctx)
	if err != nil {
		return err
	}
	if !has {
		s.st.close()
		end := info.BeginStage("build index id1_type", info.Links)
		// A process finishing the same graph may have built it a moment
		// ago (1061).
		if _, err := s.w.ExecContext(ctx, "ALTER TABLE "+q(s.t.Link)+" ADD INDEX id1_type "+indexCols); err != nil && !isMySQLError(err, 1061) {
			return fmt.Errorf("build index id1_type: %w", classify(err))
		}
		end()
	}
	end := info.BeginStage("set AUTO_INCREMENT", 0)
	var maxID sql.NullInt64
	if err := s.r.QueryRowContext(ctx, "SELECT max(id) FROM "+q(s.t.Node)).Scan(&maxID); err != nil {
		return classify(err)
	}
	next := max(info.MaxID1, maxID.Int64+1)
	if _, err := s.w.ExecContext(ctx, fmt.Sprintf("ALTER TABLE %s AUTO_INCREMENT = %d", q(s.t.Node), next)); err != nil {
		return fmt.Errorf("set AUTO_INCREMENT: %w", classify(err))
	}
	end()
	end = info.BeginStage("analyze tables", info.Links+info.Counts+info.Nodes)
	if _, err := s.w.ExecContext(ctx, "ANALYZE TABLE "+q(s.t.Link)+", "+q(s.t.Count)+", "+q(s.t.Node)); err != nil {
		return classify(err)
	}
	end()
	return nil
}

// Reset implements store.Resetter.
func (s *Store) Reset(ctx context.Context) error {
	for _, t := range []string{s.t.Link, s.t.Count, s.t.Node, store.MetaTable} {
		if _, err := s.w.ExecContext(ctx, "TRUNCATE TABLE "+q(t)); err != nil {
			return classify(err)
		}
	}
	s.st.close()
	return nil
}

// IsEmpty implements store.EmptyChecker.
func (s *Store) IsEmpty(ctx context.Context) (bool, error) {
	return sqlstore.IsEmpty(ctx, s.r, classify, q(s.t.Link), q(s.t.Count), q(s.t.Node))
}

// GetMeta implements store.MetaStore.
func (s *Store) GetMeta(ctx context.Context) (map[string]string, error) {
	return sqlstore.GetMeta(ctx, s.r, q(store.MetaTable), classify)
}

// PutMeta implements store.MetaStore.
func (s *Store) PutMeta(ctx context.Context, meta map[string]string) error {
	return s.tx(ctx, func(tx *sql.Tx) error { return sqlstore.PutMeta(ctx, tx, q(store.MetaTable), meta) })
}

// UpdateMeta implements store.Journaler.
func (s *Store) UpdateMeta(ctx context.Context, set map[string]string, deletePrefix string) error {
	return s.tx(ctx, func(tx *sql.Tx) error { return sqlstore.UpdateMeta(ctx, tx, q(store.MetaTable), set, deletePrefix) })
}

// ClaimMeta implements store.Journaler.
func (s *Store) ClaimMeta(ctx context.Context, key, value string) (string, error) {
	return sqlstore.ClaimMeta(ctx, s.w, q(store.MetaTable), "INSERT IGNORE INTO ", key, value, classify)
}

// ScanCounts implements store.Scanner.
func (s *Store) ScanCounts(ctx context.Context, fn func(graph.Count) error) error {
	return sqlstore.ScanCounts(ctx, s.r, s.quoted(), classify, fn)
}

// ScanVisibleLinkCounts implements store.Scanner.
func (s *Store) ScanVisibleLinkCounts(ctx context.Context, fn func(id1, lt, n int64) error) error {
	return sqlstore.ScanVisibleLinkCounts(ctx, s.r, s.quoted(), classify, fn)
}

// NodeIDRange implements store.Scanner.
func (s *Store) NodeIDRange(ctx context.Context) (lo, hi int64, ok bool, err error) {
	return sqlstore.NodeIDRange(ctx, s.r, s.quoted(), classify)
}

// SizeOnDisk implements store.Sizer.
func (s *Store) SizeOnDisk(ctx context.Context) (int64, error) {
	var n sql.NullInt64
	err := s.r.QueryRowContext(ctx, "SELECT SUM(data_length + index_length) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name IN (?, ?, ?)",
		s.t.Link, s.t.Count, s.t.Node).Scan(&n)
	return n.Int64, classify(err)
}

// serverKind names the server behind the MySQL protocol from its version
// string: "TiDB", "MariaDB" or "MySQL".
func serverKind(version string) string {
	switch {
	case strings.Contains(version, "TiDB"):
		return "TiDB"
	case strings.Contains(strings.ToLower(version), "mariadb"):
		return "MariaDB"
	}
	return "MySQL"
}

// Servers implements store.ServerLocator with the server's own pid_file and
// datadir (a relative pid_file is inside datadir).
func (s *Store) Servers(ctx context.Context) ([]store.ServerInfo, error) {
	info := store.ServerInfo{Addr: s.addr}
	var pidFile, dataDir sql.NullString
	if err := s.r.QueryRowContext(ctx, "SELECT @@pid_file, @@datadir").Scan(&pidFile, &dataDir); err == nil {
		info.PIDFile, info.DataDir = pidFile.String, dataDir.String
		if info.PIDFile != "" && !strings.HasPrefix(info.PIDFile, "/") && info.DataDir != "" {
			info.PIDFile = strings.TrimSuffix(info.DataDir, "/") + "/" + info.PIDFile
		}
	} else if ctx.Err() != nil {
		return nil, classify(err)
	}
	return []store.ServerInfo{info}, nil
}

// Describe implements store.Describer.
func (s *Store) Describe(ctx context.Context) (store.Description, error) {
	var v string
	if err := s.r.QueryRowContext(ctx, "SELECT VERSION()").Scan(&v); err != nil {
		return store.Description{}, classify(err)
	}
	d := store.Description{Version: v, Settings: map[string]string{"server": s.addr, "database": s.db, "engine": s.engine, "server_kind": serverKind(v), "io_mode": s.socks.dialer.Mode.String()}}
	if serverKind(v) == "TiDB" {
		d.Settings["engine"] = "TiDB (its own storage; mysql_engine does not apply)"
	}
	d.Settings[store.LinkWritesKey] = "reference"
	if s.useProc {
		d.Settings[store.LinkWritesKey] = "routine (CALL " + strings.Trim(s.writeProc(), "`") + ")"
	}
	for _, k := range []string{"innodb_flush_log_at_trx_commit", "sync_binlog", "rocksdb_flush_log_at_trx_commit", "innodb_buffer_pool_size", "log_bin", "transaction_isolation", "tidb_txn_mode"} {
		var val sql.NullString
		if err := s.r.QueryRowContext(ctx, "SELECT @@"+k).Scan(&val); err == nil && val.Valid {
			d.Settings[k] = val.String
		}
	}
	return d, nil
}

// quoted are the store's tables quoted for the statements it shares.
func (s *Store) quoted() sqlstore.Tables {
	return sqlstore.Tables{Link: q(s.t.Link), Count: q(s.t.Count), Node: q(s.t.Node)}
}
