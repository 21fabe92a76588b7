// Package memory is the in-memory store: correct and concurrent (lock
// striping by (id1, link_type), sorted adjacency lists), compact (one
// fixed-size record per link, payloads in per-shard arenas), and fast
// enough to measure the driver's own overhead. Nothing is persisted.
//
// Returned links and nodes share no memory with the store: Data is copied
// into the caller's result.
package memory
