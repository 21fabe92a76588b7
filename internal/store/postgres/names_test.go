package postgres

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"

	"github.com/linkbench/linkbench/internal/store"
	"github.com/linkbench/linkbench/internal/store/storetest"
)

// TestHostileNames: no table, schema or prefix name ends a quoted
// identifier or the write function's body. Before, pg_schema was spliced
// into the function's $fn$ body: a$fn$; DROP TABLE ...; SELECT $fn$ with
// check_function_bodies off (as here) dropped the user's table.
func TestHostileNames(t *testing.T) {
	ctx := context.Background()
	admin := fresh(t, nil)
	victim := fmt.Sprintf("lbvictim_%d", os.Getpid())
	if _, err := admin.pool.Exec(ctx, "CREATE SCHEMA IF NOT EXISTS "+victim+"; CREATE TABLE IF NOT EXISTS "+victim+".victim (x int)"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.pool.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+victim+" CASCADE") })
	// With the bodies unchecked, PostgreSQL runs whatever follows a body
	// that a name ended early.
	unchecked := testURL(t) + "&options=-c%20check_function_bodies%3Doff"
	var seq atomic.Int64
	storetest.HostileNamesAreHarmless(t, []string{"pg_schema", "dbid", "dbprefix", "linktable", "counttable", "nodetable"}, storetest.NamesTarget{
		Victim: victim + ".victim",
		Open: func(t *testing.T, key, value string) (store.Store, func() bool, error) {
			there := func() bool {
				var ok bool
				if err := admin.pool.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", victim+".victim").Scan(&ok); err != nil {
					t.Fatal(err)
				}
				return ok
			}
			n := seq.Add(1)
			props := store.MapProps{"url": unchecked, "dbid": fmt.Sprintf("lbnames_%d_%d", os.Getpid(), n), "dbprefix": fmt.Sprintf("lbnames_%d_%d_p", os.Getpid(), n)}
			props[key] = value
			s, err := Open(ctx, store.Options{Props: props})
			if err != nil {
				return nil, there, err
			}
			t.Cleanup(func() {
				admin.pool.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+ident.Quote(s.schema)+" CASCADE")
			})
			return s, there, nil
		},
	})
}
