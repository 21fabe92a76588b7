package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/linkbench/linkbench/internal/graph"
	"github.com/linkbench/linkbench/internal/store"
	"github.com/linkbench/linkbench/internal/store/sqlstore"
)

// ident writes names into PostgreSQL's statements: every table, schema
// and function name of the store goes through it (or through pgx's
// Identifier, which quotes the same way).
var ident = store.Identifier{Mark: '"', MaxBytes: 63, Server: "PostgreSQL"}

// writeFuncPrefix begins the write function's name; the link table's
// name follows.
const writeFuncPrefix = "linkbench_write_"

// checkNames refuses, before any connection, a schema or table name that
// PostgreSQL cannot take whole.
func checkNames(p store.Props, schema string, t store.Tables) error {
	key := "pg_schema"
	if store.String(p, key, "") == "" {
		key = store.DatabaseKey(p)
	}
	if err := ident.Check(key, p.Where(key), "", schema); err != nil {
		return err
	}
	return ident.CheckTables(p, t, writeFuncPrefix)
}

// qualified is the quoted name of the schema's object name.
func (s *Store) qualified(name string) string { return ident.Quote(s.schema) + "." + ident.Quote(name) }

func (s *Store) metaTable() string { return s.qualified(store.MetaTable) }

func (s *Store) writeFunc() string { return s.qualified(writeFuncPrefix + s.raw.Link) }

// ddl is the schema: the reference's tables with bigint ids and bytea data.
func (s *Store) ddl() []string {
	t := s.t
	return []string{
		"CREATE SCHEMA IF NOT EXISTS " + ident.Quote(s.schema),
		`CREATE TABLE IF NOT EXISTS ` + t.Link + ` (
  id1 bigint NOT NULL DEFAULT 0, id2 bigint NOT NULL DEFAULT 0, link_type bigint NOT NULL DEFAULT 0,
  visibility smallint NOT NULL DEFAULT 0, data bytea NOT NULL DEFAULT '', time bigint NOT NULL DEFAULT 0,
  version bigint NOT NULL DEFAULT 0, PRIMARY KEY (link_type, id1, id2))`,
		sqlstore.Tables(t).LinkIndex(),
		`CREATE TABLE IF NOT EXISTS ` + t.Count + ` (
  id bigint NOT NULL DEFAULT 0, link_type bigint NOT NULL DEFAULT 0, count int NOT NULL DEFAULT 0,
  time bigint NOT NULL DEFAULT 0, version bigint NOT NULL DEFAULT 0, PRIMARY KEY (id, link_type))`,
		`CREATE TABLE IF NOT EXISTS ` + t.Node + ` (
  id bigserial NOT NULL PRIMARY KEY, type int NOT NULL, version bigint NOT NULL, time int NOT NULL, data bytea NOT NULL)`,
		`CREATE TABLE IF NOT EXISTS ` + s.metaTable() + ` (k text PRIMARY KEY, v text NOT NULL)`,
		s.functionDDL(),
		"COMMENT ON FUNCTION " + s.writeFuncSig() + " IS '" + funcVersion + "'",
	}
}

// funcVersion is the write function's COMMENT. CheckSchema refuses a
// function made by an older linkbench (its count rule differs) and says to
// run init, which replaces it.
const funcVersion = "linkbench link writes 3"

// writeFuncSig is the write function with its argument types.
func (s *Store) writeFuncSig() string {
	return s.writeFunc() + "(bigint,bigint,bigint,smallint,bytea,bigint,bigint,bigint,integer)"
}

// functionDDL is the one-round-trip link write, in the reference's
// statements. p_mode: 0 upsert inserting first (ADD_LINK: the reference
// inserts, and on a duplicate key reads the link for update and rewrites
// it), 3 upsert reading first (UPDATE_LINK: read for update, insert when
// absent), 1 hide, 2 expunge (read for update, then update or delete). The
// count row is upserted last, only when a link is inserted or its
// visibility changes (graph.WritesCount), so every writer locks the link
// row before the count row and writers of one list hold the count row for
// one statement. It returns 0 unchanged / 1 inserted / 2 updated for
// upserts, and 0 absent / 1 existed for deletes.
//
// The body is one string literal (literal) and the table names in it are
// quoted as in every statement: no name can end the body or add a
// statement to the DDL. (It was dollar-quoted, $fn$ ... $fn$, and a schema
// named "a$fn$; DROP TABLE ...; SELECT $fn$" ended it: with
// check_function_bodies off the DROP ran.)
func (s *Store) functionDDL() string {
	body := strings.NewReplacer("{{LINKS}}", s.t.Link, "{{COUNTS}}", s.t.Count).Replace(`
DECLARE
  o_vis smallint; o_data bytea; o_time bigint; o_version bigint;
  delta int := 0; res int := 1; found_link boolean := false;
BEGIN
  IF p_mode = 0 OR p_mode = 3 THEN
    IF p_mode = 3 THEN
      SELECT visibility, data, time, version INTO o_vis, o_data, o_time, o_version
        FROM {{LINKS}} WHERE link_type = p_lt AND id1 = p_id1 AND id2 = p_id2 FOR UPDATE;
      found_link := FOUND;
    END IF;
    IF NOT found_link THEN
      INSERT INTO {{LINKS}} (id1, id2, link_type, visibility, data, time, version)
        VALUES (p_id1, p_id2, p_lt, p_vis, p_data, p_time, p_version) ON CONFLICT DO NOTHING;
      IF NOT FOUND THEN
        -- The key exists (or a concurrent insert of it committed first).
        SELECT visibility, data, time, version INTO o_vis, o_data, o_time, o_version
          FROM {{LINKS}} WHERE link_type = p_lt AND id1 = p_id1 AND id2 = p_id2 FOR UPDATE;
        IF NOT FOUND THEN
          RAISE EXCEPTION 'the link vanished between insert and read; try again' USING ERRCODE = '40001';
        END IF;
        found_link := true;
      ELSIF p_vis = 1 THEN
        delta := 1;
      END IF;
    END IF;
    IF found_link THEN
      IF o_vis = p_vis AND o_data = p_data AND o_time = p_time AND o_version = p_version THEN
        res := 0;
      ELSE
        UPDATE {{LINKS}} SET visibility = p_vis, data = p_data, time = p_time, version = p_version
          WHERE link_type = p_lt AND id1 = p_id1 AND id2 = p_id2;
        res := 2;
      END IF;
      IF o_vis <> 1 AND p_vis = 1 THEN delta := 1; ELSIF o_vis = 1 AND p_vis <> 1 THEN delta := -1; END IF;
      -- The visibility is kept: the count row is left as it was.
      IF delta = 0 THEN RETURN res; END IF;
    END IF;
  ELSE
    SELECT visibility INTO o_vis
      FROM {{LINKS}} WHERE link_type = p_lt AND id1 = p_id1 AND id2 = p_id2 FOR UPDATE;
    IF NOT FOUND THEN RETURN 0; END IF;
    IF p_mode = 2 THEN
      DELETE FROM {{LINKS}} WHERE link_type = p_lt AND id1 = p_id1 AND id2 = p_id2;
    ELSIF o_vis = 1 THEN
      UPDATE {{LINKS}} SET visibility = 0 WHERE link_type = p_lt AND id1 = p_id1 AND id2 = p_id2;
    END IF;
    IF o_vis <> 1 THEN RETURN 1; END IF;
    delta := -1;
  END IF;
  INSERT INTO {{COUNTS}} AS c (id, link_type, count, time, version) VALUES (p_id1, p_lt, GREATEST(delta, 0), p_now, 1)
    ON CONFLICT (id, link_type) DO UPDATE SET count = GREATEST(c.count + delta, 0), time = p_now, version = c.version + 1;
  RETURN res;
END
`)
	return "CREATE OR REPLACE FUNCTION " + s.writeFunc() + `(p_id1 bigint, p_lt bigint, p_id2 bigint, p_vis smallint, p_data bytea,
  p_time bigint, p_version bigint, p_now bigint, p_mode int) RETURNS int LANGUAGE plpgsql AS ` + literal(body)
}

// literal writes s as an escape string constant, E'...': its quotes and
// backslashes are doubled, so it reads back as s whatever
// standard_conforming_strings says.
func literal(s string) string {
	return "E'" + strings.NewReplacer(`\`, `\\`, "'", "''").Replace(s) + "'"
}

// Init implements store.Initializer.
//
// The DDL runs in one transaction holding an advisory lock named after the
// schema: the processes of a --shard load start together and each creates
// the schema, and concurrent CREATE ... IF NOT EXISTS (or CREATE OR REPLACE
// FUNCTION) of one object fail in PostgreSQL instead of waiting.
func (s *Store) Init(ctx context.Context, drop bool) error {
	if _, err := s.checkUsage(ctx); err != nil {
		return err
	}
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
		// The list index is made with its table. Afterwards it belongs to
		// the loads: one that dropped it builds it when the graph is
		// finished, and a process that starts while others load (a late
		// --shard) must not build it under their inserts.
		var linkTable bool
		if err := tx.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", s.t.Link).Scan(&linkTable); err != nil {
			return classify(err)
		}
		for _, q := range s.ddl() {
			if linkTable && q == sqlstore.Tables(s.t).LinkIndex() {
				continue
			}
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

// CheckSchema reports a missing schema, table or column, a schema the
// user may not use, and a column whose type cannot hold its values,
// naming the server and the fix. It reads pg_catalog, which (unlike
// information_schema) shows tables whatever the user's privileges.
func (s *Store) CheckSchema(ctx context.Context) error {
	if exists, err := s.checkUsage(ctx); err != nil {
		return err
	} else if !exists {
		return graph.Schema(fmt.Errorf("schema %s is missing in database %s at %s: the store holds no graph; `linkbench load` creates the schema and loads one", s.schema, s.db, s.addr))
	}
	for _, tc := range []struct {
		logical, name string
		cols          []string
	}{{"link", s.raw.Link, store.Columns.Link}, {"count", s.raw.Count, store.Columns.Count}, {"node", s.raw.Node, store.Columns.Node}, {"meta", store.MetaTable, store.Columns.Meta}} {
		rows, err := s.pool.Query(ctx, `SELECT a.attname, t.typname, format_type(a.atttypid, a.atttypmod)
			FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace JOIN pg_type t ON t.oid = a.atttypid
			WHERE n.nspname = $1 AND c.relname = $2 AND c.relkind IN ('r', 'p') AND a.attnum > 0 AND NOT a.attisdropped`, s.schema, tc.name)
		if err != nil {
			return classify(err)
		}
		have := map[string][2]string{}
		for rows.Next() {
			var c, typ, shown string
			if err := rows.Scan(&c, &typ, &shown); err != nil {
				rows.Close()
				return err
			}
			have[c] = [2]string{typ, shown}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("read the columns of %s: %w", tc.name, classify(err))
		}
		if len(have) == 0 {
			return graph.Schema(fmt.Errorf("table %s.%s is missing in database %s at %s: the store holds no graph; `linkbench load` creates the schema and loads one", s.schema, tc.name, s.db, s.addr))
		}
		for _, c := range tc.cols {
			typ, ok := have[c]
			if !ok {
				return graph.Schema(fmt.Errorf("table %s.%s at %s has no column %s; run `linkbench init --drop` to recreate it (this deletes its data)", s.schema, tc.name, s.addr, c))
			}
			if n := store.Needs[tc.logical][c]; !pgTypeHolds(typ[0], n) {
				return store.TypeError(s.schema+"."+tc.name, c, typ[1], n.Want(pgTypes), n, s.addr)
			}
		}
	}
	if !s.useFunc {
		return nil // the reference's statements need no function
	}
	var fn bool
	var comment *string
	if err := s.pool.QueryRow(ctx, "SELECT to_regprocedure($1) IS NOT NULL, obj_description(to_regprocedure($1), 'pg_proc')", s.writeFuncSig()).Scan(&fn, &comment); err != nil {
		return classify(err)
	}
	if !fn {
		return graph.Schema(fmt.Errorf("function %s is missing at %s (tables made by another tool?), and link_writes = routine calls it; run `linkbench init` to add it", s.writeFunc(), s.addr))
	}
	if comment == nil || *comment != funcVersion {
		return graph.Schema(fmt.Errorf("function %s at %s was made by an older linkbench (its count rule differs); run `linkbench init` to replace it (the data is kept)", s.writeFunc(), s.addr))
	}
	return nil
}

// checkUsage reports whether the schema exists, and fails when the user
// may not use it (without USAGE its tables look missing to the user).
func (s *Store) checkUsage(ctx context.Context) (bool, error) {
	var usage bool
	err := s.pool.QueryRow(ctx, "SELECT has_schema_privilege(oid, 'USAGE') FROM pg_namespace WHERE nspname = $1", s.schema).Scan(&usage)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, classify(err)
	}
	if !usage {
		var user string
		s.pool.QueryRow(ctx, "SELECT current_user").Scan(&user)
		return true, graph.Schema(fmt.Errorf("user %q has no USAGE privilege on schema %s of database %s at %s, so it cannot use the tables in it; grant it (GRANT USAGE ON SCHEMA %s TO %s) or set pg_schema to a schema of its own",
			user, s.schema, s.db, s.addr, ident.Quote(s.schema), ident.Quote(user)))
	}
	return true, nil
}

// pgTypeHolds reports whether a column of type typ (pg_type.typname) can
// hold the values n describes.
func pgTypeHolds(typ string, n store.Need) bool {
	switch {
	case n.Bits > 0:
		bits := map[string]int{"int2": 16, "int4": 32, "int8": 64, "numeric": 64}[typ]
		return bits >= n.Bits
	case n.Bytes > 0:
		return typ == "bytea" // text would refuse bytes that are not UTF-8
	}
	return typ == "text" || typ == "varchar" || typ == "bpchar"
}

// pgTypes name the types that hold each need.
var pgTypes = store.TypeNames{Int64: "bigint", Int32: "integer or bigint", Small: "smallint, integer or bigint",
	Payload: "bytea", LargePayload: "bytea", Text: "text"}
