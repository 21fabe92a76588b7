package store

// Columns lists, per logical table, the columns every SQL store's schema
// has (SPEC section 1), in DDL order. Stores check an existing database
// against it and report a missing table or column as graph.ErrSchema with
// the fix ("run linkbench init").
var Columns = struct {
	Link, Count, Node, Meta []string
}{
	Link:  []string{"id1", "id2", "link_type", "visibility", "data", "time", "version"},
	Count: []string{"id", "link_type", "count", "time", "version"},
	Node:  []string{"id", "type", "version", "time", "data"},
	Meta:  []string{"k", "v"},
}

// MetaTable is the name of the small key/value table in which load records
// the parameters of the graph it wrote (see MetaStore).
const MetaTable = "linkbench_meta"
