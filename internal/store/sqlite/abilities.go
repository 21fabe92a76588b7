package sqlite

import "github.com/linkbench/linkbench/internal/store"

// abilities are the optional interfaces the store implements, declared in
// its Driver; the assertion below keeps a signature slip from dropping one
// silently, and the conformance suite checks the declaration.
const abilities = store.CanBulkLoad | store.CanInit | store.CanCheckSchema | store.CanReset | store.CanCheckEmpty | store.CanKeepMeta | store.CanJournal | store.CanScan | store.CanSize | store.CanDescribe | store.CanAddress | store.CanPathData | store.CanLock | store.CanReportProgress

var _ interface {
	store.Durable
	store.SchemaChecker
	store.Addresser
	store.DataPather
	store.Locker
	store.StepProgresser
} = (*Store)(nil)
