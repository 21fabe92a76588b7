package mongo

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/linkbench/linkbench/internal/graph"
)

const hexDigits = "0123456789abcdef"

// visible is graph.VisibilityDefault as stored.
const visible = int32(graph.VisibilityDefault)

func appendHex(b []byte, v int64) []byte {
	u := uint64(v)
	for shift := 60; shift >= 0; shift -= 4 {
		b = append(b, hexDigits[(u>>uint(shift))&15])
	}
	return b
}

// The _id encodings: 16 hex digits per key part, so that string order is
// key order.
func nodeKey(id int64) string { return string(appendHex(make([]byte, 0, 16), id)) }

func countKey(id1, lt int64) string {
	return string(appendHex(appendHex(make([]byte, 0, 32), id1), lt))
}

func linkKey(id1, lt, id2 int64) string {
	return string(appendHex(appendHex(appendHex(make([]byte, 0, 48), id1), lt), id2))
}

// Field names follow the reference's MongoDB stores.
type linkDoc struct {
	ID1        int64  `bson:"id1"`
	LinkType   int64  `bson:"link_type"`
	ID2        int64  `bson:"id2"`
	Visibility int32  `bson:"visibility"`
	Data       []byte `bson:"data"`
	Time       int64  `bson:"time"`
	Version    int64  `bson:"version"`
}

func (d *linkDoc) link() graph.Link {
	return graph.Link{ID1: d.ID1, LinkType: d.LinkType, ID2: d.ID2, Visibility: uint8(d.Visibility), Data: d.Data, Time: d.Time, Version: int32(d.Version)}
}

type countDoc struct {
	ID1      int64 `bson:"id"`
	LinkType int64 `bson:"link_type"`
	Count    int64 `bson:"count"`
	Time     int64 `bson:"time"`
	Version  int64 `bson:"version"`
}

type nodeDoc struct {
	ID      int64  `bson:"id"`
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

func linkFields(l *graph.Link) bson.D {
	return bson.D{
		{Key: "id1", Value: l.ID1}, {Key: "link_type", Value: l.LinkType}, {Key: "id2", Value: l.ID2},
		{Key: "visibility", Value: int32(l.Visibility)}, {Key: "data", Value: nonNil(l.Data)},
		{Key: "time", Value: l.Time}, {Key: "version", Value: int64(l.Version)},
	}
}

var (
	beforeUpsert = options.FindOneAndUpdate().SetUpsert(true).SetReturnDocument(options.Before)
	before       = options.FindOneAndUpdate().SetReturnDocument(options.Before)
	afterUpsert  = options.FindOneAndUpdate().SetUpsert(true).SetReturnDocument(options.After)
	upsert       = options.UpdateOne().SetUpsert(true)
)

func byID(id string) bson.D { return bson.D{{Key: "_id", Value: id}} }

// AddLink implements store.Store.
func (s *Store) AddLink(ctx context.Context, l *graph.Link) (graph.WriteResult, error) {
	var res graph.WriteResult
	err := s.write(ctx, func(ctx context.Context) (int64, error) {
		var prev linkDoc
		err := s.links.FindOneAndUpdate(ctx, byID(linkKey(l.ID1, l.LinkType, l.ID2)), bson.D{{Key: "$set", Value: linkFields(l)}}, beforeUpsert).Decode(&prev)
		found := err == nil
		if err != nil && !errors.Is(err, mongo.ErrNoDocuments) {
			return 0, err
		}
		var delta int64
		res, delta = graph.WriteOutcome(found, prev.link(), l)
		if !graph.WritesCount(found, delta) {
			return 0, nil
		}
		return delta, s.bumpCount(ctx, l.ID1, l.LinkType, delta)
	}, l.ID1, l.LinkType)
	return res, err
}

// UpdateLink implements store.Store: the same upsert as AddLink.
func (s *Store) UpdateLink(ctx context.Context, l *graph.Link) (graph.WriteResult, error) {
	return s.AddLink(ctx, l)
}

// DeleteLink implements store.Store.
func (s *Store) DeleteLink(ctx context.Context, id1, linkType, id2 int64, expunge bool) (bool, error) {
	var existed bool
	err := s.write(ctx, func(ctx context.Context) (int64, error) {
		var prev linkDoc
		var err error
		key := byID(linkKey(id1, linkType, id2))
		if expunge {
			err = s.links.FindOneAndDelete(ctx, key).Decode(&prev)
		} else {
			err = s.links.FindOneAndUpdate(ctx, key, bson.D{{Key: "$set", Value: bson.D{{Key: "visibility", Value: int32(graph.VisibilityHidden)}}}}, before).Decode(&prev)
		}
		if errors.Is(err, mongo.ErrNoDocuments) {
			existed = false
			return 0, nil
		}
		if err != nil {
			return 0, err
		}
		existed = true
		if prev.Visibility != visible {
			return 0, nil
		}
		return -1, s.bumpCount(ctx, id1, linkType, -1)
	}, id1, linkType)
	return existed, err
}

// bumpCount applies a visibility transition to the count document with one
// atomic upsert; the version is incremented and the time set on every link
// write. A race of two upserts creating the same document makes one fail
// with a duplicate key; that one is repeated, as it changed nothing.
func (s *Store) bumpCount(ctx context.Context, id1, lt, delta int64) error {
	update := bson.D{
		{Key: "$inc", Value: bson.D{{Key: "count", Value: delta}, {Key: "version", Value: int64(1)}}},
		{Key: "$set", Value: bson.D{{Key: "time", Value: time.Now().UnixMilli()}}},
		{Key: "$setOnInsert", Value: bson.D{{Key: "id", Value: id1}, {Key: "link_type", Value: lt}}},
	}
	var err error
	for range 20 {
		if _, err = s.counts.UpdateOne(ctx, byID(countKey(id1, lt)), update, upsert); !mongo.IsDuplicateKeyError(err) {
			break
		}
	}
	return err
}

// write runs one link write. Without transactions fn's steps are each
// atomic and the function returns when they are done. With transactions fn
// runs inside one, the count is kept from going below zero, and transient
// transaction errors repeat the whole transaction up to max_retries times.
func (s *Store) write(ctx context.Context, fn func(ctx context.Context) (int64, error), id1, lt int64) error {
	if s.serial != nil {
		defer s.serial.lock(id1, lt).Unlock()
	}
	if !s.txn {
		_, err := fn(ctx)
		return classify(err)
	}
	sess, err := s.client.StartSession()
	if err != nil {
		return classify(err)
	}
	defer sess.EndSession(context.Background())
	attempts := 0
	_, err = sess.WithTransaction(ctx, func(tctx context.Context) (any, error) {
		attempts++
		if attempts > s.maxRetries {
			return nil, graph.Transient(fmt.Errorf("link write on (%d, %d): transaction still conflicting after %d attempts (max_retries)", id1, lt, s.maxRetries))
		}
		delta, err := fn(tctx)
		if err != nil {
			return nil, err
		}
		if delta < 0 {
			// Counts never go below zero, even when they already disagreed.
			if _, err := s.counts.UpdateOne(tctx, byID(countKey(id1, lt)), bson.D{{Key: "$max", Value: bson.D{{Key: "count", Value: int64(0)}}}}); err != nil {
				return nil, err
			}
		}
		if s.checkCount {
			return nil, s.verifyCount(tctx, id1, lt)
		}
		return nil, nil
	})
	return classify(err)
}

// verifyCount is check_count: the count document must equal the visible links.
func (s *Store) verifyCount(ctx context.Context, id1, lt int64) error {
	n, err := s.links.CountDocuments(ctx, bson.D{{Key: "id1", Value: id1}, {Key: "link_type", Value: lt}, {Key: "visibility", Value: visible}})
	if err != nil {
		return err
	}
	var c countDoc
	if err := s.counts.FindOne(ctx, byID(countKey(id1, lt))).Decode(&c); err != nil && !errors.Is(err, mongo.ErrNoDocuments) {
		return err
	}
	if c.Count != n {
		return fmt.Errorf("check_count: count document of (%d, %d) says %d but %d links are visible", id1, lt, c.Count, n)
	}
	return nil
}

// MultigetLinks implements store.Store.
func (s *Store) MultigetLinks(ctx context.Context, id1, linkType int64, id2s []int64, dst []graph.Link) ([]graph.Link, error) {
	if len(id2s) == 1 || s.pointReads {
		for _, id2 := range id2s {
			var d linkDoc
			err := s.links.FindOne(ctx, byID(linkKey(id1, linkType, id2))).Decode(&d)
			if errors.Is(err, mongo.ErrNoDocuments) {
				continue
			}
			if err != nil {
				return dst, classify(err)
			}
			dst = append(dst, d.link())
		}
		return dst, nil
	}
	keys := make(bson.A, len(id2s))
	for i, id2 := range id2s {
		keys[i] = linkKey(id1, linkType, id2)
	}
	cur, err := s.links.Find(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: keys}}}})
	if err != nil {
		return dst, classify(err)
	}
	return decodeLinks(ctx, cur, dst)
}

func decodeLinks(ctx context.Context, cur *mongo.Cursor, dst []graph.Link) ([]graph.Link, error) {
	defer cur.Close(ctx)
	for cur.Next(ctx) {
		var d linkDoc
		if err := cur.Decode(&d); err != nil {
			return dst, err
		}
		dst = append(dst, d.link())
	}
	return dst, classify(cur.Err())
}

var listSort = bson.D{{Key: "time", Value: -1}, {Key: "id2", Value: -1}}

// GetLinkList implements store.Store.
func (s *Store) GetLinkList(ctx context.Context, q graph.ListQuery, dst []graph.Link) ([]graph.Link, error) {
	filter := bson.D{
		{Key: "id1", Value: q.ID1}, {Key: "link_type", Value: q.LinkType}, {Key: "visibility", Value: visible},
		{Key: "time", Value: bson.D{{Key: "$gte", Value: q.MinTime}, {Key: "$lte", Value: q.MaxTime}}},
	}
	o := options.Find().SetSort(listSort).SetLimit(int64(q.Limit))
	if q.Offset > 0 {
		o.SetSkip(int64(q.Offset))
	}
	cur, err := s.links.Find(ctx, filter, o)
	if err != nil {
		return dst, classify(err)
	}
	return decodeLinks(ctx, cur, dst)
}

// CountLinks implements store.Store. Without transactions a count
// document can be below zero for a moment (a hide counted before the add it
// undoes); readers see 0 then.
func (s *Store) CountLinks(ctx context.Context, id1, linkType int64) (int64, error) {
	var c countDoc
	err := s.counts.FindOne(ctx, byID(countKey(id1, linkType))).Decode(&c)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return 0, nil
	}
	if err != nil {
		return 0, classify(err)
	}
	return max(c.Count, 0), nil
}

// nodeIDKey is the meta document that holds the last allocated node id.
const nodeIDKey = "node_id_allocator"

// AddNode implements store.Store: the id comes from an atomic $inc on a
// counter document, then the node is inserted under it.
func (s *Store) AddNode(ctx context.Context, n *graph.Node) (int64, error) {
	var c struct {
		Last int64 `bson:"last"`
	}
	if s.serial != nil {
		s.serial.alloc.Lock()
		defer s.serial.alloc.Unlock()
	}
	err := s.meta.FindOneAndUpdate(ctx, byID(nodeIDKey), bson.D{{Key: "$inc", Value: bson.D{{Key: "last", Value: int64(1)}}}}, afterUpsert).Decode(&c)
	if err != nil {
		return 0, classify(err)
	}
	doc := bson.D{{Key: "_id", Value: nodeKey(c.Last)}, {Key: "id", Value: c.Last}, {Key: "type", Value: n.Type},
		{Key: "version", Value: n.Version}, {Key: "time", Value: n.Time}, {Key: "data", Value: nonNil(n.Data)}}
	if _, err := s.nodes.InsertOne(ctx, doc); err != nil {
		return 0, classify(err)
	}
	return c.Last, nil
}

// GetNode implements store.Store.
func (s *Store) GetNode(ctx context.Context, nodeType int32, id int64) (graph.Node, bool, error) {
	var d nodeDoc
	err := s.nodes.FindOne(ctx, byID(nodeKey(id))).Decode(&d)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return graph.Node{}, false, nil
	}
	if err != nil {
		return graph.Node{}, false, classify(err)
	}
	if d.Type != nodeType {
		return graph.Node{}, false, nil
	}
	return graph.Node{ID: id, Type: d.Type, Version: d.Version, Time: d.Time, Data: d.Data}, true, nil
}

// nodeFilter selects a node by id and type. Servers that only use an index
// for a filter on _id alone (pointReads) get the type checked separately:
// a node's type never changes and ids are never reused, so a read of the
// type followed by a write on _id alone is as good as one filter on both.
func (s *Store) nodeTypeMatches(ctx context.Context, nodeType int32, id int64) (bool, error) {
	var d struct {
		Type int32 `bson:"type"`
	}
	err := s.nodes.FindOne(ctx, byID(nodeKey(id)), options.FindOne().SetProjection(bson.D{{Key: "type", Value: 1}})).Decode(&d)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return false, nil
	}
	if err != nil {
		return false, classify(err)
	}
	return d.Type == nodeType, nil
}

func (s *Store) nodeFilter(ctx context.Context, nodeType int32, id int64) (bson.D, bool, error) {
	if !s.pointReads {
		return bson.D{{Key: "_id", Value: nodeKey(id)}, {Key: "type", Value: nodeType}}, true, nil
	}
	ok, err := s.nodeTypeMatches(ctx, nodeType, id)
	return byID(nodeKey(id)), ok, err
}

// UpdateNode implements store.Store.
func (s *Store) UpdateNode(ctx context.Context, n *graph.Node) (bool, error) {
	filter, ok, err := s.nodeFilter(ctx, n.Type, n.ID)
	if !ok || err != nil {
		return false, err
	}
	r, err := s.nodes.UpdateOne(ctx, filter, bson.D{{Key: "$set", Value: bson.D{
		{Key: "version", Value: n.Version}, {Key: "time", Value: n.Time}, {Key: "data", Value: nonNil(n.Data)}}}})
	if err != nil {
		return false, classify(err)
	}
	return r.MatchedCount > 0, nil
}

// DeleteNode implements store.Store.
func (s *Store) DeleteNode(ctx context.Context, nodeType int32, id int64) (bool, error) {
	filter, ok, err := s.nodeFilter(ctx, nodeType, id)
	if !ok || err != nil {
		return false, err
	}
	r, err := s.nodes.DeleteOne(ctx, filter)
	if err != nil {
		return false, classify(err)
	}
	return r.DeletedCount > 0, nil
}
