// Package storetest is the conformance suite every store passes: each row
// of the operation table of SPEC section 2, visibility transitions and
// counts, list ordering/limit/offset/time range, multiget with missing and
// hidden id2s, binary payloads, node id allocation after a bulk load, the
// optional abilities, and the count invariant under concurrent writers.
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) store.Store { return newEmptyStore(t) })
//	}
package storetest
