package storetest

import (
	"errors"
	"strings"
	"testing"

	"github.com/linkbench/linkbench/internal/store"
)

// LockRules checks a store's one-writer lock (store.Locker) with stores
// opened on one target by open, as separate processes would: runs share
// the store, the processes of a --shard load share it with each other,
// a load (or truncate) needs it alone, and whoever is refused is told who
// holds it.
// Reliability(writer): runs, the processes of a `--shard` load, and loads on one store | runs share it, shard loads share it, a load needs it alone; the process refused is told who holds it (SQLite, PostgreSQL, MariaDB, FerretDB)
func LockRules(t *testing.T, open func(t *testing.T) store.Store) {
	t.Helper()
	lock := func(mode store.LockMode, who string) (func(), error) {
		t.Helper()
		l, ok := open(t).(store.Locker)
		if !ok {
			t.Fatal("the store has no lock")
		}
		return l.Lock(ctx, mode, store.Holder(who))
	}
	ok := func(mode store.LockMode, who string) func() {
		t.Helper()
		release, err := lock(mode, who)
		if err != nil {
			t.Fatalf("%s (%s): %v", who, mode, err)
		}
		return release
	}
	refused := func(mode store.LockMode, who, holder string) {
		t.Helper()
		release, err := lock(mode, who)
		var le *store.LockedError
		if !errors.As(err, &le) {
			if release != nil {
				release()
			}
			t.Fatalf("%s (%s) was not refused: %v", who, mode, err)
		}
		if !strings.Contains(le.Holder, holder) || !strings.Contains(err.Error(), "pid ") {
			t.Fatalf("%s (%s) refused without naming %q: %v", who, mode, holder, err)
		}
	}
	run1, run2 := ok(store.LockRun, "run one"), ok(store.LockRun, "run two")
	refused(store.LockLoad, "load", "linkbench run ")
	refused(store.LockShardLoad, "load --shard 0/2", "linkbench run ")
	run1()
	run2()
	shard0, shard1 := ok(store.LockShardLoad, "load --shard 0/2"), ok(store.LockShardLoad, "load --shard 1/2")
	refused(store.LockRun, "run", "linkbench load --shard")
	refused(store.LockLoad, "load --truncate", "linkbench load --shard")
	shard0()
	shard1()
	load := ok(store.LockLoad, "load")
	refused(store.LockRun, "run", "linkbench load,")
	refused(store.LockShardLoad, "load --shard 0/2", "linkbench load,")
	refused(store.LockLoad, "init --drop", "linkbench load,")
	load()
	ok(store.LockLoad, "load again")()
	ok(store.LockRun, "run again")()
}
