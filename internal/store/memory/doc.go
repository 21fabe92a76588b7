// Package memory is the in-memory store: correct and concurrent (lock
// striping by (id1, link_type), sorted adjacency lists), compact (one
// fixed-size record per link, payloads in per-shard arenas), and fast
// enough to measure the driver's own overhead. Nothing is persisted.
//
// The Data of returned links points into the store's payload arenas, whose
// bytes are never modified after they are written (an update writes a new
// slot): callers may keep it but must not modify it. The same holds for
// node data.
package memory
