package postgres

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/linkbench/linkbench/internal/graph"
	"github.com/linkbench/linkbench/internal/store"
	"github.com/linkbench/linkbench/internal/store/sqlstore"
)

// copy writes rows with binary COPY. With store.SkipExisting (a replayed
// load unit) the rows are copied into a temporary table first and moved
// with INSERT ... ON CONFLICT DO NOTHING, as COPY has no such clause.
func (s *Store) copy(ctx context.Context, table string, cols []string, n int, row func(i int) ([]any, error)) error {
	if !store.SkipExisting(ctx) {
		_, err := s.pool.CopyFrom(ctx, pgx.Identifier{s.schema, table}, cols, pgx.CopyFromSlice(n, row))
		return classify(err)
	}
	return classify(pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		target := s.qualified(table)
		if _, err := tx.Exec(ctx, "CREATE TEMP TABLE linkbench_replay (LIKE "+target+" INCLUDING DEFAULTS) ON COMMIT DROP"); err != nil {
			return err
		}
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"linkbench_replay"}, cols, pgx.CopyFromSlice(n, row)); err != nil {
			return err
		}
		list := strings.Join(cols, ", ")
		_, err := tx.Exec(ctx, "INSERT INTO "+target+" ("+list+") SELECT "+list+" FROM linkbench_replay ON CONFLICT DO NOTHING")
		return err
	}))
}

// BeginLoad implements store.BulkLoader: with defer_index and an empty
// link table, the id1_type index is dropped until the EndLoad that
// finishes the graph. A table that holds rows (a resumed load, a --shard
// process that starts after others have written) is left as it is: its
// index was dropped by the load that wrote them, or is kept.
func (s *Store) BeginLoad(ctx context.Context, _ store.LoadInfo) error {
	if !s.deferIndex {
		return nil
	}
	var any bool
	if err := s.pool.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM "+s.t.Link+")").Scan(&any); err != nil {
		return classify(err)
	}
	if any {
		return nil
	}
	return classify(s.underSchemaLock(ctx, "DROP INDEX IF EXISTS "+s.linkIndex()))
}

func (s *Store) linkIndex() string { return s.qualified("id1_type") }

// underSchemaLock runs stmt in a transaction holding the schema's advisory
// lock (the one Init takes): the processes of a --shard load drop and
// build the deferred index at the same moments, and two concurrent CREATE
// INDEX IF NOT EXISTS of one name fail in PostgreSQL instead of waiting.
func (s *Store) underSchemaLock(ctx context.Context, stmt string) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtext($1))", "linkbench init "+s.schema); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, stmt)
		return err
	})
}

// LoadNodes implements store.BulkLoader with binary COPY.
func (s *Store) LoadNodes(ctx context.Context, nodes []graph.Node) error {
	err := s.copy(ctx, s.raw.Node, []string{"id", "type", "version", "time", "data"}, len(nodes), func(i int) ([]any, error) {
		n := &nodes[i]
		return []any{n.ID, n.Type, n.Version, n.Time, nonNil(n.Data)}, nil
	})
	if err != nil {
		return fmt.Errorf("load nodes: %w", err)
	}
	return nil
}

// LoadLinks implements store.BulkLoader with binary COPY.
func (s *Store) LoadLinks(ctx context.Context, links []graph.Link) error {
	err := s.copy(ctx, s.raw.Link, []string{"id1", "id2", "link_type", "visibility", "data", "time", "version"}, len(links), func(i int) ([]any, error) {
		l := &links[i]
		return []any{l.ID1, l.ID2, l.LinkType, int16(l.Visibility), nonNil(l.Data), l.Time, int64(l.Version)}, nil
	})
	if err != nil {
		return fmt.Errorf("load links: %w", err)
	}
	return nil
}

// LoadCounts implements store.BulkLoader with binary COPY.
func (s *Store) LoadCounts(ctx context.Context, counts []graph.Count) error {
	err := s.copy(ctx, s.raw.Count, []string{"id", "link_type", "count", "time", "version"}, len(counts), func(i int) ([]any, error) {
		c := &counts[i]
		return []any{c.ID1, c.LinkType, int32(c.Count), c.Time, c.Version}, nil
	})
	if err != nil {
		return fmt.Errorf("load counts: %w", err)
	}
	return nil
}

// EndLoad implements store.BulkLoader: builds the index when it is
// missing, moves the node sequence to at least MaxID1 and refreshes
// statistics; a partial load's EndLoad leaves all three to the process
// that finishes the graph.
func (s *Store) EndLoad(ctx context.Context, info store.LoadInfo) error {
	if info.Partial {
		return nil
	}
	var missing bool
	if err := s.pool.QueryRow(ctx, "SELECT to_regclass($1) IS NULL", s.linkIndex()).Scan(&missing); err != nil {
		return classify(err)
	}
	if missing {
		end := info.BeginStage("build index id1_type", info.Links)
		if err := s.underSchemaLock(ctx, sqlstore.Tables(s.t).LinkIndex()); err != nil {
			return fmt.Errorf("build index id1_type: %w", classify(err))
		}
		end()
	}
	end := info.BeginStage("set node sequence", 0)
	_, err := s.pool.Exec(ctx, "SELECT setval(pg_get_serial_sequence($1, 'id'), GREATEST($2::bigint, (SELECT COALESCE(max(id), 0) FROM "+s.t.Node+")), true)",
		s.t.Node, info.MaxID1-1) // quoted: pg_get_serial_sequence reads its argument as SQL
	if err != nil {
		return fmt.Errorf("set the node sequence: %w", classify(err))
	}
	end()
	for _, t := range []struct {
		name string
		rows int64
	}{{s.t.Link, info.Links}, {s.t.Count, info.Counts}, {s.t.Node, info.Nodes}} {
		end := info.BeginStage("analyze "+t.name, t.rows)
		if _, err := s.pool.Exec(ctx, "ANALYZE "+t.name); err != nil {
			return classify(err)
		}
		end()
	}
	return nil
}

// Reset implements store.Resetter.
func (s *Store) Reset(ctx context.Context) error {
	_, err := s.pool.Exec(ctx, "TRUNCATE "+s.t.Link+", "+s.t.Count+", "+s.t.Node+", "+s.metaTable()+" RESTART IDENTITY")
	return classify(err)
}

// IsEmpty implements store.EmptyChecker.
func (s *Store) IsEmpty(ctx context.Context) (bool, error) {
	for _, t := range []string{s.t.Link, s.t.Count, s.t.Node} {
		var any bool
		if err := s.pool.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM "+t+")").Scan(&any); err != nil {
			return false, classify(err)
		}
		if any {
			return false, nil
		}
	}
	return true, nil
}

// GetMeta implements store.MetaStore.
func (s *Store) GetMeta(ctx context.Context) (map[string]string, error) {
	rows, err := s.pool.Query(ctx, sqlstore.MetaQuery(s.metaTable()))
	if err != nil {
		return nil, classify(err)
	}
	defer rows.Close()
	return sqlstore.ReadMeta(rows, classify)
}

// PutMeta implements store.MetaStore.
func (s *Store) PutMeta(ctx context.Context, meta map[string]string) error {
	return classify(pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "DELETE FROM "+s.metaTable()); err != nil {
			return err
		}
		for k, v := range meta {
			if _, err := tx.Exec(ctx, "INSERT INTO "+s.metaTable()+" (k, v) VALUES ($1, $2)", k, v); err != nil {
				return err
			}
		}
		return nil
	}))
}

// UpdateMeta implements store.Journaler.
func (s *Store) UpdateMeta(ctx context.Context, set map[string]string, deletePrefix string) error {
	return classify(pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if deletePrefix != "" {
			if _, err := tx.Exec(ctx, "DELETE FROM "+s.metaTable()+" WHERE substr(k, 1, $1) = $2", len(deletePrefix), deletePrefix); err != nil {
				return err
			}
		}
		// In key order, so that concurrent updates (the processes of a
		// --shard load) lock the rows in one order and cannot deadlock.
		for _, k := range slices.Sorted(maps.Keys(set)) {
			if _, err := tx.Exec(ctx, "INSERT INTO "+s.metaTable()+" (k, v) VALUES ($1, $2) ON CONFLICT (k) DO UPDATE SET v = EXCLUDED.v", k, set[k]); err != nil {
				return err
			}
		}
		return nil
	}))
}

// ClaimMeta implements store.Journaler. The read is a statement of its
// own: it sees the row of a claim that committed while the insert waited
// for it.
func (s *Store) ClaimMeta(ctx context.Context, key, value string) (string, error) {
	if _, err := s.pool.Exec(ctx, "INSERT INTO "+s.metaTable()+" (k, v) VALUES ($1, $2) ON CONFLICT (k) DO NOTHING", key, value); err != nil {
		return "", classify(err)
	}
	var held string
	if err := s.pool.QueryRow(ctx, "SELECT v FROM "+s.metaTable()+" WHERE k = $1", key).Scan(&held); err != nil {
		return "", classify(err)
	}
	return held, nil
}

// ScanCounts implements store.Scanner.
func (s *Store) ScanCounts(ctx context.Context, fn func(graph.Count) error) error {
	rows, err := s.pool.Query(ctx, sqlstore.Tables(s.t).CountsQuery())
	if err != nil {
		return classify(err)
	}
	defer rows.Close()
	return sqlstore.EachCount(rows, classify, fn)
}

// ScanVisibleLinkCounts implements store.Scanner.
func (s *Store) ScanVisibleLinkCounts(ctx context.Context, fn func(id1, lt, n int64) error) error {
	rows, err := s.pool.Query(ctx, sqlstore.Tables(s.t).VisibleCountsQuery())
	if err != nil {
		return classify(err)
	}
	defer rows.Close()
	return sqlstore.EachVisibleCount(rows, classify, fn)
}

// NodeIDRange implements store.Scanner.
func (s *Store) NodeIDRange(ctx context.Context) (lo, hi int64, ok bool, err error) {
	var a, b *int64
	if err := s.pool.QueryRow(ctx, sqlstore.Tables(s.t).NodeIDRangeQuery()).Scan(&a, &b); err != nil {
		return 0, 0, false, classify(err)
	}
	if a == nil {
		return 0, 0, false, nil
	}
	return *a, *b, true, nil
}

// SizeOnDisk implements store.Sizer: our tables with indexes and TOAST.
func (s *Store) SizeOnDisk(ctx context.Context) (int64, error) {
	var n int64
	err := s.pool.QueryRow(ctx, "SELECT pg_total_relation_size($1::regclass) + pg_total_relation_size($2::regclass) + pg_total_relation_size($3::regclass)",
		s.t.Link, s.t.Count, s.t.Node).Scan(&n)
	return n, classify(err)
}

// Describe implements store.Describer.
func (s *Store) Describe(ctx context.Context) (store.Description, error) {
	var v string
	if err := s.pool.QueryRow(ctx, "SELECT version()").Scan(&v); err != nil {
		return store.Description{}, classify(err)
	}
	d := store.Description{Version: v, Settings: map[string]string{"server": s.addr, "database": s.db, "schema": s.schema, "io_mode": s.ioMode.String(),
		store.LinkWritesKey: "reference"}}
	if s.useFunc {
		d.Settings[store.LinkWritesKey] = "routine (SELECT " + s.writeFunc() + "(...))"
	}
	for _, k := range []string{"fsync", "synchronous_commit", "full_page_writes", "shared_buffers", "wal_level", "default_transaction_isolation"} {
		var val string
		if err := s.pool.QueryRow(ctx, "SELECT current_setting($1)", k).Scan(&val); err == nil {
			d.Settings[k] = val
		}
	}
	return d, nil
}

// Servers implements store.ServerLocator. The data directory (readable by
// superusers and members of pg_read_all_settings) holds postmaster.pid,
// whose first line is the postmaster's pid.
func (s *Store) Servers(ctx context.Context) ([]store.ServerInfo, error) {
	info := store.ServerInfo{Addr: s.addr}
	var dir string
	if err := s.pool.QueryRow(ctx, "SELECT current_setting('data_directory')").Scan(&dir); err == nil {
		info.DataDir, info.PIDFile = dir, dir+"/postmaster.pid"
	} else if ctx.Err() != nil {
		return nil, classify(err)
	}
	return []store.ServerInfo{info}, nil
}

// BulkBatchRows implements store.BatchHinter: COPY pays a round trip per
// batch, so batches of 8192 rows load about 1.7 times faster than 1024.
func (s *Store) BulkBatchRows() int { return 8192 }
