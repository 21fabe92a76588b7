package postgres

import "github.com/linkbench/linkbench/internal/store"

// abilities are the optional interfaces the store implements, declared in
// its Driver; the assertions below keep a signature slip from dropping
// one silently, and the conformance suite checks the declaration.
const abilities = store.CanBulkLoad |
	store.CanInit |
	store.CanCheckSchema |
	store.CanReset |
	store.CanCheckEmpty |
	store.CanKeepMeta |
	store.CanJournal |
	store.CanScan |
	store.CanSize |
	store.CanLocateServers |
	store.CanDescribe |
	store.CanAddress |
	store.CanHintBatch |
	store.CanLock |
	store.CanPing

var (
	_ store.BulkLoader    = (*Store)(nil)
	_ store.Initializer   = (*Store)(nil)
	_ store.SchemaChecker = (*Store)(nil)
	_ store.Resetter      = (*Store)(nil)
	_ store.EmptyChecker  = (*Store)(nil)
	_ store.MetaStore     = (*Store)(nil)
	_ store.Journaler     = (*Store)(nil)
	_ store.Scanner       = (*Store)(nil)
	_ store.Sizer         = (*Store)(nil)
	_ store.ServerLocator = (*Store)(nil)
	_ store.Describer     = (*Store)(nil)
	_ store.Addresser     = (*Store)(nil)
	_ store.BatchHinter   = (*Store)(nil)
	_ store.Locker        = (*Store)(nil)
	_ store.Pinger        = (*Store)(nil)
)
