package memory

import "github.com/linkbench/linkbench/internal/store"

// abilities are the optional interfaces the store implements, declared in
// its Driver; the assertion below keeps a signature slip from dropping one
// silently, and the conformance suite checks the declaration.
const abilities = store.CanBulkLoad | store.CanReset | store.CanCheckEmpty | store.CanKeepMeta | store.CanScan | store.CanSize | store.CanDescribe

var _ interface {
	store.BulkLoader
	store.Resetter
	store.EmptyChecker
	store.MetaStore
	store.Scanner
	store.Sizer
	store.Describer
} = (*Store)(nil)
