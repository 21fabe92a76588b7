package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/linkbench/linkbench/internal/store/storetest"
)

// TestHostileNamesRefusedByTheConfig: every key whose value names a table,
// schema or database in SQL statements is checked by the one rule of the
// config (at most 47 letters, digits, '_', and '-' in schema and database
// names), on every SQL store, before the store is opened; before,
// pg_schema was not checked at all. An empty value means the key's
// default.
// Reliability(input): a quote, backtick, `$fn$`, `;`, unicode or 300 characters in `linktable`, `counttable`, `nodetable`, `dbid`, `dbprefix`, `pg_schema` or `pg_database` (SQLite, PostgreSQL, MySQL) | refused before the store is opened: one line naming the key, its origin and the rule (at most 47 letters, digits, `_`, and `-` in schema and database names); an empty value is the key's default
func TestHostileNamesRefusedByTheConfig(t *testing.T) {
	dir := t.TempDir()
	for _, st := range []string{"sqlite", "postgres", "mysql"} {
		for _, key := range []string{"linktable", "counttable", "nodetable", "dbid", "dbprefix", "pg_schema", "pg_database"} {
			for _, name := range storetest.HostileNames("victim") {
				if name == "" {
					if _, errOut, code := runCLI(t, dir, "config", "-D", "store="+st, "-D", key+"="); code != 0 {
						t.Errorf("%s: empty %s: exit %d: %s", st, key, code, errOut)
					}
					continue
				}
				start := time.Now()
				_, errOut, code := runCLI(t, dir, "init", "-D", "store="+st, "-D", key+"="+name, "-D", "port=1")
				if code != 1 || !strings.Contains(errOut, key+" = ") || !strings.Contains(errOut, "expected a name of at most 47 letters, digits, '_'") ||
					strings.Contains(errOut, "cannot connect") || time.Since(start) > 5*time.Second {
					t.Errorf("%s: %s = %.40q: exit %d: %s", st, key, name, code, errOut)
				}
			}
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "linkbench-data")); err == nil {
		t.Error("a SQLite store was opened")
	}
}
