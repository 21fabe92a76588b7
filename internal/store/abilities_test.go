package store_test

import (
	"testing"

	"github.com/linkbench/linkbench/internal/store"
	"github.com/linkbench/linkbench/internal/store/memory"
	"github.com/linkbench/linkbench/internal/store/mongo"
	"github.com/linkbench/linkbench/internal/store/mysql"
	"github.com/linkbench/linkbench/internal/store/pebble"
	"github.com/linkbench/linkbench/internal/store/postgres"
	"github.com/linkbench/linkbench/internal/store/sqlite"
	"github.com/linkbench/linkbench/internal/store/storetest"
)

// TestDeclaredAbilities: every registered store declares exactly the
// optional interfaces its type implements.
func TestDeclaredAbilities(t *testing.T) {
	types := map[string]store.Store{
		memory.Name: (*memory.Store)(nil), mongo.Name: (*mongo.Store)(nil), mysql.Name: (*mysql.Store)(nil),
		pebble.Name: (*pebble.Store)(nil), postgres.Name: (*postgres.Store)(nil), sqlite.Name: (*sqlite.Store)(nil),
	}
	for _, drv := range store.Drivers() {
		st, ok := types[drv.Name]
		if !ok {
			t.Errorf("store %s: add its type to this test", drv.Name)
			continue
		}
		storetest.CheckAbilities(t, drv, st)
	}
	if len(store.Drivers()) != len(types) {
		t.Errorf("%d stores registered, %d known to this test", len(store.Drivers()), len(types))
	}
}

// TestAbilitiesOf: a store type's abilities are read from its methods,
// and the check names what a driver declares wrongly.
func TestAbilitiesOf(t *testing.T) {
	got := store.AbilitiesOf((*memory.Store)(nil))
	if !got.Has(store.CanBulkLoad|store.CanScan) || got.Has(store.CanInit) {
		t.Errorf("memory abilities %s", got)
	}
	if s := (store.CanBulkLoad | store.CanScan).String(); s != "BulkLoader, Scanner" {
		t.Errorf("names %q", s)
	}
	var inner testing.T
	storetest.CheckAbilities(&inner, &store.Driver{Name: "x", Abilities: got | store.CanInit}, (*memory.Store)(nil))
	if !inner.Failed() {
		t.Error("an ability declared but not implemented passed the check")
	}
}
