// Package mongo is the MongoDB store, on the official mongo-driver v2.
//
// Nodes, links and counts live in three collections of one database. Every
// document's _id is a fixed-width hexadecimal encoding of its key (node id;
// id1, link_type, id2; id1, link_type), so point reads and writes are
// single-document operations on the primary key on every MongoDB-protocol
// server, string order equals numeric key order, and the uniqueness of
// (id1, link_type, id2) is the primary key's. Adjacency lists use the
// secondary index (id1, link_type, visibility, time desc, id2 desc).
//
// Link writes have two consistency modes (mongo_transactions): with
// multi-document transactions the link write and the count change commit
// together; without, the link is changed by one atomic findOneAndUpdate
// returning the previous document, and the visibility transition it reveals
// is applied to the count document with an atomic $inc, so every transition
// is counted exactly once and counts are exact once writers finish (see
// docs/stores/mongo.md for what readers may see in between).
package mongo
