package mysql

import (
	"context"
	"fmt"
	"strings"

	"github.com/linkbench/linkbench/internal/graph"
	"github.com/linkbench/linkbench/internal/store"
)

// ident writes names into MySQL's statements: every table and procedure
// name of the store goes through q.
var ident = store.Identifier{Mark: '`', MaxBytes: 64, Server: "MySQL"}

func q(name string) string { return ident.Quote(name) }

// procPrefix begins the write procedure's name; the link table's follows.
const procPrefix = "linkbench_write_"

const indexCols = "(`id1`, `link_type`, `visibility`, `time`, `id2`, `version`, `data`)"

// ddl is the reference's schema with the configured engine.
func (s *Store) ddl() []string {
	engine := map[string]string{"innodb": "InnoDB", "rocksdb": "ROCKSDB"}[s.engine]
	part := ""
	if s.partitions > 0 {
		part = fmt.Sprintf(" PARTITION BY KEY(id1) PARTITIONS %d", s.partitions)
	}
	return []string{
		"CREATE TABLE IF NOT EXISTS " + q(s.t.Link) + ` (
  id1 bigint(20) unsigned NOT NULL DEFAULT '0',
  id2 bigint(20) unsigned NOT NULL DEFAULT '0',
  link_type bigint(20) unsigned NOT NULL DEFAULT '0',
  visibility tinyint(3) NOT NULL DEFAULT '0',
  data varchar(255) NOT NULL DEFAULT '',
  time bigint(20) unsigned NOT NULL DEFAULT '0',
  version int(11) unsigned NOT NULL DEFAULT '0',
  PRIMARY KEY (link_type, id1, id2),
  KEY id1_type ` + indexCols + `
) ENGINE=` + engine + ` DEFAULT CHARSET=latin1` + part,
		"CREATE TABLE IF NOT EXISTS " + q(s.t.Count) + ` (
  id bigint(20) unsigned NOT NULL DEFAULT '0',
  link_type bigint(20) unsigned NOT NULL DEFAULT '0',
  count int(10) unsigned NOT NULL DEFAULT '0',
  time bigint(20) unsigned NOT NULL DEFAULT '0',
  version bigint(20) unsigned NOT NULL DEFAULT '0',
  PRIMARY KEY (id, link_type)
) ENGINE=` + engine + ` DEFAULT CHARSET=latin1`,
		"CREATE TABLE IF NOT EXISTS " + q(s.t.Node) + ` (
  id bigint(20) unsigned NOT NULL AUTO_INCREMENT,
  type int(10) unsigned NOT NULL,
  version bigint(20) unsigned NOT NULL,
  time int(10) unsigned NOT NULL,
  data mediumtext NOT NULL,
  PRIMARY KEY (id)
) ENGINE=` + engine + ` DEFAULT CHARSET=latin1`,
		"CREATE TABLE IF NOT EXISTS " + q(store.MetaTable) + " (k varchar(64) NOT NULL PRIMARY KEY, v text NOT NULL) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4",
	}
}

// Init implements store.Initializer.
func (s *Store) Init(ctx context.Context, drop bool) error {
	var support string
	err := s.r.QueryRowContext(ctx, "SELECT support FROM information_schema.engines WHERE engine = ?", s.engine).Scan(&support)
	if s.kind == "TiDB" {
		// TiDB has its own storage and accepts (and ignores) ENGINE=.
		err, support = nil, "YES"
	}
	if err != nil || (support != "YES" && support != "DEFAULT") {
		hint := ""
		if s.engine == "rocksdb" {
			hint = " (start the server with --plugin-load-add=ha_rocksdb; scripts/mariadb.sh does)"
		}
		return fmt.Errorf("the %s engine is not available in the server at %s%s", s.engine, s.addr, hint)
	}
	s.st.close()
	if drop {
		for _, t := range []string{s.t.Link, s.t.Count, s.t.Node, store.MetaTable} {
			if _, err := s.w.ExecContext(ctx, "DROP TABLE IF EXISTS "+q(t)); err != nil {
				return fmt.Errorf("drop %s: %w", t, classify(err))
			}
		}
	}
	for _, stmt := range s.ddl() {
		if _, err := s.w.ExecContext(ctx, stmt); err != nil {
			first, _, _ := strings.Cut(stmt, "\n")
			return fmt.Errorf("%s: %w", first, classify(err))
		}
	}
	if err := s.createProc(ctx); err != nil {
		return fmt.Errorf("create procedure %s: %w", s.writeProc(), err)
	}
	return s.CheckSchema(ctx)
}

// CheckSchema reports a missing table or column, and a column whose type
// cannot hold its values (a table made beforehand with time int would
// clamp every link time to 2147483647), with the server and the fix.
func (s *Store) CheckSchema(ctx context.Context) error {
	for _, tc := range []struct {
		logical, name string
		cols          []string
	}{{"link", s.t.Link, store.Columns.Link}, {"count", s.t.Count, store.Columns.Count}, {"node", s.t.Node, store.Columns.Node}, {"meta", store.MetaTable, store.Columns.Meta}} {
		rows, err := s.r.QueryContext(ctx, "SELECT column_name, data_type, column_type, coalesce(character_maximum_length, 0) FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name = ?", tc.name)
		if err != nil {
			return classify(err)
		}
		type col struct {
			typ, shown string
			length     int64
		}
		have := map[string]col{}
		for rows.Next() {
			var c string
			var t col
			if err := rows.Scan(&c, &t.typ, &t.shown, &t.length); err != nil {
				rows.Close()
				return err
			}
			have[strings.ToLower(c)] = t
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("read the columns of %s: %w", tc.name, classify(err))
		}
		if len(have) == 0 {
			return graph.Schema(fmt.Errorf("table %s.%s is missing at %s; run `linkbench init` (or `linkbench load`) to create the schema", s.db, tc.name, s.addr))
		}
		for _, c := range tc.cols {
			t, ok := have[c]
			if !ok {
				return graph.Schema(fmt.Errorf("table %s.%s at %s has no column %s; run `linkbench init --drop` to recreate it (this deletes its data)", s.db, tc.name, s.addr, c))
			}
			if n := store.Needs[tc.logical][c]; !mysqlTypeHolds(strings.ToLower(t.typ), t.length, n) {
				return store.TypeError(s.db+"."+tc.name, c, t.shown, n.Want(mysqlTypes), n, s.addr)
			}
		}
	}
	return nil
}

// mysqlTypeHolds reports whether a column of data type typ (and maximum
// length, for strings) can hold the values n describes.
func mysqlTypeHolds(typ string, length int64, n store.Need) bool {
	switch {
	case n.Bits > 0:
		bits := map[string]int{"tinyint": 8, "smallint": 16, "mediumint": 24, "int": 32, "bigint": 64}[typ]
		return bits >= n.Bits
	case n.Bytes > 0:
		switch typ {
		case "varchar", "varbinary", "char", "binary", "tinytext", "tinyblob", "text", "blob", "mediumtext", "mediumblob", "longtext", "longblob":
			return length >= int64(n.Bytes)
		}
		return false
	}
	return strings.Contains(typ, "char") || strings.Contains(typ, "text")
}

// mysqlTypes name the types that hold each need.
var mysqlTypes = store.TypeNames{Int64: "bigint", Int32: "int or bigint", Small: "tinyint or a larger integer",
	Payload: "varchar(255), varbinary(255) or a text or blob type", LargePayload: "mediumtext, mediumblob or larger", Text: "varchar or text"}
