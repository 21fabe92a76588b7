package pebble

import "github.com/linkbench/linkbench/internal/store"

// abilities are the optional interfaces the store implements, declared in
// its Driver; the assertions below keep a signature slip from dropping
// one silently, and the conformance suite checks the declaration.
const abilities = store.CanBulkLoad |
	store.CanInit |
	store.CanReset |
	store.CanCheckEmpty |
	store.CanKeepMeta |
	store.CanJournal |
	store.CanScan |
	store.CanSize |
	store.CanDescribe |
	store.CanPathData

var (
	_ store.BulkLoader   = (*Store)(nil)
	_ store.Initializer  = (*Store)(nil)
	_ store.Resetter     = (*Store)(nil)
	_ store.EmptyChecker = (*Store)(nil)
	_ store.MetaStore    = (*Store)(nil)
	_ store.Journaler    = (*Store)(nil)
	_ store.Scanner      = (*Store)(nil)
	_ store.Sizer        = (*Store)(nil)
	_ store.Describer    = (*Store)(nil)
	_ store.DataPather   = (*Store)(nil)
)
