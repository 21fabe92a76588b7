// Package sqlite is the embedded default store, on modernc.org/sqlite (pure
// Go, no cgo). The schema has the reference's table and column names and
// the id1_type covering index. The database runs in WAL mode, durable by
// default (synchronous=FULL, key sqlite_synchronous). Writes go through one
// connection in BEGIN IMMEDIATE transactions, so writers serialise and the
// count invariant holds; reads use a separate pool that proceeds
// concurrently with the writer. Busy and locked errors are transient.
//
// Keys: data_dir (the file is <data_dir>/linkbench.db), sqlite_path,
// sqlite_synchronous (FULL, NORMAL, OFF), sqlite_load_synchronous (the
// setting during a bulk load, default OFF, restored and checkpointed at the
// end of the load), sqlite_cache_mb, defer_index, and the table names.
package sqlite
