package sqlite

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/linkbench/linkbench/internal/store"
	"github.com/linkbench/linkbench/internal/store/storetest"
)

// TestHostileNames: no table name ends a quoted identifier.
func TestHostileNames(t *testing.T) {
	storetest.HostileNamesAreHarmless(t, []string{"linktable", "counttable", "nodetable"}, storetest.NamesTarget{
		Victim: "victim",
		Open: func(t *testing.T, key, value string) (store.Store, func() bool, error) {
			path := filepath.Join(t.TempDir(), "lb.db")
			db, err := sql.Open("sqlite", path)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			if _, err := db.Exec("CREATE TABLE victim (x int)"); err != nil {
				t.Fatal(err)
			}
			there := func() bool {
				var n int
				if err := db.QueryRow("SELECT count(*) FROM sqlite_master WHERE name = 'victim'").Scan(&n); err != nil {
					t.Fatal(err)
				}
				return n == 1
			}
			st, err := Open(context.Background(), store.Options{Props: store.MapProps{"sqlite_path": path, key: value}})
			return st, there, err
		},
	})
}
