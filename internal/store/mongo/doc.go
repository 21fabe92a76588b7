// Package mongo is the MongoDB store, on the official mongo-driver v2.
//
// By default it sends the server what the reference's store
// (LinkStoreMongoDb2) sends, op by op: its documents and _id encodings
// (ids.go), its commands, projections and sort, its transaction
// boundaries (session.go), and a client and an explicit session per
// requester (Session). testdata/reference_commands.txt is that stream,
// pinned by TestCommandsAreTheReferences.
//
// What the server cannot take is chosen from what it says it is, never
// from the requester count, pacing or the driver's machine, and recorded
// by Describe: without multi-document transactions (a standalone server,
// FerretDB) the same commands run without them, as the reference's
// skip_transactions; FerretDB v1 gets findAndModify without fields (not
// implemented there) and lists sorted with their time ties by id2
// descending (it sorts in memory, in no order for ties).
package mongo
