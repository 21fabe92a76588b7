package mongo

import "github.com/linkbench/linkbench/internal/store"

// abilities are the optional interfaces the store implements, declared in
// its Driver; the assertion below keeps a signature slip from dropping one
// silently, and the conformance suite checks the declaration.
const abilities = store.CanBulkLoad | store.CanInit | store.CanCheckSchema | store.CanReset | store.CanCheckEmpty | store.CanKeepMeta | store.CanJournal | store.CanScan | store.CanSize | store.CanLocateServers | store.CanDescribe | store.CanAddress | store.CanLock | store.CanPing | store.CanSession | store.CanWriteBlind

var _ interface {
	store.Server
	store.Sessioner
	store.BlindLinkWriter
} = (*Store)(nil)
