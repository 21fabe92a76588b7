package postgres

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/linkbench/linkbench/internal/graph"
	"github.com/linkbench/linkbench/internal/store"
)

func (s *Store) metaTable() string { return pgx.Identifier{s.schema, store.MetaTable}.Sanitize() }

func (s *Store) writeFunc() string {
	return pgx.Identifier{s.schema, "linkbench_write_" + s.raw.Link}.Sanitize()
}

// ddl is the schema: the reference's tables with bigint ids and bytea data.
func (s *Store) ddl() []string {
	t := s.t
	return []string{
		"CREATE SCHEMA IF NOT EXISTS " + pgx.Identifier{s.schema}.Sanitize(),
		`CREATE TABLE IF NOT EXISTS ` + t.Link + ` (
  id1 bigint NOT NULL DEFAULT 0, id2 bigint NOT NULL DEFAULT 0, link_type bigint NOT NULL DEFAULT 0,
  visibility smallint NOT NULL DEFAULT 0, data bytea NOT NULL DEFAULT '', time bigint NOT NULL DEFAULT 0,
  version bigint NOT NULL DEFAULT 0, PRIMARY KEY (link_type, id1, id2))`,
		`CREATE INDEX IF NOT EXISTS id1_type ON ` + t.Link + ` (id1, link_type, visibility, time, id2, version, data)`,
		`CREATE TABLE IF NOT EXISTS ` + t.Count + ` (
  id bigint NOT NULL DEFAULT 0, link_type bigint NOT NULL DEFAULT 0, count int NOT NULL DEFAULT 0,
  time bigint NOT NULL DEFAULT 0, version bigint NOT NULL DEFAULT 0, PRIMARY KEY (id, link_type))`,
		`CREATE TABLE IF NOT EXISTS ` + t.Node + ` (
  id bigserial NOT NULL PRIMARY KEY, type int NOT NULL, version bigint NOT NULL, time int NOT NULL, data bytea NOT NULL)`,
		`CREATE TABLE IF NOT EXISTS ` + s.metaTable() + ` (k text PRIMARY KEY, v text NOT NULL)`,
		s.functionDDL(),
	}
}

// functionDDL is the one-round-trip link write. p_mode: 0 upsert, 1 hide,
// 2 expunge. It returns 0 unchanged / 1 inserted / 2 updated for upserts,
// and 0 absent / 1 existed for deletes.
func (s *Store) functionDDL() string {
	return strings.NewReplacer("{{LINKS}}", s.t.Link, "{{COUNTS}}", s.t.Count, "{{FUNC}}", s.writeFunc()).Replace(`
CREATE OR REPLACE FUNCTION {{FUNC}}(p_id1 bigint, p_lt bigint, p_id2 bigint, p_vis smallint, p_data bytea,
  p_time bigint, p_version bigint, p_now bigint, p_mode int) RETURNS int LANGUAGE plpgsql AS $fn$
DECLARE
  o_vis smallint; o_data bytea; o_time bigint; o_version bigint;
  delta int := 0; res int := 1; created boolean;
BEGIN
  -- Lock the count row first: it serialises all writers of (id1, link_type).
  INSERT INTO {{COUNTS}} AS c (id, link_type, count, time, version) VALUES (p_id1, p_lt, 0, p_now, 0)
    ON CONFLICT (id, link_type) DO UPDATE SET version = c.version
    RETURNING (xmax = 0) INTO created;
  SELECT visibility, data, time, version INTO o_vis, o_data, o_time, o_version
    FROM {{LINKS}} WHERE link_type = p_lt AND id1 = p_id1 AND id2 = p_id2;
  IF p_mode = 0 THEN
    IF NOT FOUND THEN
      INSERT INTO {{LINKS}} (id1, id2, link_type, visibility, data, time, version)
        VALUES (p_id1, p_id2, p_lt, p_vis, p_data, p_time, p_version);
      IF p_vis = 1 THEN delta := 1; END IF;
    ELSE
      IF o_vis = p_vis AND o_data = p_data AND o_time = p_time AND o_version = p_version THEN
        res := 0;
      ELSE
        UPDATE {{LINKS}} SET visibility = p_vis, data = p_data, time = p_time, version = p_version
          WHERE link_type = p_lt AND id1 = p_id1 AND id2 = p_id2;
        res := 2;
      END IF;
      IF o_vis <> 1 AND p_vis = 1 THEN delta := 1; ELSIF o_vis = 1 AND p_vis <> 1 THEN delta := -1; END IF;
    END IF;
  ELSE
    IF NOT FOUND THEN
      IF created THEN DELETE FROM {{COUNTS}} WHERE id = p_id1 AND link_type = p_lt; END IF;
      RETURN 0;
    END IF;
    IF p_mode = 2 THEN
      DELETE FROM {{LINKS}} WHERE link_type = p_lt AND id1 = p_id1 AND id2 = p_id2;
    ELSIF o_vis = 1 THEN
      UPDATE {{LINKS}} SET visibility = 0 WHERE link_type = p_lt AND id1 = p_id1 AND id2 = p_id2;
    END IF;
    IF o_vis <> 1 THEN
      IF created THEN DELETE FROM {{COUNTS}} WHERE id = p_id1 AND link_type = p_lt; END IF;
      RETURN 1;
    END IF;
    delta := -1;
  END IF;
  UPDATE {{COUNTS}} SET count = GREATEST(count + delta, 0), time = p_now, version = version + 1
    WHERE id = p_id1 AND link_type = p_lt;
  RETURN res;
END
$fn$`)
}

// Init implements store.Initializer.
//
// The DDL runs in one transaction holding an advisory lock named after the
// schema: the processes of a --shard load start together and each creates
// the schema, and concurrent CREATE ... IF NOT EXISTS (or CREATE OR REPLACE
// FUNCTION) of one object fail in PostgreSQL instead of waiting.
func (s *Store) Init(ctx context.Context, drop bool) error {
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtext($1))", "linkbench init "+s.schema); err != nil {
			return classify(err)
		}
		if drop {
			for _, t := range []string{s.t.Link, s.t.Count, s.t.Node, s.metaTable()} {
				if _, err := tx.Exec(ctx, "DROP TABLE IF EXISTS "+t); err != nil {
					return fmt.Errorf("drop %s: %w", t, classify(err))
				}
			}
		}
		for _, q := range s.ddl() {
			if _, err := tx.Exec(ctx, q); err != nil {
				first, _, _ := strings.Cut(strings.TrimSpace(q), "\n")
				return fmt.Errorf("%s: %w", first, classify(err))
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return s.CheckSchema(ctx)
}

// CheckSchema reports a missing table or column, naming the server and fix.
func (s *Store) CheckSchema(ctx context.Context) error {
	for _, tc := range []struct {
		name string
		cols []string
	}{{s.raw.Link, store.Columns.Link}, {s.raw.Count, store.Columns.Count}, {s.raw.Node, store.Columns.Node}, {store.MetaTable, store.Columns.Meta}} {
		rows, err := s.pool.Query(ctx, "SELECT column_name FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2", s.schema, tc.name)
		if err != nil {
			return classify(err)
		}
		have := map[string]bool{}
		for rows.Next() {
			var c string
			if err := rows.Scan(&c); err != nil {
				rows.Close()
				return err
			}
			have[c] = true
		}
		rows.Close()
		if len(have) == 0 {
			return graph.Schema(fmt.Errorf("table %s.%s is missing in database %s at %s; run `linkbench init` (or `linkbench load`) to create the schema", s.schema, tc.name, s.db, s.addr))
		}
		for _, c := range tc.cols {
			if !have[c] {
				return graph.Schema(fmt.Errorf("table %s.%s at %s has no column %s; run `linkbench init --drop` to recreate it (this deletes its data)", s.schema, tc.name, s.addr, c))
			}
		}
	}
	var fn bool
	if err := s.pool.QueryRow(ctx, "SELECT to_regprocedure($1) IS NOT NULL", s.writeFunc()+"(bigint,bigint,bigint,smallint,bytea,bigint,bigint,bigint,integer)").Scan(&fn); err != nil {
		return classify(err)
	}
	if !fn {
		return graph.Schema(fmt.Errorf("function %s is missing at %s (tables made by another tool?); run `linkbench init` to add it", s.writeFunc(), s.addr))
	}
	return nil
}
