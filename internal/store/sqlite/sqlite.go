package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/linkbench/linkbench/internal/graph"
	"github.com/linkbench/linkbench/internal/store"
	"github.com/linkbench/linkbench/internal/store/sqlstore"
	sqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Name is the store's registered name.
const Name = "sqlite"

func init() {
	store.Register(store.Driver{
		Abilities: abilities,
		Name:      Name,
		Embedded:  true,
		Aliases:   []string{"com.facebook.LinkBench.LinkStoreSqlite"},
		Keys: []store.KeyDoc{
			{Name: "sqlite_path", Doc: "database file (default <data_dir>/linkbench.db)"},
			{Name: "sqlite_synchronous", Default: "FULL", Doc: "FULL (durable), NORMAL or OFF"},
			{Name: "sqlite_load_synchronous", Default: "OFF", Doc: "synchronous setting during a bulk load"},
			{Name: "sqlite_cache_mb", Default: "64", Doc: "page cache per connection in MiB"},
			{Name: "defer_index", Default: "true", Doc: "build the id1_type index after a bulk load"},
		},
		Open: func(ctx context.Context, o store.Options) (store.Store, error) { return Open(ctx, o) },
		// The database file, its WAL and shared-memory file per connection.
		FilesPerWorker: 3,
	})
}

// Store is the SQLite store.
type Store struct {
	path       string
	sync       string
	loadSync   string
	deferIndex bool
	t          store.Tables // quoted for SQL
	raw        store.Tables // as named
	w          *sql.DB      // the one writer connection
	r          *sql.DB      // readers
	stmts      stmts
}

func validSync(key, v string) (string, error) {
	switch s := strings.ToUpper(v); s {
	case "FULL", "NORMAL", "OFF", "EXTRA":
		return s, nil
	}
	return "", fmt.Errorf("%s = %q: expected FULL, NORMAL or OFF", key, v)
}

// Open opens (creating if needed) the database file.
func Open(ctx context.Context, o store.Options) (*Store, error) {
	p := o.Props
	path := store.String(p, "sqlite_path", "")
	if path == "" {
		path = filepath.Join(store.String(p, "data_dir", "./linkbench-data"), "linkbench.db")
	}
	syncMode, err := validSync("sqlite_synchronous", store.String(p, "sqlite_synchronous", "FULL"))
	if err != nil {
		return nil, err
	}
	loadSync, err := validSync("sqlite_load_synchronous", store.String(p, "sqlite_load_synchronous", "OFF"))
	if err != nil {
		return nil, err
	}
	cacheMB, err := store.Int(p, "sqlite_cache_mb", 64)
	if err != nil {
		return nil, err
	}
	deferIdx, err := store.Bool(p, "defer_index", true)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("cannot create the directory of %s: %v; set data_dir (or sqlite_path) to a writable directory", path, unwrapPath(err))
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return nil, fmt.Errorf("%s is a directory, not a database file; set sqlite_path to a file", path)
	}
	raw := store.TableNames(p)
	if err := ident.CheckTables(p, raw, ""); err != nil {
		return nil, err
	}
	s := &Store{path: path, sync: syncMode, loadSync: loadSync, deferIndex: deferIdx, raw: raw,
		t: store.Tables{Link: quote(raw.Link), Count: quote(raw.Count), Node: quote(raw.Node)}}
	base := "file:" + path + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=foreign_keys(0)" +
		fmt.Sprintf("&_pragma=cache_size(-%d)", cacheMB*1024)
	if s.w, err = sql.Open("sqlite", base+"&_txlock=immediate&_pragma=synchronous("+syncMode+")"); err != nil {
		return nil, err
	}
	s.w.SetMaxOpenConns(1)
	s.w.SetMaxIdleConns(1)
	s.w.SetConnMaxLifetime(0)
	if s.r, err = sql.Open("sqlite", base+"&_pragma=query_only(1)"); err != nil {
		s.w.Close()
		return nil, err
	}
	n := max(o.Concurrency, 1) + 1
	s.r.SetMaxOpenConns(n)
	s.r.SetMaxIdleConns(n)
	// Touch the file now, so an unwritable path or a corrupt file is
	// reported at open time with one clear message.
	var mode string
	if err := s.w.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		s.Close()
		return nil, s.openError(err)
	}
	if _, err := s.w.ExecContext(ctx, "SELECT count(*) FROM sqlite_master"); err != nil {
		s.Close()
		return nil, s.openError(err)
	}
	return s, nil
}

// ident writes names into SQLite's statements (it has no length limit).
var ident = store.Identifier{Mark: '"', Server: "SQLite"}

// quote makes a table name an SQL identifier, whatever its characters:
// a name never changes a statement.
func quote(name string) string { return ident.Quote(name) }

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// openError turns a failure to open the file into one clear line.
func (s *Store) openError(err error) error {
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_CORRUPT:
			return fmt.Errorf("%s is not a SQLite database or is corrupt; remove it or point sqlite_path elsewhere", s.path)
		case sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_READONLY, sqlite3.SQLITE_PERM:
			return fmt.Errorf("cannot open %s for writing (%s); set data_dir (or sqlite_path) to a writable directory", s.path, se.Error())
		}
	}
	return fmt.Errorf("open %s: %w", s.path, err)
}

// classify maps driver errors to the graph error kinds.
func classify(err error) error {
	if err == nil {
		return nil
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
			return graph.Transient(err)
		}
	}
	return err
}

// Lock implements store.Locker with lock files beside the database.
func (s *Store) Lock(ctx context.Context, mode store.LockMode, holder string) (func(), error) {
	return store.FileLock{Path: s.path}.Lock(ctx, mode, holder)
}

// Addr implements store.Addresser.
func (s *Store) Addr() string { return s.path }

// Close implements store.Store.
func (s *Store) Close() error {
	s.stmts.close()
	var errs []error
	if s.r != nil {
		errs = append(errs, s.r.Close())
	}
	if s.w != nil {
		errs = append(errs, s.w.Close())
	}
	return errors.Join(errs...)
}

// Init implements store.Initializer.
func (s *Store) Init(ctx context.Context, drop bool) error {
	t := s.t
	var ddl []string
	if drop {
		ddl = append(ddl, "DROP TABLE IF EXISTS "+t.Link, "DROP TABLE IF EXISTS "+t.Count, "DROP TABLE IF EXISTS "+t.Node, "DROP TABLE IF EXISTS "+store.MetaTable)
	}
	ddl = append(ddl,
		`CREATE TABLE IF NOT EXISTS `+t.Link+` (
  id1 INTEGER NOT NULL, id2 INTEGER NOT NULL, link_type INTEGER NOT NULL,
  visibility INTEGER NOT NULL, data BLOB NOT NULL, time INTEGER NOT NULL, version INTEGER NOT NULL,
  PRIMARY KEY (link_type, id1, id2)) WITHOUT ROWID`,
		sqlstore.Tables(t).LinkIndex(),
		`CREATE TABLE IF NOT EXISTS `+t.Count+` (
  id INTEGER NOT NULL, link_type INTEGER NOT NULL, count INTEGER NOT NULL, time INTEGER NOT NULL, version INTEGER NOT NULL,
  PRIMARY KEY (id, link_type)) WITHOUT ROWID`,
		`CREATE TABLE IF NOT EXISTS `+t.Node+` (
  id INTEGER PRIMARY KEY AUTOINCREMENT, type INTEGER NOT NULL, version INTEGER NOT NULL, time INTEGER NOT NULL, data BLOB NOT NULL)`,
		`CREATE TABLE IF NOT EXISTS `+store.MetaTable+` (k TEXT PRIMARY KEY, v TEXT NOT NULL)`,
	)
	s.stmts.close()
	// One transaction: the list index is made with its table only.
	// Afterwards it belongs to the loads (one that dropped it builds it
	// when the graph is finished), and a process that starts while others
	// load (a late --shard) must not build it under their inserts.
	err := s.writeTx(ctx, func(tx *sql.Tx) error {
		var linkTable int
		if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?", s.raw.Link).Scan(&linkTable); err != nil {
			return err
		}
		for _, q := range ddl {
			if linkTable > 0 && !drop && q == sqlstore.Tables(t).LinkIndex() {
				continue
			}
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("%s: %w", firstLine(q), classify(err))
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return s.CheckSchema(ctx)
}

func firstLine(q string) string {
	if i := strings.IndexByte(q, '\n'); i > 0 {
		return q[:i]
	}
	return q
}

// CheckSchema reports a missing table or column, and an integer column
// whose declared type gives it REAL or TEXT affinity (SQLite would turn
// 64-bit ids into floats or strings), with the fix.
func (s *Store) CheckSchema(ctx context.Context) error {
	for _, tc := range []struct {
		logical, name string
		cols          []string
	}{{"link", s.raw.Link, store.Columns.Link}, {"count", s.raw.Count, store.Columns.Count}, {"node", s.raw.Node, store.Columns.Node}, {"meta", store.MetaTable, store.Columns.Meta}} {
		rows, err := s.r.QueryContext(ctx, "SELECT name, type FROM pragma_table_info(?)", tc.name)
		if err != nil {
			return s.openError(err)
		}
		have := map[string]string{}
		for rows.Next() {
			var n, typ string
			if err := rows.Scan(&n, &typ); err != nil {
				rows.Close()
				return err
			}
			have[strings.ToLower(n)] = typ
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("read the columns of %s: %w", tc.name, classify(err))
		}
		if len(have) == 0 {
			return graph.Schema(fmt.Errorf("table %s is missing in %s; run `linkbench init` (or `linkbench load`) to create the schema", tc.name, s.path))
		}
		for _, c := range tc.cols {
			typ, ok := have[c]
			if !ok {
				return graph.Schema(fmt.Errorf("table %s in %s has no column %s: it was not created by linkbench; run `linkbench init --drop` to recreate it (this deletes its data) or point sqlite_path elsewhere", tc.name, s.path, c))
			}
			if n := store.Needs[tc.logical][c]; n.Bits > 0 {
				if a := affinity(typ); a != "INTEGER" && a != "NUMERIC" {
					return store.TypeError(tc.name, c, fmt.Sprintf("%q (%s affinity)", typ, a), "INTEGER", n, s.path)
				}
			}
		}
	}
	return nil
}

// affinity is SQLite's column affinity of a declared type (section 3.1 of
// its datatype documentation).
func affinity(declared string) string {
	t := strings.ToUpper(declared)
	switch {
	case strings.Contains(t, "INT"):
		return "INTEGER"
	case strings.Contains(t, "CHAR") || strings.Contains(t, "CLOB") || strings.Contains(t, "TEXT"):
		return "TEXT"
	case strings.Contains(t, "BLOB") || t == "":
		return "BLOB"
	case strings.Contains(t, "REAL") || strings.Contains(t, "FLOA") || strings.Contains(t, "DOUB"):
		return "REAL"
	}
	return "NUMERIC"
}

// DataPath implements store.DataPather: the database file.
func (s *Store) DataPath() string { return s.path }
