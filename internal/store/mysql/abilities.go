package mysql

import "github.com/linkbench/linkbench/internal/store"

// abilities are the optional interfaces the store implements, declared in
// its Driver; the assertion below keeps a signature slip from dropping one
// silently, and the conformance suite checks the declaration.
const abilities = store.CanBulkLoad | store.CanInit | store.CanCheckSchema | store.CanReset | store.CanCheckEmpty | store.CanKeepMeta | store.CanJournal | store.CanScan | store.CanSize | store.CanLocateServers | store.CanDescribe | store.CanAddress | store.CanHintBatch | store.CanLock | store.CanPing | store.CanSession | store.CanWriteBlind | store.CanReportProgress

var _ interface {
	store.Server
	store.BatchHinter
	store.Sessioner
	store.BlindLinkWriter
	store.StepProgresser
} = (*Store)(nil)
