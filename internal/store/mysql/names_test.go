package mysql

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"sync/atomic"
	"testing"

	"github.com/linkbench/linkbench/internal/store"
	"github.com/linkbench/linkbench/internal/store/storetest"
)

// TestHostileNames: no table name ends a quoted identifier, in the
// tables' DDL, the write procedure's or any statement.
func TestHostileNames(t *testing.T) {
	ctx := context.Background()
	base, err := url.Parse(testURL(t))
	if err != nil {
		t.Fatal(err)
	}
	admin, err := Open(ctx, store.Options{Props: store.MapProps{"url": base.String()}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close() })
	victim := fmt.Sprintf("lbvictim_%d", os.Getpid())
	for _, q := range []string{"CREATE DATABASE IF NOT EXISTS " + victim, "CREATE TABLE IF NOT EXISTS " + victim + ".victim (x int)"} {
		if _, err := admin.w.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { admin.w.Exec("DROP DATABASE IF EXISTS " + victim) })
	var seq atomic.Int64
	storetest.HostileNamesAreHarmless(t, []string{"linktable", "counttable", "nodetable"}, storetest.NamesTarget{
		Victim: victim + ".victim",
		Open: func(t *testing.T, key, value string) (store.Store, func() bool, error) {
			db := fmt.Sprintf("lbnames_%d_%d", os.Getpid(), seq.Add(1))
			if _, err := admin.w.ExecContext(ctx, "CREATE DATABASE "+db); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { admin.w.Exec("DROP DATABASE IF EXISTS " + db) })
			u := *base
			u.Path = "/" + db
			there := func() bool {
				var n int
				if err := admin.r.QueryRowContext(ctx, "SELECT count(*) FROM information_schema.tables WHERE table_schema = ? AND table_name = 'victim'", victim).Scan(&n); err != nil {
					t.Fatal(err)
				}
				return n == 1
			}
			s, err := Open(ctx, store.Options{Props: store.MapProps{"url": u.String(), key: value}})
			if err != nil {
				return nil, there, err
			}
			return s, there, nil
		},
	})
}
