package storetest

import (
	"testing"

	"github.com/linkbench/linkbench/internal/store"
)

// CheckAbilities fails when the abilities drv declares are not the
// optional interfaces its store type implements (st may be a nil pointer
// of that type: only its methods are looked at).
func CheckAbilities(t *testing.T, drv *store.Driver, st store.Store) {
	t.Helper()
	got := store.AbilitiesOf(st)
	if got == drv.Abilities {
		return
	}
	if missing := drv.Abilities &^ got; missing != 0 {
		t.Errorf("store %s declares %s but does not implement them (a method's signature differs?)", drv.Name, missing)
	}
	if undeclared := got &^ drv.Abilities; undeclared != 0 {
		t.Errorf("store %s implements %s but does not declare them in its Driver's Abilities", drv.Name, undeclared)
	}
}
