package store

import "strings"

// Ability is a set of the optional interfaces a store implements (its
// abilities). A Driver declares its store's; AbilitiesOf reads what a
// store implements, and the conformance suite checks the two agree.
type Ability uint32

// The abilities, one per optional interface.
const (
	CanBulkLoad       Ability = 1 << iota // BulkLoader
	CanInit                               // Initializer
	CanCheckSchema                        // SchemaChecker
	CanReset                              // Resetter
	CanCheckEmpty                         // EmptyChecker
	CanKeepMeta                           // MetaStore
	CanJournal                            // Journaler
	CanScan                               // Scanner
	CanSize                               // Sizer
	CanLocateServers                      // ServerLocator
	CanDescribe                           // Describer
	CanAddress                            // Addresser
	CanHintBatch                          // BatchHinter
	CanPathData                           // DataPather
	CanLock                               // Locker
	CanPing                               // Pinger
	CanSession                            // Sessioner
	CanWriteBlind                         // BlindLinkWriter
	CanReportProgress                     // StepProgresser
)

// abilities names each ability and tells whether a store has it.
var abilities = []struct {
	a    Ability
	name string
	has  func(Store) bool
}{
	{CanBulkLoad, "BulkLoader", implements[BulkLoader]},
	{CanInit, "Initializer", implements[Initializer]},
	{CanCheckSchema, "SchemaChecker", implements[SchemaChecker]},
	{CanReset, "Resetter", implements[Resetter]},
	{CanCheckEmpty, "EmptyChecker", implements[EmptyChecker]},
	{CanKeepMeta, "MetaStore", implements[MetaStore]},
	{CanJournal, "Journaler", implements[Journaler]},
	{CanScan, "Scanner", implements[Scanner]},
	{CanSize, "Sizer", implements[Sizer]},
	{CanLocateServers, "ServerLocator", implements[ServerLocator]},
	{CanDescribe, "Describer", implements[Describer]},
	{CanAddress, "Addresser", implements[Addresser]},
	{CanHintBatch, "BatchHinter", implements[BatchHinter]},
	{CanPathData, "DataPather", implements[DataPather]},
	{CanLock, "Locker", implements[Locker]},
	{CanPing, "Pinger", implements[Pinger]},
	{CanSession, "Sessioner", implements[Sessioner]},
	{CanWriteBlind, "BlindLinkWriter", implements[BlindLinkWriter]},
	{CanReportProgress, "StepProgresser", implements[StepProgresser]},
}

func implements[I any](st Store) bool {
	_, ok := st.(I)
	return ok
}

// AbilitiesOf is the set of optional interfaces st implements.
func AbilitiesOf(st Store) Ability {
	var set Ability
	for _, ab := range abilities {
		if ab.has(st) {
			set |= ab.a
		}
	}
	return set
}

// Has reports whether every ability of want is in a.
func (a Ability) Has(want Ability) bool { return a&want == want }

// String names the interfaces of a, e.g. "BulkLoader, Scanner".
func (a Ability) String() string {
	var names []string
	for _, ab := range abilities {
		if a.Has(ab.a) {
			names = append(names, ab.name)
		}
	}
	return strings.Join(names, ", ")
}

// Durable has the abilities of every store that keeps its graph beyond
// the process: bulk load with a journal to resume, schema, emptying,
// checks, size and description. The stores assert the sets they
// implement at compile time.
type Durable interface {
	BulkLoader
	Initializer
	Resetter
	EmptyChecker
	Journaler
	Scanner
	Sizer
	Describer
}

// Server has the abilities of a store that is a database server.
type Server interface {
	Durable
	SchemaChecker
	ServerLocator
	Addresser
	Locker
	Pinger
}
