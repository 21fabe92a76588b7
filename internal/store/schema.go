package store

import (
	"fmt"

	"github.com/linkbench/linkbench/internal/graph"
)

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

// Need is what the values of one column require of its type, for the
// schema checks of the SQL stores: a table made beforehand by hand (time
// int, data text) must be refused by name, not clamp every link time to
// 2147483647 or fail a bulk load with an encoding error.
type Need struct {
	// Bits is the width of the integers the column holds (0: not an
	// integer column).
	Bits int
	// Bytes is the largest binary payload the column holds (0: not a
	// payload column).
	Bytes int
	// What says what the values are, for messages.
	What string
}

// Needs are the needs of every column of Columns, by logical table
// ("link", "count", "node", "meta") and column name.
var Needs = map[string]map[string]Need{
	"link": {
		"id1": {Bits: 64, What: "64-bit ids"}, "id2": {Bits: 64, What: "64-bit ids"}, "link_type": {Bits: 64, What: "64-bit link types"},
		"visibility": {Bits: 8, What: "0 or 1"}, "data": {Bytes: 255, What: "binary payloads of up to 255 bytes"},
		"time": {Bits: 64, What: "milliseconds since 1970"}, "version": {Bits: 32, What: "32-bit versions"},
	},
	"count": {
		"id": {Bits: 64, What: "64-bit ids"}, "link_type": {Bits: 64, What: "64-bit link types"}, "count": {Bits: 32, What: "link counts"},
		"time": {Bits: 64, What: "milliseconds since 1970"}, "version": {Bits: 64, What: "64-bit versions"},
	},
	"node": {
		"id": {Bits: 64, What: "64-bit ids"}, "type": {Bits: 32, What: "32-bit node types"}, "version": {Bits: 64, What: "64-bit versions"},
		"time": {Bits: 32, What: "seconds since 1970"}, "data": {Bytes: 1<<20 - 1, What: "binary payloads of up to 1 MiB"},
	},
	"meta": {"k": {What: "text"}, "v": {What: "text"}},
}

// TypeNames are a store's names of the types that hold each kind of
// need, for messages.
type TypeNames struct {
	Int64, Int32, Small, Payload, LargePayload, Text string
}

// Want names the types of names that hold n.
func (n Need) Want(names TypeNames) string {
	switch {
	case n.Bits > 32:
		return names.Int64
	case n.Bits > 16:
		return names.Int32
	case n.Bits > 0:
		return names.Small
	case n.Bytes > 255:
		return names.LargePayload
	case n.Bytes > 0:
		return names.Payload
	}
	return names.Text
}

// TypeError is the message of a column whose type cannot hold its values.
func TypeError(table, column, have, want string, n Need, where string) error {
	return graph.Schema(fmt.Errorf("table %s at %s: column %s is %s, which cannot hold its values (%s); expected %s. Run `linkbench init --drop` to recreate the tables (this deletes their data)",
		table, where, column, have, n.What, want))
}
