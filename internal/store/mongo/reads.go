package mongo

import (
	"context"
	"errors"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/linkbench/linkbench/internal/graph"
)

// The reads send what the reference's store sends, outside any session
// (an implicit one): one find of one document by _id per link, count or
// node, and for a list one find of the visible links in the time window,
// sorted by time descending, with the covering index's fields.

// MultigetLinks implements store.Store: one find per id2, as the
// reference's multigetLinks (its LinkStore's, one getLink per id2).
func (s *Store) MultigetLinks(ctx context.Context, id1, linkType int64, id2s []int64, dst []graph.Link) ([]graph.Link, error) {
	ctx, end := noDeadline(ctx)
	defer end()
	for _, id2 := range id2s {
		var d linkDoc
		err := s.links.FindOne(ctx, byID(linkID(id1, linkType, id2))).Decode(&d)
		if errors.Is(err, mongo.ErrNoDocuments) {
			continue
		}
		if err != nil {
			return dst, s.done(ctx, classify(err))
		}
		dst = append(dst, d.link())
	}
	return dst, nil
}

// listProjection is the reference's: the covering index's fields, no _id.
var listProjection = bson.D{
	{Key: "id1", Value: 1}, {Key: "link_type", Value: 1}, {Key: "id2", Value: 1}, {Key: "visibility", Value: 1},
	{Key: "data", Value: 1}, {Key: "version", Value: 1}, {Key: "time", Value: 1}, {Key: "_id", Value: 0},
}

var (
	// listSort is the reference's order. Time ties come in the index's
	// order, id2 descending.
	listSort = bson.D{{Key: "time", Value: -1}}
	// listSortTies names the ties' order for a server that sorts in
	// memory (FerretDB), where it would otherwise be none.
	listSortTies = bson.D{{Key: "time", Value: -1}, {Key: "id2", Value: -1}}
)

// GetLinkList implements store.Store.
func (s *Store) GetLinkList(ctx context.Context, q graph.ListQuery, dst []graph.Link) ([]graph.Link, error) {
	ctx, end := noDeadline(ctx)
	defer end()
	filter := bson.D{
		{Key: "id1", Value: q.ID1}, {Key: "link_type", Value: q.LinkType},
		{Key: "time", Value: bson.D{{Key: "$gte", Value: q.MinTime}, {Key: "$lte", Value: q.MaxTime}}},
		{Key: "visibility", Value: visible},
	}
	sort := listSort
	if s.ferret {
		sort = listSortTies
	}
	o := options.Find().SetSort(sort).SetProjection(listProjection).SetLimit(int64(q.Limit))
	if q.Offset > 0 {
		o.SetSkip(int64(q.Offset))
	}
	cur, err := s.links.Find(ctx, filter, o)
	if err != nil {
		return dst, s.done(ctx, classify(err))
	}
	dst, err = decodeLinks(ctx, cur, dst, q.Limit)
	return dst, s.done(ctx, err)
}

// decodeLinks reads a list. The find leaves the first batch's size to the
// server; each getMore asks for the rest of the limit, as the reference's
// driver's does.
func decodeLinks(ctx context.Context, cur *mongo.Cursor, dst []graph.Link, limit int) ([]graph.Link, error) {
	defer cur.Close(ctx)
	for n := 0; ; n++ {
		if rest := limit - n; cur.RemainingBatchLength() == 0 && rest > 0 {
			cur.SetBatchSize(int32(rest))
		}
		if !cur.Next(ctx) {
			break
		}
		var d linkDoc
		if err := cur.Decode(&d); err != nil {
			return dst, err
		}
		dst = append(dst, d.link())
	}
	return dst, classify(cur.Err())
}

// CountLinks implements store.Store. A count document below zero (the
// reference's delete lets it go there when the stored count disagreed)
// reads as 0.
func (s *Store) CountLinks(ctx context.Context, id1, linkType int64) (int64, error) {
	ctx, end := noDeadline(ctx)
	defer end()
	var c countDoc
	err := s.counts.FindOne(ctx, byID(countID(id1, linkType))).Decode(&c)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return 0, nil
	}
	if err != nil {
		return 0, s.done(ctx, classify(err))
	}
	return max(c.Count, 0), nil
}
