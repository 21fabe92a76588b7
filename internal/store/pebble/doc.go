// Package pebble is an embedded LSM store on cockroachdb/pebble v2: the
// MyRocks-style alternative to the SQLite B-tree, with no server.
//
// Key encodings (integers are 8-byte big-endian with the sign bit flipped,
// so byte order is numeric order; ^x is the bitwise complement, for
// descending order):
//
//	n id                          -> type(4) version(8) time(4) data    node
//	l id1 link_type id2           -> visibility(1) time(8) version(4) data
//	i id1 link_type ^time ^id2    -> version(4) data   (visible links only)
//	c id1 link_type               -> count(8) time(8) version(8)
//	m key                         -> value            (graph metadata)
//	s "nodeid"                    -> next node id(8)
//	z "linkbench"                 -> format marker
//
// The i entries are the adjacency lists in GET_LINKS_LIST order, so a list
// query is one forward scan. Link writes take one of 1024 striped locks on
// (id1, link_type), read the old link and count, and commit the link row,
// list entry and count row in one batch, so the count invariant holds under
// concurrent writers. Every op's batch is synced unless pebble_sync=false.
// Bulk loads use unsynced batches and a flush at the end.
//
// Keys: data_dir (the database is <data_dir>/pebble), pebble_path,
// pebble_sync (default true), pebble_cache_mb (default 256).
package pebble
