package storetest

import (
	"context"
	"strings"
	"testing"

	"github.com/linkbench/linkbench/internal/graph"
	"github.com/linkbench/linkbench/internal/store"
)

// HostileNames are names that try to end a quoted identifier or a quoted
// routine body and run a statement of their own: each drops the table
// victim. The rest are legal but unusual (unicode, 300 characters, empty,
// which means the key's default).
func HostileNames(victim string) []string {
	return []string{
		`a"b; DROP TABLE ` + victim + `; --`,
		"a`b; DROP TABLE " + victim + "; --",
		`a'b; DROP TABLE ` + victim + `; --`,
		`a$fn$; DROP TABLE IF EXISTS ` + victim + `; SELECT $fn$`,
		`a\'; DROP TABLE ` + victim + `; --`,
		"x; DROP TABLE " + victim + "; --",
		"ünïcødé_✓",
		strings.Repeat("n", 300),
		"",
	}
}

// NamesTarget opens a store for HostileNamesAreHarmless on a fresh
// database or schema beside a table victim.
type NamesTarget struct {
	// Victim is the qualified name of a table the store must not drop.
	Victim string
	// Open opens the store with key set to value (and names of its own
	// for the other keys, so that the cases do not meet), and returns the
	// function that reports whether Victim is still there.
	Open func(t *testing.T, key, value string) (st store.Store, victimThere func() bool, err error)
}

// HostileNamesAreHarmless feeds every key of keys (tables, schema,
// database, prefixes) each of HostileNames on a store opened directly (the
// config refuses them before): the store either refuses the name at Open,
// naming the key, or creates its schema, writes and reads a link under it,
// and the victim table is still there.
//
// Reliability(input): a quote, backtick, `$fn$`, `;`, unicode, 300 characters or an empty value in a table, schema, database or prefix name (`linktable`, `counttable`, `nodetable`, `pg_schema`, `dbid`, `dbprefix`) of a SQL store opened directly, with PostgreSQL's `check_function_bodies` off | a name is a name: it is quoted wherever it reaches SQL (the write function's body is a string literal), so the store works under it or refuses it at open naming the key (too long for the server); no statement of the name's runs (SQLite, PostgreSQL, MariaDB)
func HostileNamesAreHarmless(t *testing.T, keys []string, target NamesTarget) {
	for _, key := range keys {
		t.Run(key, func(t *testing.T) {
			t.Parallel()
			hostileKey(t, key, target)
		})
	}
}

// hostileKey feeds key each of HostileNames.
func hostileKey(t *testing.T, key string, target NamesTarget) {
	ctx := context.Background()
	for _, name := range HostileNames(target.Victim) {
		st, there, err := target.Open(t, key, name)
		if !there() {
			t.Fatalf("the victim table %s is missing before the test", target.Victim)
		}
		if err != nil {
			if !strings.Contains(err.Error(), key) || name == "" {
				t.Errorf("%s = %.40q: open: %v", key, name, err)
			}
			continue
		}
		if in, ok := st.(store.Initializer); ok {
			if err := in.Init(ctx, false); err != nil {
				t.Errorf("%s = %.40q: init: %v", key, name, err)
				st.Close()
				continue
			}
		}
		l := graph.Link{ID1: 7, LinkType: 1, ID2: 8, Visibility: graph.VisibilityDefault, Data: []byte("d"), Time: 1}
		if _, err := st.AddLink(ctx, &l); err != nil {
			t.Errorf("%s = %.40q: add a link: %v", key, name, err)
		} else if n, err := st.CountLinks(ctx, 7, 1); err != nil || n != 1 {
			t.Errorf("%s = %.40q: count %d, %v", key, name, n, err)
		}
		st.Close()
		if !there() {
			t.Fatalf("%s = %q dropped the table %s", key, name, target.Victim)
		}
	}
}
