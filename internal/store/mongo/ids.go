package mongo

import (
	"encoding/binary"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/linkbench/linkbench/internal/graph"
)

// The documents are the reference's (LinkStoreMongoDb2), field for field
// and type for type, so that either driver runs against a database the
// other loaded:
//
//	link:  _id BinData(0, link_type|id1|id2), id1, link_type, id2 int64,
//	       visibility, version int32, time int64, data BinData(0)
//	count: _id BinData(0, id1|link_type), id, link_type, count, version,
//	       time int64 (a count a link write creates has an int32 version)
//	node:  _id int64 (the node id), type int32, version int64, time int32,
//	       data BinData(0)
//
// Each part of a binary _id is 8 bytes, big-endian.

// linkID is a link's _id.
func linkID(id1, linkType, id2 int64) bson.Binary {
	b := make([]byte, 24)
	binary.BigEndian.PutUint64(b, uint64(linkType))
	binary.BigEndian.PutUint64(b[8:], uint64(id1))
	binary.BigEndian.PutUint64(b[16:], uint64(id2))
	return bson.Binary{Data: b}
}

// countID is a count's _id.
func countID(id1, linkType int64) bson.Binary {
	b := make([]byte, 16)
	binary.BigEndian.PutUint64(b, uint64(id1))
	binary.BigEndian.PutUint64(b[8:], uint64(linkType))
	return bson.Binary{Data: b}
}

func byID(id any) bson.D { return bson.D{{Key: "_id", Value: id}} }

// visible is graph.VisibilityDefault as stored.
const visible = int32(graph.VisibilityDefault)

// linkDoc decodes a link; version accepts int32 and int64.
type linkDoc struct {
	ID1        int64  `bson:"id1"`
	LinkType   int64  `bson:"link_type"`
	ID2        int64  `bson:"id2"`
	Visibility int32  `bson:"visibility"`
	Version    int32  `bson:"version"`
	Time       int64  `bson:"time"`
	Data       []byte `bson:"data"`
}

func (d *linkDoc) link() graph.Link {
	return graph.Link{ID1: d.ID1, LinkType: d.LinkType, ID2: d.ID2, Visibility: uint8(d.Visibility), Data: d.Data, Time: d.Time, Version: d.Version}
}

// countDoc decodes a count; version is int64 when loaded, int32 when a
// link write created the document.
type countDoc struct {
	ID1      int64 `bson:"id"`
	LinkType int64 `bson:"link_type"`
	Count    int64 `bson:"count"`
	Version  int64 `bson:"version"`
	Time     int64 `bson:"time"`
}

type nodeDoc struct {
	ID      int64  `bson:"_id"`
	Type    int32  `bson:"type"`
	Version int64  `bson:"version"`
	Time    int32  `bson:"time"`
	Data    []byte `bson:"data"`
}

func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// linkInsert is the document the bulk load inserts, in the reference's
// field order.
func linkInsert(l *graph.Link) bson.D {
	return bson.D{
		{Key: "_id", Value: linkID(l.ID1, l.LinkType, l.ID2)},
		{Key: "id1", Value: l.ID1}, {Key: "link_type", Value: l.LinkType}, {Key: "id2", Value: l.ID2},
		{Key: "visibility", Value: int32(l.Visibility)}, {Key: "version", Value: l.Version},
		{Key: "time", Value: l.Time}, {Key: "data", Value: nonNil(l.Data)},
	}
}

func countInsert(c *graph.Count) bson.D {
	return bson.D{
		{Key: "_id", Value: countID(c.ID1, c.LinkType)},
		{Key: "id", Value: c.ID1}, {Key: "link_type", Value: c.LinkType},
		{Key: "count", Value: c.Count}, {Key: "version", Value: c.Version}, {Key: "time", Value: c.Time},
	}
}

func nodeInsert(id int64, n *graph.Node) bson.D {
	return bson.D{
		{Key: "_id", Value: id}, {Key: "type", Value: n.Type}, {Key: "version", Value: n.Version},
		{Key: "time", Value: n.Time}, {Key: "data", Value: nonNil(n.Data)},
	}
}

// layoutError names a database whose documents are not this layout: one
// loaded by a linkbench before the reference's layout was adopted (hex
// string _ids).
func layoutError(coll, db, addr string, id bson.RawValue) error {
	return graph.Schema(fmt.Errorf("collection %s in database %s at %s holds documents whose _id is a %s, not the reference's layout (a database loaded by an older linkbench); load it again: `linkbench load --truncate`",
		coll, db, addr, id.Type))
}
